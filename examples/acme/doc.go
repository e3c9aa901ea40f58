// Package acme is a worked example of a vendor package written outside
// flagshim's own tree: "Acme", an accelerator whose driver library
// (libacme.so.1) offers a CUDA-shaped driver API under the acme prefix
// (acmeInit, acmeDeviceGetCount, ...), described as data for flagshim's
// public driver core and registered through the same call flagshim's own
// vendors use. Copy it to add a vendor: the checklist is in
// docs/architecture.md ("Adding a vendor").
//
// # Linking it in
//
// A blank import is enough, as for a database/sql driver:
//
//	import _ "github.com/flagos-ai/flagshim/examples/acme"
//
// The package's init calls [Register], which registers [Vendor] with
// vendors.Register (data only: it opens nothing, reads no environment and
// probes nothing) and adds one step to the default plan. From then on
// flagshim serves Acme like its own vendors:
//
//   - Init's drivers phase registers an "acme" backend and its original
//     probe "acme", opened lazily from $FLAGOS_LIBACME_PATH, libacme.so.1
//     or /opt/acme/lib;
//   - every probe tier answers for it: exact (the driver in the process),
//     presence (its device nodes /dev/acme*, no init) and isolated (a child
//     of the program's own binary, which links Acme too);
//   - FLAGOS_BACKEND=acme routes flagos to it, so without CUDA "cuda:1"
//     means acme device 1;
//   - its variables (FLAGOS_LIBACME_PATH, ACME_VISIBLE_DEVICES) are checked
//     and reported by Init, the CLI and the C library.
//
// Why init and an exported Register: init is the only code a blank import
// (or a Go plugin being opened) runs, so registering there is what makes
// the import enough. But init cannot return an error, and registration
// closes once flagshim.Init has started. Register is idempotent and returns
// the outcome of the one attempt, so a program that wants to be sure calls
// it in main:
//
//	if err := acme.Register(); err != nil {
//		log.Fatal(err) // acme: vendors: registration is closed: ...
//	}
//
// # The vendor_compat step
//
// With ACME_CUDA_COMPAT=1, the step vendor_compat/acme_cuda_compat
// redirects the live cuda probe to Acme's answer, as vendor compatibility
// layers do so that "is cuda available?" says yes. flagshim's alias decision
// reads the original cuda probe, so this changes nothing about the
// cuda->flagos alias.
//
// # Tests
//
// acme_test.go runs flagshim's public conformance kit (driver/drivertest)
// on a fake libacme.so.1 built from testdata/fake_libacme.c, the kit's
// CUDA-shaped fake under Acme's names, exactly as flagshim's own vendors run
// it; cmd/flagshim-acme's scripts run the CLI in all three tiers.
package acme
