package cli

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The global flags: every command accepts them before its name or after it
// (flagshim --json info, flagshim info --json), the same way.
const (
	flagJSON    = "json"  // one JSON object instead of text
	flagProbe   = "probe" // the probe tier
	flagVerbose = "v"     // log at info level to stderr
)

// addedUsage marks the global flags parseFlags adds to a command's flag
// set, so that a second parse of the same set (parseInterleaved) tells them
// from the command's own.
const addedUsage = "a global flag, added by parseFlags"

// globalFlags adds the global flags to fs, bound to the session: the top
// level's flag set, before the command.
func (s *session) globalFlags(fs *flag.FlagSet) {
	fs.BoolVar(&s.json, flagJSON, false, "")
	fs.StringVar(&s.probe, flagProbe, "", "")
	fs.BoolVar(&s.verbose, flagVerbose, false, "")
}

// parseFlags parses a command's flags, and the global flags with them, so
// that a global flag means the same after the command as before it; a bad
// flag is a usage error of the command (help was handled before).
//
// A command that defines a global flag in fs itself (info's --json, the
// probing commands' --probe) gets the value given before the command as its
// default, and reads its own variable; one that does not gets the flag
// defined, bound to the session. A global flag a command has no use for is
// a usage error in either place: --json where fs defines no json, --probe
// where fs defines no probe. New commands get all of this by calling parseFlags (or
// probeFlags) with their flag set.
func parseFlags(s *session, c *command, fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	own := func(name string) bool { f := fs.Lookup(name); return f != nil && f.Usage != addedUsage }
	ownJSON, ownProbe := own(flagJSON), own(flagProbe)
	if ownJSON {
		_ = fs.Set(flagJSON, strconv.FormatBool(s.json))
	} else if fs.Lookup(flagJSON) == nil {
		fs.BoolVar(&s.json, flagJSON, s.json, addedUsage)
	}
	if ownProbe {
		if s.probe != "" {
			_ = fs.Set(flagProbe, s.probe)
		}
	} else if fs.Lookup(flagProbe) == nil {
		fs.StringVar(&s.probe, flagProbe, s.probe, addedUsage)
	}
	if fs.Lookup(flagVerbose) == nil {
		fs.BoolVar(&s.verbose, flagVerbose, s.verbose, addedUsage)
	}
	if err := fs.Parse(args); err != nil {
		return nil, usageError(s.stderr, c, c.name+": "+spelled(err.Error(), args)), false
	}
	if ownJSON {
		s.json = fs.Lookup(flagJSON).Value.String() == "true"
	}
	if ownProbe {
		s.probe = fs.Lookup(flagProbe).Value.String()
	}
	switch {
	case s.json && !ownJSON:
		return nil, usageError(s.stderr, c, c.name+" has no JSON output (--json)"), false
	case s.probe != "" && !ownProbe:
		return nil, usageError(s.stderr, c, fmt.Sprintf("--probe applies to %s, not to %s", probingCommands(), c.name)), false
	}
	return fs.Args(), exitOK, true
}

// probingCommands lists the commands that take --probe: "info, list,
// resolve and explain".
func probingCommands() string {
	var names []string
	for _, c := range commands {
		if c.probes {
			names = append(names, c.name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// spelled gives back the flag package's message with each flag spelled as
// the user typed it: the package names every flag "-name", so "--json"
// came back as "flag provided but not defined: -json".
func spelled(msg string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if name == "" || strings.HasPrefix(name, "-") {
			continue
		}
		re := regexp.MustCompile(`(^|[\s])-` + regexp.QuoteMeta(name) + `($|[\s:])`)
		if loc := re.FindStringSubmatchIndex(msg); loc != nil {
			at := loc[3] // the end of the first group: where "-name" starts
			return msg[:at] + "-" + msg[at:]
		}
	}
	return msg
}
