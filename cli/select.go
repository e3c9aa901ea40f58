package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// selectCommand is `flagshim select`: the environment for a child process.
func selectCommand() *command {
	return &command{
		name: "select", args: "[--json | --export] [--probe TIER] TYPE DEVICE...",
		summary: "the environment that shows a child process exactly these devices",
		detail: `The environment variables that make exactly the DEVICEs visible, in the
order given, to a child process of the runtime behind TYPE (cuda, hip, npu,
...), one NAME=VALUE per line: the runtime's own visible-devices variable,
in the form it reads, by UUID where it takes UUIDs (cuda: GPU-...), and
whatever else it needs (ROCm's second stage, CUDA's order variable beside
indexes). For launchers that start a worker per device:

  env $(flagshim select cuda GPU-8a1f 0000:3b:00.0) python worker.py
  eval "$(flagshim select --export cuda 1)"

A DEVICE is a UUID, whole or a prefix only one device has; a PCI address
(0000:18:00.0, 00000000:18:00.0 or 18:00.0); or an index (at most 4
digits), the device TYPE:INDEX names in this process (under its own
visible-devices variables). Where cuda means flagos, or for flagos, the
devices and the variables are those of the vendor flagos routes to. The
devices are read from the vendor's management library (NVML, MTML, ...; no
driver is initialized); docs/visible-devices.md gives each runtime's rules
and their sources.

select exits 1, with one line on stderr, when a DEVICE names no device or
several, an index is out of range, the runtime cannot show those devices
together (two MIG instances, a GPU in MIG mode, Ascend's devices out of
logical-id order) or its rules cannot decide (a variable whose effect is
not public is set here), and 2 on bad usage.

flags:
  --json    one JSON object instead: "schema_version", "type", "runtime",
            "env" (names to values), "settings" (in order), "devices" (what
            each DEVICE named, in the child's order) and "notes"
  --export  shell lines instead: export NAME='VALUE'
` + probeHelp,
		probes: true,
		run:    runSelect,
	}
}

func runSelect(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	export := fs.Bool("export", false, "")
	args, code, ok := probeFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if *asJSON && *export {
		return usageError(s.stderr, c, "--json and --export are two forms of the answer: give one")
	}
	if len(args) < 2 {
		return usageError(s.stderr, c, "select needs a device type and at least one device, e.g. flagshim select cuda 0")
	}
	t, err := device.Parse(args[0])
	if err != nil || t.Index >= 0 {
		return usageError(s.stderr, c, fmt.Sprintf("%q is not a device type (cuda, hip, npu, ...): give the type, then the devices", args[0]))
	}
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	sel, err := flagshim.SelectEnv(context.Background(), device.Type(args[0]), args[1:]...)
	if err != nil {
		return fail(s.stderr, fmt.Errorf("select: %w", err))
	}
	switch {
	case *asJSON:
		return s.done(writeJSON(s.stdout, report.SelectionOf(sel)), nil)
	case *export:
		var b strings.Builder
		for _, kv := range sel.Settings {
			fmt.Fprintf(&b, "export %s=%s\n", kv.Name, shellQuote(kv.Value))
		}
		_, err = io.WriteString(s.stdout, b.String())
	default:
		_, err = io.WriteString(s.stdout, strings.Join(sel.Env(), "\n")+"\n")
	}
	return s.done(err, nil)
}

// shellQuote quotes v for a POSIX shell: single quotes, a quote inside
// written '\”.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
