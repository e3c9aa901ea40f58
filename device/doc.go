// Package device is flagshim's public model of accelerators: device types
// and strings ("cuda:1"), the Backend interface every runtime implements, a
// Registry of backends with an alias table ("cuda" may mean "flagos"), and
// the Module interface that module hooks (package hooks) see.
//
// The package is a leaf that plugins import cheaply: it opens no library and
// probes nothing. Backends are registered by flagshim's drivers phase, not in
// init functions.
//
// Using the package-level functions (Parse, Lookup, Register) means using
// [Default]. When the flagshim root package is linked into the program, the
// first reader of Default (Parse, Lookup, Resolve, and also Types, Backends
// and Aliases) runs flagshim.Init once, so the answer for "cuda" is given
// only after the alias has been decided, and a list of backends is never
// "cpu only" merely because nothing has run yet. When it is not linked,
// Default answers with an error that names the import to add, as
// database/sql does for a forgotten driver; the readers that cannot return
// an error (Types, Backends, Aliases) list what is registered. Registries
// from NewRegistry have no initializer.
package device
