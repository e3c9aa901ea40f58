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
	probes  bool   // it takes --probe (also given before the command)
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
           ` + fmt.Sprint(report.SchemaVersion) + `); within a version keys are only ever added: docs/json.md
  -L       one line per device, as ` + "`flagshim list`" + `
` + probeHelp + `
After the report, info exits 1 when a step of Init failed (a plugin that
could not set up its backend, for example); a driver library that is absent
or fails to load is a fact of the report, not an error.
`,
			probes: true,
			run:    runInfo,
		},
		{
			name: "list", args: "[--accelerators-only] [--json] [--probe TIER]",
			summary: "one line per device, as nvidia-smi -L does (same as info -L)",
			detail: `One line per device that a device string can name here, as nvidia-smi -L
prints them:

  cpu:0: host cpu (amd64)
  cuda:0: NVIDIA H200 (UUID: GPU-8a1f...)
  flagos:0: NVIDIA H200 (UUID: GPU-8a1f...) -> cuda:0

cpu:0 comes first, then the devices of each available vendor backend, then
the flagos devices with the vendor device each one routes to. UUIDs are in
the vendor's own form. Where no accelerator is available, only cpu:0 is
printed, "no accelerator found" goes to stderr, and list exits 0.

"Is there an accelerator?" is --accelerators-only: it prints the vendor
backends' devices only (not cpu:0, nor the flagos lines, which name the
same devices again), so that wc -l counts the accelerators, and it exits
` + fmt.Sprint(exitNoDevice) + ` when there is none, as nvidia-smi -L does where it finds no GPU, and
` + fmt.Sprint(exitUnusable) + ` when accelerators of a known maker are present (sysfs shows their PCI
devices) but none can be used: their driver or management library fails
(the reason goes to stderr), so a health check tells a broken driver from
a machine without accelerators:

  if flagshim list --accelerators-only >/dev/null 2>&1; then echo "an accelerator"; fi

Devices present but unusable are listed after the others as
"cuda: unusable: 0000:18:00.0 (nvidia, PCI 0x233010DE)" (not with
--accelerators-only, whose lines are the usable accelerators), and in
--json's "unusable".

list exits 1 on a bad setting or when a device's properties cannot be read;
a driver library that is absent or fails to load is not an error of list
(` + "`flagshim explain`" + ` says why a backend is not available).

Without --probe or FLAGOS_PROBE, list answers as nvidia-smi -L does, from
the management libraries (NVML, MTML, ...) and device nodes: the presence
tier, no driver initialized. A vendor whose library is there but whose
management library and device nodes show nothing is asked in an isolated
child instead, so its devices are still listed. --probe chooses one tier
for every vendor.

flags:
  --accelerators-only  the accelerators only; exit status ` + fmt.Sprint(exitNoDevice) + ` when there is none,
                       ` + fmt.Sprint(exitUnusable) + ` when some are present but none is usable
  --json               one JSON object instead: "schema_version", "devices",
                       one object per line of the text with its "record"
                       (docs/identity.md), and "unusable" (docs/json.md)
` + probeHelp,
			probes: true,
			run:    runList,
		},
		{
			name: "query", args: "--query-gpu=FIELDS [--format=csv,...] [--probe TIER]",
			summary: "one CSV row per device, as nvidia-smi --query-gpu prints it",
			detail:  queryDetail,
			probes:  true,
			run:     runQuery,
		},
		{
			name: "resolve", args: "[--json] [--probe TIER] DEVICE...",
			summary: "what each device string means here, one per line",
			detail: `What each device string ("type" or "type:index") means here, one per line,
in the canonical form: "cuda:01" prints cuda:1, and where cuda is aliased to
flagos, "cuda:1" prints flagos:1.

resolve exits 1 when a device string is invalid (each bad one is named on
stderr; the good ones are still printed) or on a bad setting; a driver
library that is absent or fails to load is not an error of resolve.

flags:
  --json        one JSON object instead: "schema_version" and "devices", one
                {"input", "device", "error"} per argument (docs/json.md)
` + probeHelp,
			probes: true,
			run:    runResolve,
		},
		{
			name: "explain", args: "[--json] [--probe TIER]",
			summary: "each decision and the facts it rests on, in sentences",
			detail: `Each decision flagshim took and the facts it rests on, in sentences: every
library tried and why it was or was not opened, each backend, the probe
tier that answered and who chose it (--probe, FLAGOS_PROBE or the CLI's
default), each probe and who redirected it, the alias, the environment,
the phases.

After the text, explain exits 1 when a step of Init failed.

flags:
  --json        the facts as one JSON object instead: the object of info --json
                (without free memory, which explain does not ask), whose
                "probe_source" says who chose the tier (docs/json.md)
` + probeHelp,
			probes: true,
			run:    runExplain,
		},
		cdiCommand,
		labelsCommand,
		selectCommand(),
		{
			name: "version", args: "[--json]",
			summary: "the versions of flagshim and Go, and the OS/architecture",
			detail: `The version of flagshim (the release, and the module version the program
was built with: "(devel)" when built from a checkout), the Go version and
GOOS/GOARCH. It opens no library and runs no probe. --version is the same.

flags:
  --json   one JSON object instead: "schema_version", "version", "module",
           "module_version", "commit", "modified", "go", "os", "arch" (docs/json.md)
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

// shortSynopsis is the synopsis without the flags that several commands
// share (--probe, --json): the top usage lists those once.
func (c *command) shortSynopsis() string {
	return strings.NewReplacer(" [--probe TIER]", "", " [--json]", "").Replace(c.synopsis())
}

// usage is the command's own usage text.
func (c *command) usage() string {
	return "usage: flagshim [-v] " + c.synopsis() + "\n\n" + c.detail + "\n" + exitNote
}

var exitNote = `Exit status: 0 on success, 1 on an error (a bad device string, a bad
setting, output that could not be written), 2 on bad usage, ` + fmt.Sprint(exitNoDevice) + ` from
list --accelerators-only and query when there is no accelerator, ` + fmt.Sprint(exitUnusable) + ` when
accelerators are present but none is usable. A bad setting (an
environment variable whose value flagshim does not accept, such as
FLAGOS_LOG=loud) is an error of info, list, resolve and explain alike, which
then print nothing but the message.
`

// topUsage is flagshim's usage.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]\n       flagshim --version\n\n")
	b.WriteString("Shows what flagshim found on this machine and why it decided what it did.\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-26s %s\n", c.shortSynopsis(), c.summary)
	}
	b.WriteString(`
global flags (before the command or after it: flagshim --json info is flagshim info --json):
  --json                     one JSON object instead of text (` + jsonCommands() + `): docs/json.md
  --probe TIER               (` + probingCommands() + `) where the vendor backends' answers
                             come from: isolated (the default; list's is presence, see
                             ` + "`flagshim list -h`" + `), presence or exact
  -v                         log at info level to stderr (FLAGOS_LOG sets the level otherwise)

  -h, --help                 this text; ` + "`flagshim help COMMAND`" + ` or ` + "`flagshim COMMAND -h`" + ` gives a command's own
  --version                  the same as ` + "`flagshim version`" + `

`)
	b.WriteString(exitNote)
	return b.String()
}

// jsonCommands lists the commands that take --json: those whose usage
// synopsis names it.
func jsonCommands() string {
	var names []string
	for _, c := range commands {
		if strings.Contains(c.args, "--json") {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// probeFlag adds --probe to fs; useProbe applies its value to s.
func probeFlag(fs *flag.FlagSet) *string { return fs.String(flagProbe, "", "") }

// useProbe makes the tier --probe gave (before the command or after it),
// when set, the probe tier of the session's Init, whatever FLAGOS_PROBE
// says; a bad tier is a usage error of the command.
func useProbe(s *session, c *command) (code int, ok bool) {
	if s.probe == "" {
		return exitOK, true
	}
	t, err := tier.Parse(s.probe, "")
	if err != nil {
		return usageError(s.stderr, c, fmt.Sprintf("%s: --probe %q: want exact, presence or isolated", c.name, s.probe)), false
	}
	s.opts = append(s.opts, flagshim.WithProbe(t))
	s.probeTier = t
	return exitOK, true
}

// probeHelp is the --probe paragraph of the commands that take it.
const probeHelp = `  --probe TIER  where the vendor backends' answers come from: isolated
                (each driver initialized in a child process; the default,
                but for list and query), presence (management libraries and device nodes,
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
	args, code, ok := probeFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	if *asJSON && *asList {
		return usageError(s.stderr, c, "info: -L and --json cannot be combined")
	}
	if *asList {
		return list(s, listOptions{})
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
	referAttempts := report.AttemptsPointer // the JSON's "attempts"
	if !*asJSON {
		// The text shows no attempts: each reason keeps its own.
		referAttempts = func(of, from device.Type) string { return "" }
	}
	snap := s.collect(rep, true, nil, referAttempts)
	var err error
	if *asJSON {
		err = writeJSON(s.stdout, snap)
	} else {
		err = writeInfo(s.stdout, escapeInfo(snap))
	}
	return s.done(err, initErr)
}

// collect is report.Collect with what only the CLI knows: the tier --probe
// chose, the command's default tier, and that the host is this command.
func (s *session) collect(rep *flagshim.Report, freeMemory bool, refer func(device.Type) string, referAttempts func(of, from device.Type) string) report.Info {
	def := s.defaultTier
	if def == "" {
		def = tier.Isolated
	}
	return report.Collect(rep, report.Options{FreeMemory: freeMemory, LookupEnv: lookupEnv, Refer: refer, ReferAttempts: referAttempts,
		ChosenTier: s.probeTier, DefaultTier: def, Host: "the flagshim command"})
}

func runExplain(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	args, code, ok := probeFlags(s, c, fs, args)
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
	if *asJSON {
		return s.done(writeJSON(s.stdout, s.collect(rep, false, nil, nil)), initErr)
	}
	return s.done(writeExplain(s.stdout, escapeInfo(s.collect(rep, false, pointer, attemptsPointer))), initErr)
}

func runList(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	var o listOptions
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.acceleratorsOnly, "accelerators-only", false, "")
	args, code, ok := probeFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	return list(s, o)
}

// resolveOutput is resolve --json's object (docs/json.md).
type resolveOutput struct {
	SchemaVersion int        `json:"schema_version"`
	Devices       []resolved `json:"devices"`
}

// resolved is one device string of resolve --json.
type resolved struct {
	Input  string `json:"input"`
	Device string `json:"device"`
	Error  string `json:"error,omitempty"`
}

func runResolve(s *session, c *command, args []string) int {
	// Device strings never start with "-": flags end at the first of them
	// (or at "--").
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	args, code, ok := probeFlags(s, c, fs, args)
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
	out := []resolved{}
	var b strings.Builder
	for _, a := range args {
		d, err := device.Parse(a)
		if err != nil {
			printErr(s.stderr, err)
			code = exitError
			out = append(out, resolved{Input: a, Error: err.Error()})
			continue
		}
		out = append(out, resolved{Input: a, Device: d.String()})
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	var err error
	if *asJSON {
		err = writeJSON(s.stdout, resolveOutput{report.SchemaVersion, out})
	} else {
		_, err = io.WriteString(s.stdout, b.String())
	}
	if c := s.done(err, nil); c != exitOK {
		return c
	}
	return code
}

// probeFlags parses the flags of a command whose flags are fs's and
// --probe, and applies --probe.
func probeFlags(s *session, c *command, fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	probeFlag(fs)
	if rest, code, ok = parseFlags(s, c, fs, args); !ok {
		return nil, code, false
	}
	code, ok = useProbe(s, c)
	return rest, code, ok
}

func runVersion(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	args, code, ok := parseFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	if *asJSON {
		_ = writeJSON(s.stdout, buildVersion()) // a failed write is reported by Run
		return exitOK
	}
	return writeVersion(s.stdout)
}

func runHelp(s *session, c *command, args []string) int {
	args, code, ok := parseFlags(s, c, flag.NewFlagSet(c.name, flag.ContinueOnError), args)
	if !ok {
		return code
	}
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
