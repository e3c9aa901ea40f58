package presence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// The cases that load a fake library each run in a child process (a loaded
// soname stays loaded for the life of a process): TestFakes builds the fake
// and starts the child, TestFakeChild runs the case there.

const (
	caseEnv   = "PRESENCE_CASE"
	libDirEnv = "PRESENCE_LIBDIR"
)

type fakeCase struct {
	name       string
	lib        string   // "nvml" or "mtml"
	defines    []string // -D flags of the fake's build
	env        []string // the child's extra environment
	file       string   // the fake's file name; "" for the real one
	noOverride bool     // leave the override unset (the case searches)
	// setup, when set, prepares more (in the parent) and returns more env.
	setup func(t *testing.T) []string
	// run, when set, replaces the default call (in the child).
	run func(t *testing.T) Report
	// check runs in the child with the report and the fake's call log.
	check func(t *testing.T, r Report, calls []string)
}

type fakeLib struct{ src, file, override, logEnv string }

var fakeLibs = map[string]fakeLib{
	"nvml": {"testdata/fake_nvml.c", "libnvidia-ml.so.1", NVMLEnvVar, "FAKE_NVML_LOG"},
	"mtml": {"testdata/fake_mtml.c", "libmtml.so", MTMLEnvVar, "FAKE_MTML_LOG"},
}

// caseByName finds a case by "lib/name".
func caseByName(name string) *fakeCase {
	for _, list := range [][]fakeCase{nvmlCases, mtmlCases, otherCases} {
		for i := range list {
			if list[i].lib+"/"+list[i].name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func TestFakes(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake management libraries")
	}
	for _, list := range [][]fakeCase{nvmlCases, mtmlCases, otherCases} {
		for _, c := range list {
			t.Run(c.lib+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				fl := fakeLibs[c.lib]
				file := fl.file
				if c.file != "" {
					file = c.file
				}
				dir := filepath.Join(dltest.PrivateDir(t), "lib")
				require.NoError(t, os.MkdirAll(dir, 0o755))
				out := filepath.Join(dir, file)
				dltest.BuildLib(t, out, file, []string{dltest.Abs(t, fl.src)}, c.defines...)
				env := []string{caseEnv + "=" + c.lib + "/" + c.name, libDirEnv + "=" + dir,
					fl.logEnv + "=" + filepath.Join(dltest.PrivateDir(t), "calls.log")}
				if !c.noOverride {
					env = append(env, fl.override+"="+out)
				}
				if c.setup != nil {
					env = append(env, c.setup(t)...)
				}
				env = append(env, c.env...)
				out = dltest.MustChild(t, "TestFakeChild", env...)
				if testing.Verbose() {
					t.Log(out)
				}
			})
		}
	}
}

func TestFakeChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestFakes")
	}
	c := caseByName(os.Getenv(caseEnv))
	require.NotNil(t, c, "unknown case %q", os.Getenv(caseEnv))
	var r Report
	switch {
	case c.run != nil:
		r = c.run(t)
	case c.lib == "mtml":
		r = MTML()
	default:
		r = NVML()
	}
	c.check(t, r, readCalls(t, fakeLibs[c.lib].logEnv))
}

func readCalls(t *testing.T, logEnv string) []string {
	b, err := os.ReadFile(os.Getenv(logEnv))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// paired checks the call log: init first, shutdown last, once each (the
// error-string calls aside).
func paired(t *testing.T, calls []string, init, shutdown string) {
	t.Helper()
	var main []string
	for _, c := range calls {
		if !strings.HasSuffix(c, "ErrorString") {
			main = append(main, c)
		}
	}
	require.NotEmpty(t, main, "no call reached the library")
	assert.Equal(t, init, main[0], "init comes first")
	assert.Equal(t, shutdown, main[len(main)-1], "shutdown comes last")
	assert.Equal(t, 1, count(main, init), "one init")
	assert.Equal(t, 1, count(main, shutdown), "one shutdown")
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func notes(r Report) string { return strings.Join(r.Notes, "\n") }
