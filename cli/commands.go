package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
)

// command is one subcommand of flagshim.
type command struct {
	name    string
	args    string // the synopsis after the name
	summary string // one line, for the top usage
	detail  string // the rest of its own usage
	run     func(s *session, c *command, args []string) int
}

// commands in the order the usage lists them. It is filled in init: the
// help command lists it.
var commands []*command

func init() {
	commands = []*command{
		{
			name: "info", args: "[--json | -L] [--probe TIER]",
			summary: "what was found: backends, devices, probes, alias, phases (the default)",
			detail: `What flagshim found on this machine: whether cuda means flagos and why,
each backend (available or not, devices, driver version, library), each
device (memory, free memory where the driver tells it, compute capability,
multiprocessors or cpu cores, PCI address, UUID), each probe (the live and
the original answer), and the phases of Init with their durations.

flags:
  --json   one JSON object instead; its first key is "schema_version" (now
           ` + fmt.Sprint(report.SchemaVersion) + `) and keys are only ever added: docs/json.md documents every field
  -L       one line per device, as ` + "`flagshim list`" + `
` + probeHelp + `
After the report, info exits 1 when a step of Init failed (a plugin that
could not set up its backend, for example); a driver library that is absent
or fails to load is a fact of the report, not an error.
`,
			run: runInfo,
		},
		{
			name: "list", args: "[--probe TIER]",
			summary: "one line per device, as nvidia-smi -L does (same as info -L)",
			detail: `One line per device that a device string can name here, as nvidia-smi -L
prints them:

  cpu:0: host cpu (amd64)
  cuda:0: NVIDIA H200 (UUID: GPU-8a1f...)
  flagos:0: NVIDIA H200 (UUID: GPU-8a1f...) -> cuda:0

cpu:0 comes first, then the devices of each available vendor backend, then
the flagos devices with the vendor device each one routes to. UUIDs are in
the vendor's own form. Where no accelerator is available, only cpu:0 is
printed, "no accelerator found" goes to stderr, and list still exits 0.

list exits 1 on a bad setting or when a device's properties cannot be read;
a driver library that is absent or fails to load is not an error of list
(` + "`flagshim explain`" + ` says why a backend is not available).

flags:
` + probeHelp,
			run: runList,
		},
		{
			name: "resolve", args: "[--probe TIER] DEVICE...",
			summary: "what each device string means here, one per line",
			detail: `What each device string ("type" or "type:index") means here, one per line,
in the canonical form: "cuda:01" prints cuda:1, and where cuda is aliased to
flagos, "cuda:1" prints flagos:1.

resolve exits 1 when a device string is invalid (each bad one is named on
stderr; the good ones are still printed) or on a bad setting; a driver
library that is absent or fails to load is not an error of resolve.

flags:
` + probeHelp,
			run: runResolve,
		},
		{
			name: "explain", args: "[--probe TIER]",
			summary: "each decision and the facts it rests on, in sentences",
			detail: `Each decision flagshim took and the facts it rests on, in sentences: every
library tried and why it was or was not opened, each backend, each probe and
who redirected it, the alias, the environment, the phases.

After the text, explain exits 1 when a step of Init failed.

flags:
` + probeHelp,
			run: runExplain,
		},
		{
			name: "version", args: "",
			summary: "the versions of flagshim and Go, and the OS/architecture",
			detail: `The version of flagshim (the release, and the module version the program
was built with: "(devel)" when built from a checkout), the Go version and
GOOS/GOARCH. It opens no library and runs no probe. --version is the same.
`,
			run: runVersion,
		},
		{
			name: "help", args: "[COMMAND]",
			summary: "this text, or a command's own",
			detail:  "The usage of flagshim, or of COMMAND.\n",
			run:     runHelp,
		},
	}
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (c *command) synopsis() string {
	if c.args == "" {
		return c.name
	}
	return c.name + " " + c.args
}

// shortSynopsis is the synopsis without the --probe flag that four
// commands share: the top usage lists that flag once.
func (c *command) shortSynopsis() string {
	return strings.Replace(c.synopsis(), " [--probe TIER]", "", 1)
}

// usage is the command's own usage text.
func (c *command) usage() string {
	return "usage: flagshim [-v] " + c.synopsis() + "\n\n" + c.detail + "\n" + exitNote
}

const exitNote = `Exit status: 0 on success, 1 on an error (a bad device string, a bad
setting, output that could not be written), 2 on bad usage. A bad setting
(an environment variable whose value flagshim does not accept, such as
FLAGOS_LOG=loud) is an error of info, list, resolve and explain alike, which
then print nothing but the message.
`

// topUsage is flagshim's usage.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: flagshim [-v] [command] [arguments]\n       flagshim --version\n\n")
	b.WriteString("Shows what flagshim found on this machine and why it decided what it did.\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-22s %s\n", c.shortSynopsis(), c.summary)
	}
	b.WriteString(`
flags:
  --probe TIER           (info, list, resolve, explain) where the vendor backends' answers
                         come from: isolated (the default), presence or exact
  -v                     log at info level to stderr (FLAGOS_LOG sets the level otherwise)
  -h, --help             this text; ` + "`flagshim help COMMAND`" + ` or ` + "`flagshim COMMAND -h`" + ` gives a command's own
  --version              the same as ` + "`flagshim version`" + `

`)
	b.WriteString(exitNote)
	return b.String()
}

// parseFlags parses a command's flags; a bad flag is a usage error of the
// command (help was handled before).
func parseFlags(s *session, c *command, fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return nil, usageError(s.stderr, c, c.name+": "+err.Error()), false
	}
	return fs.Args(), exitOK, true
}

// probeFlag adds --probe to fs; useProbe applies its value to s.
func probeFlag(fs *flag.FlagSet) *string { return fs.String("probe", "", "") }

// useProbe makes tier (when set) the probe tier of the session's Init,
// whatever FLAGOS_PROBE says; a bad tier is a usage error of the command.
func useProbe(s *session, c *command, name string) (code int, ok bool) {
	if name == "" {
		return exitOK, true
	}
	t, err := tier.Parse(name, "")
	if err != nil {
		return usageError(s.stderr, c, fmt.Sprintf("%s: --probe %q: want exact, presence or isolated", c.name, name)), false
	}
	s.opts = append(s.opts, flagshim.WithProbe(t))
	return exitOK, true
}

// probeHelp is the --probe paragraph of the commands that take it.
const probeHelp = `  --probe TIER  where the vendor backends' answers come from: isolated
                (each driver initialized in a child process; the default
                here), presence (management libraries and device nodes,
                no driver initialized) or exact (each driver initialized
                in this process). It beats FLAGOS_PROBE.
`

func noArgs(s *session, c *command, args []string) (code int, ok bool) {
	if len(args) > 0 {
		return usageError(s.stderr, c, fmt.Sprintf("%s takes no arguments, got %q", c.name, args)), false
	}
	return exitOK, true
}

func runInfo(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	asList := fs.Bool("L", false, "")
	tier := probeFlag(fs)
	args, code, ok := parseFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	if code, ok := useProbe(s, c, *tier); !ok {
		return code
	}
	if *asJSON && *asList {
		return usageError(s.stderr, c, "info: -L and --json cannot be combined")
	}
	if *asList {
		return list(s)
	}
	s.showsEveryBackend()
	s.opts = append(s.opts, flagshim.WithFreeMemory()) // info shows it
	rep, initErr, bad := s.initialise()
	if bad != nil {
		return fail(s.stderr, bad)
	}
	if rep == nil {
		return fail(s.stderr, initErr)
	}
	snap := report.Collect(rep, report.Options{FreeMemory: true, LookupEnv: lookupEnv})
	var err error
	if *asJSON {
		err = writeJSON(s.stdout, snap)
	} else {
		err = writeInfo(s.stdout, snap)
	}
	return s.done(err, initErr)
}

func runExplain(s *session, c *command, args []string) int {
	args, code, ok := probeFlags(s, c, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	s.showsEveryBackend()
	rep, initErr, bad := s.initialise()
	if bad != nil {
		return fail(s.stderr, bad)
	}
	if rep == nil {
		return fail(s.stderr, initErr)
	}
	return s.done(writeExplain(s.stdout, report.Collect(rep, report.Options{LookupEnv: lookupEnv})), initErr)
}

func runList(s *session, c *command, args []string) int {
	args, code, ok := probeFlags(s, c, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	return list(s)
}

func runResolve(s *session, c *command, args []string) int {
	// Device strings never start with "-": flags end at the first of them
	// (or at "--").
	args, code, ok := probeFlags(s, c, args)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return usageError(s.stderr, c, "resolve needs at least one device string, e.g. flagshim resolve cuda:0")
	}
	// Errors of unrelated steps do not matter here: device.Parse itself
	// fails when the alias could not be decided.
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	code = exitOK
	for _, a := range args {
		d, err := device.Parse(a)
		if err != nil {
			printErr(s.stderr, err)
			code = exitError
			continue
		}
		fmt.Fprintln(s.stdout, d)
	}
	return code
}

// probeFlags parses the flags of a command whose only flag is --probe and
// applies it.
func probeFlags(s *session, c *command, args []string) (rest []string, code int, ok bool) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	tier := probeFlag(fs)
	if rest, code, ok = parseFlags(s, c, fs, args); !ok {
		return nil, code, false
	}
	code, ok = useProbe(s, c, *tier)
	return rest, code, ok
}

func runVersion(s *session, c *command, args []string) int {
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	return writeVersion(s.stdout)
}

func runHelp(s *session, c *command, args []string) int {
	switch len(args) {
	case 0:
		return printUsage(s.stdout, topUsage())
	case 1:
		if h := lookupCommand(args[0]); h != nil {
			return printUsage(s.stdout, h.usage())
		}
		return usageError(s.stderr, nil, fmt.Sprintf("help: unknown command %q", args[0]))
	}
	return usageError(s.stderr, c, fmt.Sprintf("help takes at most one command, got %q", args))
}
