// Command flagshim shows what flagshim found on this machine and why it
// decided what it did.
//
//	flagshim [info] [-L]             the verdict, then backends, devices, probes, alias, phases
//	flagshim list                    one line per device, as nvidia-smi -L
//	flagshim resolve DEVICE...       what each device string means here
//	flagshim explain                 every decision in plain sentences
//	flagshim version                 also --version: flagshim's and Go's versions
//	flagshim help [COMMAND]          also -h, --help, COMMAND -h
//
// The global flags --json (one JSON object instead of text), --probe TIER
// (exact, presence or isolated) and -v (log at info level to stderr) go
// before the command or after it. Exit status: 0 on success, 1 on an error
// (a bad device string, a bad environment variable, output that could not
// be written), 2 on bad usage (one line, and where the usage is), 6 from
// list --accelerators-only when there is no accelerator. docs/cli.md
// describes the command, docs/json.md its JSON field by field.
//
// The command is package cli's Run; see it for which errors are errors of
// which command.
package main
