// Package drivertest is the conformance suite every vendor package of the
// driver core runs against its fake library, flagshim's own vendors and
// those of other modules alike: it builds the fake from C with the system
// compiler and runs every loader-dependent case in a child process (a
// loaded library stays loaded for the life of a process; see
// internal/dl/dltest). The same scenario matrix (no library, a relative or
// unsafe override, a stub, init failing, hanging, zero or absurd device
// counts, missing symbols, modules, memory, streams and the order a wait
// gives their work, hooks, the presence tier) thus proves each vendor the
// same way.
//
// One route to a fake: Suite.FakeSource, the vendor's C file (by default
// its package's testdata/fake_<Library.Name>.c), which includes one of the
// kit's shared C sources (fake_cufamily.c for a CUDA-shaped driver API,
// fake_hipfamily.c for a HIP-shaped runtime API, or fake_common.h alone).
// The kit's C is embedded in the kit (see Include), so a test binary built
// with -trimpath, or a module cache's read-only copy of a vendor package,
// runs every case.
//
// The cases are one table (cases.go). What differs between vendors is read
// from the Vendor description (its stub code, its versioned names, its
// result table, its context model, the features the core declares it
// supports: driver.Vendor.Unbound) or given by the Suite (the fake's PCI bus
// id form, its own error names, its result numbering where it is not
// CUDA's, a name shared by every device). A case that does not apply to a
// vendor (a feature the core declares unsupported, a stub library for a
// vendor that has none) is skipped, saying why; a case that applies but
// cannot run (no C compiler, a fake that does not build) fails, saying
// why. The kit judges behaviour by its effect: each result code means one
// neutral error, a stream wait must order work. Its own tests run it on
// vendors it must accept and on broken ones it must reject.
//
// Besides the cases, the helpers every vendor package's own tests share:
// InChild (a scenario of the vendor's own in a child process),
// CheckResults, CheckSymbols, CheckVersions, VariableNames. For tests only.
package drivertest
