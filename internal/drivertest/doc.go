// Package drivertest is the conformance suite every vendor package of the
// driver core runs against its fake library (drivers/cuda, drivers/musa,
// drivers/hip): it builds the fake from C with the system compiler and runs
// every loader-dependent case in a child process (a loaded library stays
// loaded for the life of a process; see internal/dl/dltest). The same
// scenario matrix (no library, a relative or unsafe override, a stub, init
// failing, hanging, zero or absurd device counts, missing symbols, modules,
// memory, streams, hooks) thus proves each vendor the same way. For tests
// only.
package drivertest
