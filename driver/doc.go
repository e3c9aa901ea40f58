// Package driver is flagshim's public driver core, the package a vendor
// author starts from: describe your vendor as data, a [Vendor], and the
// core does the rest without cgo. It plays the role database/sql/driver
// plays for database/sql.
//
// # Writing a vendor
//
// A vendor is one package (flagshim's own are drivers/cuda, drivers/musa,
// drivers/hip; examples/acme is one written outside the tree) that builds
// one [Vendor] and registers it from its init with vendors.Register:
//
//	func Vendor() *driver.Vendor { return vendor }
//
//	var vendor = &driver.Vendor{
//		Type: "acme", Name: "Acme",
//		Library: clib.Library{Name: "libacme", EnvVar: "FLAGOS_LIBACME_PATH",
//			Sonames: []string{"libacme.so.1"}, Dirs: []string{"/opt/acme/lib"}},
//		Symbols: map[driver.Op][]string{driver.OpInit: {"acmeInit"}, ...},
//		Results: map[int]driver.Result{2: {Name: "ACME_ERROR_OUT_OF_MEMORY", Is: []error{device.ErrOutOfMemory}}, ...},
//		...
//	}
//
//	func init() {
//		if err := vendors.Register(Vendor()); err != nil {
//			panic(err)
//		}
//	}
//
// The description says:
//
//   - where the library is ([clib.Library]: its override variable
//     FLAGOS_LIB<NAME>_PATH, sonames, well-known folders, the device nodes
//     without which its runtime finds nothing);
//   - each operation's C function ([Op]: the comment on each gives CUDA's C
//     shape; Symbols lists the vendor's names, newest first), and an
//     [Adapter] for each operation whose C shape differs;
//   - what each result code means (Results: its name and the device
//     sentinels it matches, device.ErrOutOfMemory, ...), the attribute
//     numbers, the context model ([PrimaryContext], [CurrentDevice] or
//     [DeviceContext]), the version encoding, the visible-devices
//     variables;
//   - its presence tier (Presence: the management library and device nodes
//     that say which devices are here without initializing the driver;
//     DeviceNodes alone where there is no management library);
//   - its place in FLAGOS_BACKEND=auto (Auto) and its PCI vendor ids.
//
// Every symbol, signature, struct layout and result code in a description
// must come from a public header or public code, cited in a comment beside
// it; what cannot be confirmed stays out (its operation then reports
// device.ErrNotSupported). A wrong signature crashes the user's process.
// A property the vendor cannot tell is unknown rather than an error: with
// no total-memory function named, Properties reads OpMemGetInfo's total
// (or leaves it 0); an attribute answered with a code matching
// device.ErrNotSupported (an adapter for numbers that are not confirmed
// says so) is 0; VersionBase 0 reports the version number undecoded.
// Vendor.Unbound lists the features a description leaves out.
//
// # What the core does with it
//
// [New] makes a [Backend]: a device.Backend with every optional capability
// (device.Describer, device.Memory, device.Compute, device.Streams). It does
// no I/O: the library is found, checked and opened on first use, once,
// under FLAGOS_PROBE_TIMEOUT; each symbol is resolved once (a missing
// required one makes the vendor unavailable, a missing optional one
// disables its feature); every call that needs a context locks its
// goroutine to a thread and makes the device current; result codes become
// *clib.Error values that match the device sentinels. The same Backend
// answers every probe tier: exact (the driver in the process), presence
// ([WithPresence]) and isolated ([WithFacts] with a child's answer).
//
// # Proving it
//
// The conformance kit driver/drivertest runs the same cases on every
// vendor: build a fake of your library from C with your API's real names
// and signatures (the kit's fake_common.h gives the behaviour) and run
// drivertest.Suite from your package's tests. docs/architecture.md lists
// the files a new vendor touches.
//
// Inside the core, three layers, as in cudarc: raw.go resolves the
// symbols; calls.go is the only file that calls C (through the binding kit
// clib), one checked method per operation; the rest is the safe layer.
package driver
