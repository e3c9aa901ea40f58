package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/internal/logging"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// prefix starts every message the CLI writes to stderr, once.
const prefix = "flagshim: "

// childGrace is how long Run waits, once its output is written, for the
// isolated probe's children to finish their drivers' teardown and be
// reaped; one stuck in the kernel past it is left to init.
const childGrace = 5 * time.Second

// Run is the flagshim command: it parses args (without the program name),
// writes to stdout and stderr, and returns the exit status: 0 on success, 1
// on an error (a bad device string, a bad setting, output that could not be
// written), 2 on bad usage. It returns once the isolated probe's children
// it started have exited (at most a few seconds after the output). It is
// meant to be the last thing a program does: where it initializes a driver
// in the process (--probe exact), it keeps the process on one CPU from then
// on (flagshim.WithOneCPU), which makes the exit cheaper, and it leaves the
// management libraries it reads for the exit to shut down
// (flagshim.WithoutShutdown).
func Run(args []string, stdout, stderr io.Writer) int {
	// The CLI is its own isolated probe child: when this process was
	// started as one by the supervisor, this answers and exits.
	flagshim.ServeProbeChild()
	stdout, giveBack := ownStdout(stdout, stderr)
	defer giveBack()
	out := &checkedWriter{w: stdout}
	code := run(args, out, stderr)
	// An isolated probe's child answers before its driver's teardown is
	// done; the command does not leave it behind.
	flagshim.WaitProbeChildren(childGrace)
	if out.err != nil {
		fmt.Fprintf(stderr, "%scannot write the output: %v\n", prefix, out.err)
		if code == exitOK {
			code = exitError
		}
	}
	return code
}

// session is what every command gets: the outputs and Init's options.
type session struct {
	stdout *checkedWriter
	stderr io.Writer
	opts   []flagshim.Option
	// The global flags (flags.go), given before the command or after it:
	// --json, --probe TIER and -v. A command's own --probe or --json,
	// after it, beats the one before it.
	json    bool
	probe   string
	verbose bool
	// probeTier is the tier --probe chose; "" when none did (FLAGOS_PROBE
	// or the command's default).
	probeTier tier.Tier
	// defaultTier is the command's own default tier where neither --probe
	// nor FLAGOS_PROBE chooses: isolated, but presence backed by isolated
	// children for list ("" is isolated).
	defaultTier tier.Tier
}

func run(args []string, stdout *checkedWriter, stderr io.Writer) int {
	// The CLI's answers are exact, but no driver is initialized in the CLI
	// itself: a hanging or crashing driver cannot take it down.
	s := &session{stdout: stdout, stderr: stderr,
		opts: []flagshim.Option{flagshim.WithDefaultProbe(tier.Isolated), flagshim.WithOneCPU(), flagshim.WithoutShutdown()}}
	fs := flag.NewFlagSet("flagshim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.globalFlags(fs)
	showVersion := fs.Bool("version", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return printUsage(stdout, topUsage())
		}
		return usageError(stderr, nil, spelled(err.Error(), args))
	}
	args = fs.Args()
	name := "info"
	if *showVersion {
		if len(args) > 0 {
			return usageError(stderr, nil, fmt.Sprintf("--version takes no command, got %q", args))
		}
		name = "version"
	}
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	c := lookupCommand(name)
	if c == nil {
		return usageError(stderr, nil, fmt.Sprintf("unknown command %q", name))
	}
	if wantsHelp(args) {
		return printUsage(stdout, c.usage())
	}
	return c.run(s, c, args)
}

// wantsHelp reports whether args ask for help (-h, -help, --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// initFlagshim is flagshim.Init; tests replace it.
var initFlagshim = flagshim.Init

// showsEveryBackend is for the commands that ask every backend (info,
// list, explain): Init then starts all their probes at once, so the command
// waits for the slowest driver rather than for their sum.
func (s *session) showsEveryBackend() { s.opts = append(s.opts, flagshim.WithEveryProbe()) }

// initialise checks the settings the CLI can check itself, then runs
// flagshim.Init. A bad setting is an error of every command: it comes back
// as bad, and nothing should be printed but the message. Otherwise a report
// comes back even when some step failed (initErr); a nil report means
// nothing can be shown.
//
// Every bad setting is reported, not only the first found: those the CLI
// checks itself and those only Init can check (FLAGOS_BACKEND's route, the
// probe tier), each once.
func (s *session) initialise() (rep *flagshim.Report, initErr, bad error) {
	if s.verbose {
		l, err := logging.New("info")
		if err != nil {
			return nil, nil, err
		}
		s.opts = append(s.opts, flagshim.WithLogger(l))
	}
	early := checkSettings(lookupEnv)
	rep, err := initFlagshim(context.Background(), s.opts...)
	if bad := report.Settings(early, err); bad != nil {
		return nil, err, bad
	}
	return rep, err, nil
}

// usageError prints msg, on one line, and where the usage is (the
// command's, or the top one when c is nil) to stderr, and returns the usage
// exit status: the usage itself is -h's, not repeated here.
func usageError(stderr io.Writer, c *command, msg string) int {
	help := "flagshim -h"
	if c != nil {
		help = "flagshim " + c.name + " -h"
	}
	fmt.Fprintf(stderr, "%s%s\nrun '%s' for the usage\n", prefix, escape(strings.TrimPrefix(msg, prefix)), help)
	return exitUsage
}

func printUsage(stdout io.Writer, u string) int {
	_, _ = io.WriteString(stdout, u) // a failed write is reported by Run
	return exitOK
}

// fail prints err and returns the error exit status.
func fail(stderr io.Writer, err error) int {
	printErr(stderr, err)
	return exitError
}

// printErr prints each line of err with the "flagshim: " prefix, once:
// errors of the library often start with it already, and errors.Join puts
// one error on each line.
func printErr(stderr io.Writer, err error) {
	var b strings.Builder
	for line := range strings.SplitSeq(err.Error(), "\n") {
		for strings.HasPrefix(line, prefix) {
			line = strings.TrimPrefix(line, prefix)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		b.WriteString(prefix)
		b.WriteString(escape(line)) // a device string, a driver's text: one line each
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(stderr, b.String())
}

// done returns the exit status of a command that has written its output:
// outErr is what writing it returned, initErr Init's error. A failed write
// to stdout is left to Run, which reports it once.
func (s *session) done(outErr, initErr error) int {
	if outErr != nil && outErr == s.stdout.err {
		outErr = nil
	}
	if err := errors.Join(outErr, initErr); err != nil {
		return fail(s.stderr, err)
	}
	return exitOK
}

// checkedWriter keeps the first error of its writer and writes nothing after
// it, so that every command's output error is seen once, by Run.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}
