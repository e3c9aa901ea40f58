package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"github.com/rogpeppe/go-internal/txtar"
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
// codes and messages, so a change in wording is a reviewed diff; with
// -update, a golden that differs (cmp's and cmpscrub's) is rewritten in its
// script instead, for that diff. Scripts
// find the fake drivers at $LIBCUDA and $LIBMUSA and an absent library at
// $NOLIB; HIP and Ascend are absent (FLAGOS_LIBHIP_PATH and
// FLAGOS_LIBASCENDCL_PATH name no file).
func TestScripts(t *testing.T) {
	fakes.once.Do(func() { fakes.cuda, fakes.musa, fakes.mtml = buildFakes(t) })
	if fakes.cuda == "" {
		t.Fatal("building the fake driver libraries failed")
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			if n, ok := env.T().(interface{ Name() string }); ok {
				env.Values[scriptKey{}] = filepath.Join("testdata", "script", filepath.Base(n.Name())+".txtar")
			}
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

func buildFakes(t *testing.T) (libcuda, libmusa, libmtml string) {
	h := sha256.New()
	for _, f := range append(append(vendorstest.DriverSources(t, cuda.Vendor()), vendorstest.DriverSources(t, musa.Vendor())...), vendorstest.ManagementSources(t, "mtml")...) {
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
		vendorstest.Driver(t, cuda.Vendor(), tmp)
		vendorstest.Driver(t, musa.Vendor(), tmp)
		vendorstest.Management(t, "mtml", tmp)
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
// architecture and core count) with placeholders. With -update, a GOLDEN
// that differs is rewritten in the script's archive: what was printed,
// scrubbed, with the scripts' variables' values put back as $NAME.
func cmpScrub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpscrub FILE GOLDEN")
	}
	got := scrub(ts.ReadFile(args[0]))
	want := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	if got == want {
		return
	}
	if *update {
		script, _ := ts.Value(scriptKey{}).(string)
		if script == "" {
			ts.Fatalf("-update: the script's file is not known")
		}
		updateGolden(ts, script, args[1], unexpand(ts, got))
		return
	}
	ts.Logf("got:\n%s", got)
	ts.Fatalf("%s differs from %s (after scrubbing; go test -update rewrites it)", args[0], args[1])
}

// scriptKey is the key of the script's file in a script's Values.
type scriptKey struct{}

// scriptDirs are the folders Setup and testscript give the scripts whose
// paths differ from run to run: a rewritten golden spells them $NAME, as
// the goldens do ($LIBDIR/libmusa.so.1; the fixed paths, such as $NOLIB's,
// stay spelled out).
var scriptDirs = []string{"LIBDIR", "WORK"}

func unexpand(ts *testscript.TestScript, s string) string {
	for _, k := range scriptDirs {
		if v := ts.Getenv(k); v != "" {
			s = strings.ReplaceAll(s, v, "$"+k)
		}
	}
	return s
}

// updateGolden rewrites the file name of the txtar archive script as data.
func updateGolden(ts *testscript.TestScript, script, name, data string) {
	a, err := txtar.ParseFile(script)
	ts.Check(err)
	found := false
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data, found = []byte(data), true
		}
	}
	if !found {
		ts.Fatalf("-update: %s has no file %s", script, name)
	}
	ts.Check(os.WriteFile(script, txtar.Format(a), 0o644))
	ts.Logf("-update: rewrote %s in %s", name, script)
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
