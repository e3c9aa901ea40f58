package cli

import (
	"flag"
	"io"
	"regexp"
	"strings"
)

// parseFlags parses a command's flags; a bad flag is a usage error of the
// command (help was handled before).
func parseFlags(s *session, c *command, fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return nil, usageError(s.stderr, c, c.name+": "+spelled(err.Error(), args)), false
	}
	return fs.Args(), exitOK, true
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
