// Command flagshim shows what flagshim found on this machine and why it
// decided what it did.
//
//	flagshim [-v] [info] [--json]    backends, devices, probes, alias, phases
//	flagshim [-v] resolve DEVICE...  what each device string means here
//	flagshim [-v] explain            every decision in plain sentences
//
// Exit status: 0 on success, 1 on an error (a bad device string, a bad
// environment variable), 2 on bad usage. -v logs at info level to stderr
// (FLAGOS_LOG sets the level otherwise).
package main
