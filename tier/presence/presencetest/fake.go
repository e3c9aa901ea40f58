package presencetest

import (
	"embed"
	"errors"
	"github.com/flagos-ai/flagshim/device"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
// the fake find each other. In a Suite with Common, LogEnv defaults to the
// binding's source's FAKE_<SOURCE>_LOG.
type Lib struct {
	Src      string // the C source: absolute, or relative to the test's package folder
	Soname   string // the file it is built as, its soname: "libnvidia-ml.so.1"
	Override string // the binding's override variable: "FLAGOS_LIBNVML_PATH"
	LogEnv   string // the variable naming the file the fake logs each call to: "FAKE_NVML_LOG"
}

// Build compiles the fake into dir (which others must not be able to
// write) as file ("" for its soname), with extra -D flags, and returns its
// path. The include path has the shared C helpers (see Include). A missing
// C compiler fails tb: the kit cannot prove anything without its fake.
func (l Lib) Build(tb testing.TB, dir, file string, defines ...string) string {
	tb.Helper()
	if dltest.CC() == "" {
		tb.Fatal("presencetest: no C compiler (go env CC) to build the fake management library: the case cannot run; install one (gcc or clang)")
	}
	if file == "" {
		file = l.Soname
	}
	src := l.Src
	if !filepath.IsAbs(src) {
		src = dltest.Abs(tb, src)
	}
	out := filepath.Join(dir, file)
	dltest.BuildLib(tb, out, file, []string{src}, append([]string{"-I" + Include(tb)}, defines...)...)
	return out
}

// csrc are the C helpers the fakes share, embedded: a test binary built
// with -trimpath, or run from a module cache's copy of its package, has
// them.
//
//go:embed testdata/fake_env.h testdata/tripwire_libcuda.c
var csrc embed.FS

// Include is the folder of the C helpers the fake management libraries
// share (fake_env.h: the call log, the FAKE_<LIB>_* knobs, the device
// count) and of tripwire_libcuda.c, written out from the copies embedded in
// the kit (see dltest.Sources). Lib.Build passes -I Include(tb).
func Include(tb testing.TB) string {
	tb.Helper()
	sub, err := fs.Sub(csrc, "testdata")
	require.NoError(tb, err)
	return dltest.Sources(tb, sub)
}

// Sources lists the kit's C helpers as Include writes them, for tests that
// cache built fakes by their sources' hash.
func Sources(tb testing.TB) []string {
	tb.Helper()
	inc := Include(tb)
	ents, err := fs.ReadDir(csrc, "testdata")
	require.NoError(tb, err)
	var out []string
	for _, e := range ents {
		out = append(out, filepath.Join(inc, e.Name()))
	}
	return out
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

// lib is Lib with its defaults (see Lib).
func (s *Suite) lib() Lib {
	l := s.Lib
	if s.Common != nil && l.LogEnv == "" {
		l.LogEnv = s.Common.prefix() + "LOG"
	}
	return l
}

// cases are the common cases, then the binding's own.
func (s *Suite) cases() []Case {
	if s.Common == nil {
		return s.Cases
	}
	return append(s.Common.cases(s.lib(), s.Source), s.Cases...)
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
		s.Common.testOpen(t, s.lib(), s.Source)
	}
	if dltest.CC() == "" {
		t.Fatal("presencetest: no C compiler (go env CC) to build the fake management library: the cases cannot run; install one (gcc or clang)")
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
			lib := s.lib()
			out := lib.Build(t, dir, c.File, c.Defines...)
			env := []string{caseEnv + "=" + c.Name, libDirEnv + "=" + dir,
				lib.LogEnv + "=" + filepath.Join(dltest.PrivateDir(t), "calls.log")}
			if !c.NoOverride {
				env = append(env, lib.Override+"="+out)
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
		c.Check(t, r, Calls(t, s.lib().LogEnv))
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

// Told is a conformance suite's Presence (drivertest.Suite.Presence) for a
// binding whose fake takes fake_env.h's device knobs: it builds l's fake
// in dir and tells it the devices the driver's fake describes, through
// <prefix>COUNT, NAMES, UUIDS, MEM_TOTAL (bytes), DRIVER and BUS0 (device
// 0's PCI bus, hex), then extra's variables for the same devices (a knob of
// the fake's own, or a value in another form: a later variable wins).
func (l Lib) Told(prefix string, extra func(devs []device.Record) []string) func(t *testing.T, dir, root string, devs []device.Record) []string {
	return func(t *testing.T, dir, _ string, devs []device.Record) []string {
		lib := l.Build(t, dir, "")
		var names, uuids []string
		for _, d := range devs {
			names, uuids = append(names, d.Name), append(uuids, d.UUID)
		}
		env := []string{l.Override + "=" + lib, prefix + "COUNT=" + strconv.Itoa(len(devs)),
			prefix + "NAMES=" + strings.Join(names, ","), prefix + "UUIDS=" + strings.Join(uuids, ",")}
		if len(devs) > 0 {
			d := devs[0]
			env = append(env, prefix+"MEM_TOTAL="+strconv.FormatUint(d.TotalMemory, 10), prefix+"DRIVER="+d.DriverVersion)
			if len(d.PCIBusID) >= 7 {
				env = append(env, prefix+"BUS0="+d.PCIBusID[5:7])
			}
		}
		if extra != nil {
			env = append(env, extra(devs)...)
		}
		return env
	}
}
