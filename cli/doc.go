// Package cli is the flagshim command: info (a table, or JSON with --json),
// list, resolve, explain, version and help, over device.Default and
// probe.Default after flagshim.Init. cmd/flagshim is a three-line main over
// [Run].
//
// It is a public package so that a program which links extra backends can
// offer the same command with them included. Backends join flagshim through
// flagshim.AddStep before Init, typically from the init function of their
// package, so the whole program is a blank import and Run:
//
//	package main
//
//	import (
//		"os"
//
//		_ "example.com/acme/flagshim-backend" // adds its drivers step with flagshim.AddStep
//		"github.com/flagos-ai/flagshim/cli"
//	)
//
//	func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
//
// examples/acme/cmd/flagshim-acme is such a program.
//
// # Conventions
//
// The usage and help go to stdout with exit status 0 (-h, --help, help,
// help COMMAND, COMMAND -h); a bad command or flag is one line on stderr,
// the flag spelled as it was typed (--json, -L), then "run 'flagshim CMD
// -h' for the usage", with status 2. The global flags --json, --probe TIER
// and -v go before the command or after it, for every command: a command
// gets them by parsing its flags with parseFlags (flags.go), and one that
// has no use for one of them says so as a usage error. `flagshim --version`
// and `flagshim version` print [Version], the module version Go recorded in
// the binary (with the commit where the build recorded one), the Go version
// and GOOS/GOARCH, and open nothing.
//
// info, list, resolve, explain and version print text, or one JSON object
// with --json (docs/json.md). info's text starts with a one-line verdict:
// the accelerators, what cuda means, the tier that answered and who chose
// it (report.Verdict). Text output escapes control characters, bidi and
// zero-width characters and invalid UTF-8 (Go escapes: "\n", "\x1b",
// "\u202e") in whatever a driver or a user gave (device names, reasons,
// errors), so one device is one line and nothing reaches the terminal as a
// control sequence; JSON carries the texts as they are.
//
// list --accelerators-only answers "is there an accelerator?" as
// nvidia-smi -L does: the vendor devices only (no cpu:0, no flagos lines),
// and exit status 6 when there is none.
//
// Errors go to stderr, one per line, each with the "flagshim: " prefix once,
// and give status 1. A bad setting reads "flagshim: invalid setting: " and
// the variable, its value and the values it accepts, without the step or
// package it came through. Which errors are errors of which command:
//
//   - A bad setting (an environment variable whose value flagshim does not
//     accept: Init's error matches flagshim.ErrBadSetting, or FLAGOS_LOG or
//     FLAGOS_ALIAS_CUDA fails the CLI's own check) is an error of every
//     command that runs Init (info, list, resolve, explain), which then
//     prints nothing else.
//   - Output that cannot be written (stdout on a full disk or /dev/full) is
//     an error of every command.
//   - Any other error of Init (a step that failed, such as a plugin that
//     could not set up its backend) is an error of info and explain, after
//     they have shown it in their report; it is not an error of resolve and
//     list, which answer from what is registered. A driver library that is
//     absent or fails to load is no error at all: it is a fact, shown by
//     info and explain ("not available" and why).
//
// The JSON of `info --json` starts with "schema_version"
// (report.SchemaVersion); within a version keys are only ever added.
// docs/json.md documents every field.
package cli
