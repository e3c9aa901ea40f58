package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/logging"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage: flagshim [-v] [command] [arguments]

commands:
  info [--json]        what was found: backends, devices, probes, alias, phases (the default)
  resolve DEVICE...    what each device string means here, one per line
  explain              each decision and the facts it rests on, in sentences

flags:
  -v                   log at info level to stderr (FLAGOS_LOG sets the level otherwise)
`

// Run is the flagshim command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flagshim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	verbose := fs.Bool("v", false, "")
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, err.Error())
	}
	args = fs.Args()
	cmd := "info"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}

	var opts []flagshim.Option
	if *verbose {
		l, err := logging.New("info")
		if err != nil {
			fmt.Fprintln(stderr, "flagshim:", err)
			return exitError
		}
		opts = append(opts, flagshim.WithLogger(l))
	}

	switch cmd {
	case "info":
		sub := flag.NewFlagSet("info", flag.ContinueOnError)
		sub.SetOutput(io.Discard)
		asJSON := sub.Bool("json", false, "")
		if err := sub.Parse(args); err != nil {
			return usageError(stderr, "info: "+err.Error())
		}
		if sub.NArg() > 0 {
			return usageError(stderr, fmt.Sprintf("info takes no arguments, got %q", sub.Args()))
		}
		rep, initErr := initialise(opts)
		if rep == nil {
			return fail(stderr, initErr)
		}
		s := collect(rep)
		var err error
		if *asJSON {
			err = writeJSON(stdout, s)
		} else {
			err = writeInfo(stdout, s)
		}
		return finish(stderr, errors.Join(err, initErr))
	case "resolve":
		if len(args) == 0 {
			return usageError(stderr, "resolve needs at least one device string, e.g. flagshim resolve cuda:0")
		}
		// Errors of unrelated steps do not matter here: device.Parse itself
		// fails when the alias could not be decided.
		_, _ = initialise(opts)
		return resolve(args, stdout, stderr)
	case "explain":
		if len(args) > 0 {
			return usageError(stderr, fmt.Sprintf("explain takes no arguments, got %q", args))
		}
		rep, initErr := initialise(opts)
		if rep == nil {
			return fail(stderr, initErr)
		}
		return finish(stderr, errors.Join(writeExplain(stdout, collect(rep)), initErr))
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		return usageError(stderr, fmt.Sprintf("unknown command %q", cmd))
	}
}

// initialise runs flagshim.Init. A report comes back even when some step
// failed; a nil report means nothing can be shown.
func initialise(opts []flagshim.Option) (*flagshim.Report, error) {
	return flagshim.Init(context.Background(), opts...)
}

func resolve(args []string, stdout, stderr io.Writer) int {
	code := exitOK
	for _, a := range args {
		d, err := device.Parse(a)
		if err != nil {
			fmt.Fprintln(stderr, "flagshim:", err)
			code = exitError
			continue
		}
		fmt.Fprintln(stdout, d)
	}
	return code
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "flagshim: %s\n\n%s", msg, usage)
	return exitUsage
}

func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "flagshim:", err)
	return exitError
}

func finish(stderr io.Writer, err error) int {
	if err != nil {
		return fail(stderr, err)
	}
	return exitOK
}
