package dltest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ChildEnv is the variable that marks a re-executed test binary; its value is
// the name of the test the child is to run.
const ChildEnv = "FLAGSHIM_TEST_CHILD"

// CC is the C compiler `go env CC` names, or "" when none is installed.
// It is asked once per process.
func CC() string {
	ccOnce.Do(func() {
		out, err := exec.Command("go", "env", "CC").Output()
		cc := strings.TrimSpace(string(out))
		if err != nil || cc == "" {
			cc = "cc"
		}
		if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
			return
		}
		ccName = cc
	})
	return ccName
}

var (
	ccOnce sync.Once
	ccName string
)

// BuildLib compiles srcs into the shared library out (an absolute path in a
// folder only the user can write) with the given soname and extra flags
// (-D..., -I...). It skips the test when no C compiler is installed.
func BuildLib(tb testing.TB, out, soname string, srcs []string, flags ...string) {
	tb.Helper()
	args := []string{"-shared", "-fPIC"}
	if soname != "" {
		args = append(args, "-Wl,-soname,"+soname)
	}
	build(tb, out, srcs, append(args, flags...))
}

// BuildExe compiles srcs into the executable out with extra flags (-no-pie,
// -pie, -D...), for tests that a program is not taken for a library. It
// skips the test when no C compiler is installed.
func BuildExe(tb testing.TB, out string, srcs []string, flags ...string) {
	tb.Helper()
	build(tb, out, srcs, flags)
}

func build(tb testing.TB, out string, srcs, flags []string) {
	tb.Helper()
	cc := CC()
	if cc == "" {
		tb.Skip("no C compiler (go env CC) to build the fixture")
	}
	key := cacheKey(cc, flags, srcs)
	if key != "" && fromCache(key, out) {
		return
	}
	args := append(strings.Fields(cc)[1:], "-O2", "-Wall", "-o", out)
	args = append(args, flags...)
	args = append(args, srcs...)
	cmd := exec.Command(strings.Fields(cc)[0], args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		tb.Fatalf("building %s: %v\n%s %s\n%s", out, err, cc, strings.Join(args, " "), buf.String())
	}
	if err := os.Chmod(out, 0o755); err != nil {
		tb.Fatal(err)
	}
	if key != "" {
		toCache(key, out)
	}
}

// PrivateDir makes a fresh folder that only the user may write (t.TempDir's
// parent may have other modes).
func PrivateDir(tb testing.TB) string {
	tb.Helper()
	d := tb.TempDir()
	if err := os.Chmod(d, 0o755); err != nil {
		tb.Fatal(err)
	}
	return d
}

// IsChild reports whether this process is a child started by RunChild for
// the test t.
func IsChild(t testing.TB) bool { return os.Getenv(ChildEnv) == t.Name() }

// scrubbed are prefixes of variables a child never inherits from the parent,
// so a developer's own settings cannot change a test's outcome.
var scrubbed = []string{"FLAGOS_", "FAKE_", "LD_LIBRARY_PATH=", "CUDA_VISIBLE_DEVICES=", "MUSA_VISIBLE_DEVICES=", ChildEnv + "="}

// RunChild re-executes the test binary to run only the test named name (a
// top-level test, "TestX"), with env ("K=V") added to a scrubbed copy of the
// environment, in a fresh empty working directory. It returns the combined
// output and the exit error.
func RunChild(tb testing.TB, name string, env ...string) (string, error) {
	tb.Helper()
	return RunChildIn(tb, "", name, env...)
}

// RunChildIn is RunChild with the child's working directory set to dir
// ("" for a fresh empty one), for tests that prove the working directory is
// never searched.
func RunChildIn(tb testing.TB, dir, name string, env ...string) (string, error) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range scrubbed {
			if strings.HasPrefix(kv, p) {
				keep = false
				break
			}
		}
		if keep {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, ChildEnv+"="+name)
	cmd.Env = append(cmd.Env, env...)
	if dir == "" {
		dir = tb.TempDir() // the working directory must never matter
	}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil && !bytes.Contains(out, []byte("--- PASS: "+name)) && !bytes.Contains(out, []byte("--- SKIP: "+name)) {
		err = fmt.Errorf("child did not run %s", name)
	}
	return string(out), err
}

// MustChild runs RunChild and fails tb with the child's output when it fails.
func MustChild(tb testing.TB, name string, env ...string) string {
	tb.Helper()
	return MustChildIn(tb, "", name, env...)
}

// MustChildIn runs RunChildIn and fails tb with the child's output when it
// fails. A child that skipped skips tb with the child's reason: its exit
// status alone reads as a pass, and a skip in a child must not look like
// a passing test in its parent.
func MustChildIn(tb testing.TB, dir, name string, env ...string) string {
	tb.Helper()
	out, err := RunChildIn(tb, dir, name, env...)
	if err != nil {
		tb.Fatalf("child %s (%s): %v\n%s", name, strings.Join(env, " "), err, out)
	}
	if i := strings.Index(out, "--- SKIP: "+name+" ("); i >= 0 {
		tb.Skipf("child %s skipped:\n%s", name, strings.TrimSpace(out[i:]))
	}
	return out
}

// Abs is filepath.Abs that fails tb on error.
func Abs(tb testing.TB, p string) string {
	tb.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}
