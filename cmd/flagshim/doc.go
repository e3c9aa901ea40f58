// Command flagshim shows what flagshim found on this machine and why it
// decided what it did.
//
//	flagshim [-v] [info] [--json | -L]  backends, devices, probes, alias, phases
//	flagshim [-v] list                  one line per device, as nvidia-smi -L
//	flagshim [-v] resolve DEVICE...     what each device string means here
//	flagshim [-v] explain               every decision in plain sentences
//	flagshim version                    also --version: flagshim's and Go's versions
//	flagshim help [COMMAND]             also -h, --help, COMMAND -h
//
// Exit status: 0 on success, 1 on an error (a bad device string, a bad
// environment variable, output that could not be written), 2 on bad usage.
// -v logs at info level to stderr (FLAGOS_LOG sets the level otherwise).
// `info --json` is documented field by field in docs/json.md.
//
// The command is package cli's Run; see it for which errors are errors of
// which command.
package main
