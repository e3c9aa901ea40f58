package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// argsFor are the arguments a command needs to run here (after its
// flags); a command not listed takes none.
var argsFor = map[string][]string{"resolve": {"cpu:0"}}

// subOf is the subcommand a command needs first (its flags come after
// it: flagshim cdi generate --json).
var subOf = map[string][]string{"cdi": {"generate"}}

// globals are the global flags, each as it is given: before the command or
// after it, it means the same.
var globals = [][]string{{"--json"}, {"--probe", "presence"}, {"-probe=exact"}, {"-v"}, {"--json", "--probe", "presence"}}

// Each global flag means the same before the command and after it, for
// every command of the table (the ones other packages add included): the
// same exit status, the same stdout, the same stderr (durations and log
// times aside). Each run is a process of its own, as Init runs once per
// process and the tier it chose must be the flag's.
func TestGlobalFlagsBeforeOrAfterTheCommand(t *testing.T) {
	if args := os.Getenv("FLAGSHIM_CLI_CHILD_ARGS"); args != "" {
		os.Exit(Run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	run := func(t *testing.T, args []string) (code int, stdout, stderr, raw string) {
		cmd := newChild(t, exe, "-test.run=^TestGlobalFlagsBeforeOrAfterTheCommand$")
		cmd.Env = append(cmd.Env, "FLAGSHIM_CLI_CHILD_ARGS="+strings.Join(args, "\x1f"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), scrubRun(out.String()), scrubRun(errOut.String()), out.String()
	}
	for _, c := range commands {
		for _, g := range globals {
			cmd := append([]string{c.name}, subOf[c.name]...)
			before := append(append(append([]string{}, g...), cmd...), argsFor[c.name]...)
			after := append(append(append([]string{}, cmd...), g...), argsFor[c.name]...)
			t.Run(strings.Join(after, " "), func(t *testing.T) {
				t.Parallel()
				code, out, errOut, raw := run(t, before)
				code2, out2, errOut2, _ := run(t, after)
				assert.Equal(t, code, code2, "exit status of %q and %q:\n%s\n%s", before, after, errOut, errOut2)
				assert.Equal(t, out, out2, "stdout")
				assert.Equal(t, errOut, errOut2, "stderr")
				switch {
				case code == exitUsage:
					// A flag the command has no use for: one line and where the usage is.
					assert.Regexp(t, `\Aflagshim: [^\n]+\nrun 'flagshim `+c.name+` -h' for the usage\n\z`, errOut)
				case g[0] == "--json" && code != exitUsage:
					dec := json.NewDecoder(strings.NewReader(raw))
					var v map[string]any
					require.NoError(t, dec.Decode(&v), "one JSON object:\n%s", raw)
					assert.False(t, dec.More(), "one JSON object")
					if _, ok := v["verdict"]; ok && len(g) == 3 {
						assert.Equal(t, "presence", v["probe"], "the tier --probe chose")
						assert.Equal(t, "--probe", v["probe_source"])
					}
				}
			})
		}
	}
}

var logTimeRE = regexp.MustCompile(`(?m)^\S*\d{4}-\d\d-\d\dT\S+`)

// scrubRun replaces what varies between two runs of a command: durations
// and log times.
func scrubRun(s string) string {
	s = durationRE.ReplaceAllString(s, "DUR")
	s = durationNSRE.ReplaceAllString(s, `"duration_ns": N`)
	return logTimeRE.ReplaceAllString(s, "TIME")
}

var (
	durationRE   = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	durationNSRE = regexp.MustCompile(`"duration_ns": \d+`)
)
