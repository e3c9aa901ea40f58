package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/cli"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/vendors"
)

// TestMain lets testscript run this binary as the flagshim command, each
// invocation in a process of its own (Init runs once per process).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flagshim": func() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// fakes are the fake driver libraries the scripts load, built once.
var fakes struct {
	once             sync.Once
	cuda, musa, mtml string
}

// TestScripts runs testdata/script/*.txtar: the CLI's human output, exit
// codes and messages, so a change in wording is a reviewed diff. Scripts
// find the fake drivers at $LIBCUDA and $LIBMUSA and an absent library at
// $NOLIB; HIP and Ascend are absent (FLAGOS_LIBHIP_PATH and
// FLAGOS_LIBASCENDCL_PATH name no file).
func TestScripts(t *testing.T) {
	fakes.once.Do(func() { fakes.cuda, fakes.musa, fakes.mtml = buildFakes(t) })
	if fakes.cuda == "" {
		t.Fatal("building the fake driver libraries failed")
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			// No variable of the host leaks in (testscript starts from a
			// clean environment; this says so for flagshim's own). The
			// visible-devices variables stay unset: set and empty, they
			// hide every device.
			for _, v := range flagshim.Variables() {
				if v.Kind != driver.VarVisible {
					env.Setenv(v.Name, "")
				}
			}
			for _, kv := range os.Environ() {
				if strings.HasPrefix(kv, "FAKE_") {
					env.Setenv(strings.SplitN(kv, "=", 2)[0], "")
				}
			}
			env.Setenv("LIBCUDA", fakes.cuda)
			env.Setenv("LIBMUSA", fakes.musa)
			env.Setenv("LIBMTML", fakes.mtml)
			env.Setenv("NOLIB", "/nonexistent/libcuda.so.1")
			// No other vendor's library here: the host's own search (its
			// ld.so.cache folders) would otherwise show in the goldens.
			for _, v := range vendors.All() {
				if v.Type != device.CUDA && v.Type != device.MUSA && v.Library.EnvVar != "" {
					env.Setenv(v.Library.EnvVar, "/nonexistent/"+v.Library.Sonames[0])
				}
			}
			env.Setenv("LIBDIR", filepath.Dir(fakes.cuda))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"cmpscrub":  cmpScrub,
			"jsonvalid": jsonValid,
		},
	})
}

// fakesDir is where the fakes are built. Golden files show library paths
// and align tables on them, so the path must not vary from run to run; a
// fresh build goes to a temporary folder first and is renamed into place,
// so concurrent test runs cannot see half a library.
const fakesDir = "/tmp/flagshim-cli-fakes"

func buildFakes(t *testing.T) (cuda, musa, mtml string) {
	h := sha256.New()
	for _, f := range append(append(drivertest.FakeSources(t, "cuda"), drivertest.FakeSources(t, "musa")...), drivertest.FakeSources(t, "mtml")...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	dir := filepath.Join(fakesDir, hex.EncodeToString(h.Sum(nil))[:12])
	if _, err := os.Stat(filepath.Join(dir, "libmtml.so")); err != nil {
		if err := os.MkdirAll(fakesDir, 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(fakesDir, "build-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		if err := os.Chmod(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		drivertest.BuildFake(t, "cuda", tmp)
		drivertest.BuildFake(t, "musa", tmp)
		drivertest.BuildFake(t, "mtml", tmp)
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) && !errors.Is(err, syscall.ENOTEMPTY) {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libmusa.so.1"), filepath.Join(dir, "libmtml.so")
}

var (
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	cpuRE      = regexp.MustCompile(`host cpu \(\w+\)( +)\d+ cores`)
)

// cmpScrub is `cmpscrub FILE GOLDEN`: like cmpenv, after replacing what
// differs from run to run and machine to machine (durations, the host cpu's
// architecture and core count) with placeholders.
func cmpScrub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpscrub FILE GOLDEN")
	}
	got := scrub(ts.ReadFile(args[0]))
	want := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	if got != want {
		ts.Logf("got:\n%s", got)
		ts.Fatalf("%s differs from %s (after scrubbing)", args[0], args[1])
	}
}

func scrub(s string) string {
	s = cpuRE.ReplaceAllString(s, "host cpu (ARCH)${1}N cores")
	return durationRE.ReplaceAllString(s, "DUR")
}

// jsonValid is `jsonvalid stdout|FILE`: the text is one JSON document and
// nothing else (no line a library printed before or after it).
func jsonValid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonvalid stdout|FILE")
	}
	text := ts.ReadFile(args[0])
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil { // one value, nothing after it
		ts.Fatalf("%s is not one JSON document: %v\n%s", args[0], err, text)
	}
}
