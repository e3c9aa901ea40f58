// Package presencetest is a test kit for management-library bindings of the
// presence tier (drivers/cuda's NVML, drivers/musa's MTML, and those of
// vendor packages outside this module): it builds a binding's fake library
// from C with the system compiler (`go env CC`) and runs each scenario in a
// child process of the test binary, since a loaded soname stays loaded for
// the life of a process (see internal/dl/dltest). A [Suite] names the fake
// ([Lib]), the binding under test and its cases; [Suite.Test], called from
// one top-level test, starts every case as a child of that same test and,
// in the child, runs the case the environment names. [Common] is the table
// of cases every binding on presence.Query is tested for alike, filled with
// the facts of the binding and its fake; a binding adds its own Cases. A
// binding's fake is its package's testdata/fake_<source>.c by default, on
// the kit's C helpers (fake_env.h: the call log, the FAKE_<SOURCE>_* knobs,
// a counting init, bounded string copies), embedded in the kit ([Include])
// so that -trimpath and module-cache copies build them.
//
// It also has what such tests share: a fake filesystem root for /dev and
// /sys ([Tree]), a fixed environment ([Lookup]), the fake's call log
// ([Calls], [Paired]), the tripwire libcuda that proves no source loads a
// driver ([Tripwire], [NoDriverLoaded]), the checks of the device-count
// bound ([TooMany], [Allocated]) and of a vendor's sources falling back on
// its device nodes ([Fallback]). The vendor-wide checks of the tier (the
// machine's own root, a refused override) are the conformance kit's
// (driver/drivertest).
//
// It is public so that vendor packages outside this module can test their
// bindings the same way. It is for tests only; library code must not import
// it.
package presencetest
