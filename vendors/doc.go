// Package vendors is the registry of vendors flagshim serves: one entry per
// vendor package (the packages under drivers/, flagos aside, and
// out-of-tree ones such as examples/acme), each a driver.Vendor, the description of everything
// flagshim knows about the vendor: its driver library and API, its presence
// tier, its environment variables, its device nodes, its place in
// FLAGOS_BACKEND=auto.
//
// Everything that needs to know the vendors reads this registry: flagshim's
// Init (one backend per vendor in the drivers phase, in every probe tier),
// its settings (each vendor's library override must be an absolute path),
// the isolated tier's child (which vendor to probe), the flagos router
// (the auto order), the CLI and the C library (what to report). Nothing
// else names a vendor's libraries or variables.
//
// flagshim's own vendors are registered by this package, in one list
// (builtin.go); a vendor package of another module registers the same way,
// from its init, as database/sql drivers do:
//
//	func init() {
//		if err := vendors.Register(Vendor()); err != nil {
//			panic(err) // a second vendor of the same type, or an invalid description
//		}
//	}
//
// Registering opens nothing and probes nothing. Registration closes when
// the registry is first read ([All], and every reader built on it: [Lookup],
// [AutoOrder], [Variables], [Makers]; flagshim.Init reads it): a later
// Register is an error wrapping ErrClosed.
//
// The registry is a package of its own, at the module's root, so that its
// name says what it is: drivers/ holds the vendor packages it lists (and
// the flagos router, which is not a vendor), driver is the core every
// vendor is described for.
package vendors
