// Package acme is a worked example of a vendor backend written outside
// flagshim: a fake "acme" accelerator, in pure Go, that flagshim's drivers
// phase registers next to cuda and musa, and that the virtual flagos device
// routes to with FLAGOS_BACKEND=acme.
//
// Copy this package to write a real one; only the Backend methods change
// (a real driver opens its library lazily, on first use, never in init).
//
// # Linking it in
//
// A blank import is enough, as for a database/sql driver:
//
//	import _ "github.com/flagos-ai/flagshim/examples/acme"
//
// The package's init calls [Register], which only adds two steps to
// flagshim's default plan with flagshim.AddStep: it opens nothing, reads no
// environment and probes nothing. The steps run inside flagshim.Init (or the
// first device.Parse / device.Lookup, which runs it):
//
//	drivers/acme                    reads ACME_DEVICES, registers the backend
//	                                in device.Default and its original probe
//	                                "acme" in probe.Default
//	vendor_compat/acme_cuda_compat  with ACME_CUDA_COMPAT=1, redirects the
//	                                live "cuda" probe to acme's answer
//
// Why init and an exported Register: init is the only code a blank import (or
// a Go plugin being opened) runs, so registering there is what makes the
// import enough. But init cannot return an error, and AddStep fails once Init
// has started (an error wrapping flagshim.ErrInitDone: a Go plugin opened too
// late, or a package initialised earlier that already parsed a device).
// Register is idempotent and returns the outcome of the one attempt, so a
// program that wants to be sure calls it in main:
//
//	if err := acme.Register(); err != nil {
//		log.Fatal(err) // acme: flagshim: Init has already run: ...
//	}
//
// # Environment
//
//	ACME_DEVICES      the number of fake devices, a decimal integer >= 0
//	                  (default 1; 0 registers acme as not available). Any
//	                  other value fails the drivers/acme step: Init returns
//	                  the error and acme is not registered.
//	ACME_CUDA_COMPAT  1/true: the vendor_compat step redirects the live cuda
//	                  probe to acme's answer, as vendor compatibility layers
//	                  do so that "is cuda available?" says yes. flagshim's
//	                  alias decision reads the original cuda probe, so this
//	                  changes nothing about the cuda->flagos alias. Unset,
//	                  empty, 0 or false: the step does nothing.
//
// # The virtual flagos device
//
// With FLAGOS_BACKEND=acme, flagos routes to this backend: flagos:N is
// acme:N. When there is also no usable CUDA, the cuda->flagos alias makes
// "cuda:1" mean flagos:1, and so acme device 1.
package acme
