// Package drivertest is the conformance suite every vendor package of the
// driver core runs against its fake library (drivers/cuda, drivers/musa,
// drivers/hip): it builds the fake from C with the system compiler and runs
// every loader-dependent case in a child process (a loaded library stays
// loaded for the life of a process; see internal/dl/dltest). The same
// scenario matrix (no library, a relative or unsafe override, a stub, init
// failing, hanging, zero or absurd device counts, missing symbols, modules,
// memory, streams, hooks) thus proves each vendor the same way. What
// differs between vendors is read from the Vendor description (its stub
// code, its versioned names, its result table, its context model, the
// operations it binds: a vendor without kernel launches has its Launch
// checked to report device.ErrNotSupported) or given by the Suite (the
// fake's PCI bus id form, its own error names, its result numbering where
// it is not CUDA's, a name shared by every device); a case that cannot
// apply to a vendor (a stub library for HIP, which has none) is skipped
// with the reason. For tests only.
package drivertest
