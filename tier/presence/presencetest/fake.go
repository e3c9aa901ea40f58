package presencetest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The variables a parent hands its child besides the case's own.
const (
	caseEnv   = "PRESENCETEST_CASE"   // the case's name
	libDirEnv = "PRESENCETEST_LIBDIR" // the folder the fake was built in
)

// Lib is a fake management library: its C source and how the binding and
// the fake find each other.
type Lib struct {
	Src      string // the C source: absolute, or relative to the test's package folder
	Soname   string // the file it is built as, its soname: "libnvidia-ml.so.1"
	Override string // the binding's override variable: "FLAGOS_LIBNVML_PATH"
	LogEnv   string // the variable naming the file the fake logs each call to: "FAKE_NVML_LOG"
}

// Build compiles the fake into dir (which others must not be able to
// write) as file ("" for its soname), with extra -D flags, and returns its
// path. The include path has the shared C helpers (see Testdata). It skips
// tb where no C compiler is installed.
func (l Lib) Build(tb testing.TB, dir, file string, defines ...string) string {
	tb.Helper()
	if file == "" {
		file = l.Soname
	}
	src := l.Src
	if !filepath.IsAbs(src) {
		src = dltest.Abs(tb, src)
	}
	out := filepath.Join(dir, file)
	dltest.BuildLib(tb, out, file, []string{src}, append([]string{"-I" + Testdata(tb)}, defines...)...)
	return out
}

// Testdata is the folder of the C helpers the fakes share (fake_env.h,
// tripwire_libcuda.c), in this module's sources. It skips tb where the
// sources are not there (a test binary run outside its module).
func Testdata(tb testing.TB) string {
	tb.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		tb.Skip("presencetest: cannot locate the module's sources")
	}
	dir := filepath.Join(filepath.Dir(self), "..", "..", "..", "driver", "drivertest", "testdata")
	if _, err := os.Stat(filepath.Join(dir, "fake_env.h")); err != nil {
		tb.Skipf("presencetest: the shared C helpers are not here (a test binary run outside its module): %v", err)
	}
	return dir
}

// Case is one scenario, run in its own child process.
type Case struct {
	Name       string
	Defines    []string // -D flags of the fake's build
	Env        []string // the child's extra environment, "K=V"
	File       string   // the fake's file name; "" for Lib.Soname
	NoOverride bool     // leave the override unset: the case searches (see LibDir)
	// Setup, when set, prepares more in the parent and returns more of the
	// child's environment.
	Setup func(t *testing.T) []string
	// Run, when set, replaces the default call, Suite.Source on the
	// process's environment (in the child).
	Run func(t *testing.T) presence.Report
	// Check runs in the child with the report and the fake's call log.
	Check func(t *testing.T, r presence.Report, calls []string)
}

// Suite is a binding under test and its cases.
type Suite struct {
	Lib    Lib
	Source func(*presence.Env) presence.Report // the binding: cuda.NVML
	// Common, when set, adds the cases every binding is tested for alike
	// (see Common) to the binding's own.
	Common *Common
	Cases  []Case
}

// cases are the common cases, then the binding's own.
func (s *Suite) cases() []Case {
	if s.Common == nil {
		return s.Cases
	}
	return append(s.Common.cases(s.Lib, s.Source), s.Cases...)
}

// Test runs the suite from one top-level test (whose name the children
// are started with): in the parent it runs the common opening cases, then
// builds the fake and starts every other case as a child of that same
// test, in parallel; in a child it runs the case the environment names. It
// skips where no C compiler is installed.
func (s *Suite) Test(t *testing.T) {
	if dltest.IsChild(t) {
		s.child(t)
		return
	}
	if s.Common != nil {
		s.Common.testOpen(t, s.Lib, s.Source)
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake management library")
	}
	parent := t.Name()
	seen := map[string]bool{}
	if s.Common != nil {
		seen = map[string]bool{"not found": true, "relative override": true, "override in an open folder": true}
	}
	for _, c := range s.cases() {
		require.False(t, seen[c.Name], "two cases named %q", c.Name)
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(dltest.PrivateDir(t), "lib")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			out := s.Lib.Build(t, dir, c.File, c.Defines...)
			env := []string{caseEnv + "=" + c.Name, libDirEnv + "=" + dir,
				s.Lib.LogEnv + "=" + filepath.Join(dltest.PrivateDir(t), "calls.log")}
			if !c.NoOverride {
				env = append(env, s.Lib.Override+"="+out)
			}
			if c.Setup != nil {
				env = append(env, c.Setup(t)...)
			}
			env = append(env, c.Env...)
			log := dltest.MustChild(t, parent, env...)
			if testing.Verbose() {
				t.Log(log)
			}
		})
	}
}

func (s *Suite) child(t *testing.T) {
	name := os.Getenv(caseEnv)
	cases := s.cases()
	for i := range cases {
		c := &cases[i]
		if c.Name != name {
			continue
		}
		var r presence.Report
		if c.Run != nil {
			r = c.Run(t)
		} else {
			r = s.Source(presence.NewEnv())
		}
		c.Check(t, r, Calls(t, s.Lib.LogEnv))
		return
	}
	t.Fatalf("presencetest: unknown case %q", name)
}

// LibDir is, in a child, the folder the parent built the fake in: for a
// case that finds it by a search (presence.WithSearch) rather than the
// override.
func LibDir() string { return os.Getenv(libDirEnv) }

// Calls is the fake's call log, one function name each (nil when nothing
// was called): the file the variable logEnv names.
func Calls(t testing.TB, logEnv string) []string {
	t.Helper()
	b, err := os.ReadFile(os.Getenv(logEnv))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// Paired checks a call log: init first, shutdown last, once each (the
// error-string calls aside).
func Paired(t testing.TB, calls []string, init, shutdown string) {
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
	assert.Equal(t, 1, Count(main, init), "one init")
	assert.Equal(t, 1, Count(main, shutdown), "one shutdown")
}

// Count is how many times s is in list.
func Count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// Notes is a report's notes, one a line.
func Notes(r presence.Report) string { return strings.Join(r.Notes, "\n") }

// Lookup is a fixed environment for presence.WithLookupEnv: the pairs
// k1, v1, k2, v2, ...; every other variable is unset.
func Lookup(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
