// Package probe answers "is runtime X available?" and keeps two answers
// apart: the original probe, which asks the true runtime, and the live
// probe, which compatibility code may redirect (for example so that "is cuda
// available?" answers for the flagos device).
//
// Policy decisions, such as whether to alias cuda to flagos, must read
// [Registry.Original]; code that merely wants the answer a program would see
// today reads [Registry.Live]. Every redirect names its writer, so
// [Registry.RedirectedBy] can tell a user who changed the answer.
//
// Probes are named by device type ("cuda", "musa", "flagos"). The package is
// a leaf: it imports nothing of flagshim and does no I/O of its own, so
// plugins can import it cheaply. Reads are lock-free.
package probe
