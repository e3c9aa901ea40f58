package main

import (
	"bytes"
	"encoding/json"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
)

func TestPut(t *testing.T) {
	buf := []byte("zzzzzz")
	n, f := put(buf, "cpu:0")
	assert.Equal(t, failNone, f)
	assert.Equal(t, 5, n)
	assert.Equal(t, "cpu:0\x00", string(buf))

	buf = []byte("zzzzz")
	_, f = put(buf, "cpu:0")
	assert.Equal(t, failRange, f, "no room for the NUL")
	assert.Equal(t, "\x00zzzz", string(buf), "only an empty string is written")

	_, f = put(nil, "cpu")
	assert.Equal(t, failArgs, f)
}

// TestCore runs what the exported functions run, in this process and from
// many goroutines at once (under -race where cgo is on): the C library itself
// cannot be built with -race, see TestCShared.
func TestCore(t *testing.T) {
	none := t.TempDir()
	t.Setenv("FLAGOS_LIBCUDA_PATH", none+"/libcuda.so.1")
	t.Setenv("FLAGOS_LIBMUSA_PATH", none+"/libmusa.so.1")
	t.Setenv("FLAGOS_ALIAS_CUDA", "")
	t.Setenv("FLAGOS_BACKEND", "")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				active, f := aliasActive()
				assert.Equal(t, failNone, f)
				assert.False(t, active, "no vendor runtime: no flagos device, no alias")
				s, f := resolve("cuda:1")
				assert.Equal(t, failNone, f)
				assert.Equal(t, "cuda:1", s)
				s, f = resolve("cpu")
				assert.Equal(t, failNone, f)
				assert.Equal(t, "cpu", s)
				for _, bad := range []string{"", "CUDA", "cpu:-1", "nope:0", "cpu:1:2"} {
					_, f = resolve(bad)
					assert.Equal(t, failDevice, f, "%q", bad)
				}
				// The first info asks every vendor's probe at once (askAll),
				// beside the other goroutines' calls.
				js, f := infoJSON()
				assert.Equal(t, failNone, f)
				assert.Contains(t, js, `"probe":"presence"`)
			}
		}()
	}
	wg.Wait()
}

// TestCShared builds this package with -buildmode=c-shared and
// testdata/check.c against it with the system C compiler, then checks the
// C interface's answers, each run in a process of its own (Init runs once
// per process): without any vendor runtime, with a bad FLAGOS_ALIAS_CUDA,
// and with the fake libmusa and libcuda of drivers/*/testdata.
//
// The library is built with CGO_ENABLED=1 whatever this test binary was built
// with, and never with -race: ThreadSanitizer cannot map its shadow memory
// inside a c-shared library loaded by a C program. The threads case checks
// that concurrent first calls from C threads agree.
func TestCShared(t *testing.T) {
	check := buildCheck(t)
	none := t.TempDir() // nothing in it: no libcuda, no libmusa
	noDrivers := []string{
		"FLAGOS_LIBCUDA_PATH=" + none + "/libcuda.so.1",
		"FLAGOS_LIBMUSA_PATH=" + none + "/libmusa.so.1",
		"FLAGOS_LIBNVML_PATH=" + none + "/libnvidia-ml.so.1",
		"FLAGOS_LIBMTML_PATH=" + none + "/libmtml.so",
	}

	t.Run("codes", func(t *testing.T) {
		assert.Equal(t, []string{"EINIT=-1 EINVAL=-2 EDEVICE=-3 ERANGE=-4 EHOOK=-5 EBACKEND=-6 ENVSHMEM=-7 EFORK=-8 ENODEV=-9 ESELECT=-10"}, runCheck(t, check, noDrivers, "codes"),
			"the codes documented in flagshim.h and doc.go")
	})

	t.Run("abi version", func(t *testing.T) {
		assert.Equal(t, []string{"abi=10003 header=10003 major=1 minor=3"}, runCheck(t, check, noDrivers, "abi"),
			"flagshim_abi_version is the header's FLAGSHIM_ABI_VERSION, major*10000 + minor: 1.3")
	})

	// A host forks from C after using the library: in the child every entry
	// point answers FLAGSHIM_EFORK at once, out holds "", flagshim_error
	// names the code; none enters the Go runtime, so none hangs or
	// crashes. flagshim_abi_version, a constant, still answers, and
	// flagshim_info_json (ABI 1.3) answers the last info answer the parent
	// built: where it built none (a resolve runs Init but builds none, and
	// the fork builds none), EFORK. The parent is unaffected.
	t.Run("fork from C", func(t *testing.T) {
		// "": a fork at once, while the Go runtime may still be starting
		// (the prepare handler waits for it: ABI 1.3).
		for _, before := range []string{"64/cpu", "alias", "ready", "", "info"} {
			args := []string{before, "fork"}
			if before == "" {
				args = []string{"fork"}
			}
			got := runCheck(t, check, noDrivers, args...)
			if before == "" {
				got = append([]string{""}, got...)
			}
			require.Len(t, got, 4, "%s then fork: %q", before, got)
			child, parent := got[1], got[2:]
			assert.Equal(t, []string{"child=exit:0", "parent: rc=5 out=cpu:0"}, parent, "%s then fork", before)
			if before == "info" {
				assert.Regexp(t, ` info=[1-9][0-9]+ `, child, "%s then fork: the parent's answer's length", before)
			} else {
				assert.Contains(t, child, " info=-8 ", "%s then fork: the parent built no info answer, the fork none", before)
			}
			for _, want := range []string{"resolve=-8 out=empty canary=ok", "alias=-8", "loaded=-8 names=empty",
				"unloading=-8", "attach=-8", "init=-8", "record=-8 rec=empty", "mem=-8 memout=untouched", "ready=-8", "select=-8", "abi=10003", "errlen=ok", "cut=7/ok",
				"error=FLAGSHIM_EFORK", "child of a fork"} {
				assert.Contains(t, child, want, "%s then fork", before)
			}
		}
	})

	// The fork copy (ABI 1.3): every info answer the parent builds is
	// published in C memory, and a forked child answers the last one with
	// plain C under the size protocol. The fork itself builds none: its
	// prepare handler runs under libc's atfork lock, where the presence
	// probes' dlopen could hang it (entry.go).
	t.Run("fork copy", func(t *testing.T) {
		nvml, cuda := buildFake(t, "nvml"), buildFake(t, "cuda")
		log := filepath.Join(dltest.PrivateDir(t), "nvml.log")
		env := []string{"FLAGOS_LIBCUDA_PATH=" + cuda, noDrivers[1], "FLAGOS_LIBNVML_PATH=" + nvml, "FAKE_NVML_COUNT=2", "FAKE_NVML_LOG=" + log}

		// Nothing ran Init: the handler neither starts it (NVML is never
		// opened) nor builds an answer; the child has none.
		got := runCheck(t, check, env, "ready", "forkinfo", "builds")
		assert.Equal(t, []string{"ready=0", "child: info=-8", "child=exit:0", "builds=0"}, got)
		_, err := os.Stat(log)
		assert.ErrorIs(t, err, os.ErrNotExist, "no Init in the parent: the fake NVML never ran")

		// A first resolve runs Init but builds no answer, and neither fork
		// builds one: both children answer EFORK. (Were the prepare
		// handler to build the answer, as ABI 1.3's first cut did, under
		// the atfork lock, builds would be 1 and the children would
		// answer.)
		got = runCheck(t, check, env, "64/cuda:1", "forkinfo", "forkinfo", "builds")
		assert.Equal(t, []string{"rc=6 out=cuda:1 canary=ok", "child: info=-8", "child=exit:0", "child: info=-8",
			"child=exit:0", "builds=0"}, got, "no answer built before the forks: none at the fork")

		// A C host that built the answer before forking: each child
		// answers the last answer the parent built.
		got = runCheck(t, check, env, "64/cuda:1", "info", "forkinfo", "info", "forkinfo", "builds")
		require.Len(t, got, 8, "%q", got)
		assert.Equal(t, "rc=6 out=cuda:1 canary=ok", got[0])
		assert.Equal(t, []string{"child=exit:0", "child=exit:0", "builds=4"}, []string{got[3], got[6], got[7]},
			"check's info asks the size, then the answer: two answers built each time, none at the forks")
		for i, at := range []int{1, 4} {
			_, parent, ok := strings.Cut(got[at], " json=")
			require.True(t, ok, got[at])
			child := childInfo(t, got[at+1])
			assert.JSONEq(t, parent, child.json, "fork %d: the child's answer is the parent's last", i+1)
			assert.Contains(t, child.json, `"probe":"presence"`)
			assert.Contains(t, child.json, `{"type":"cuda","available":true,"devices":2,`, "the fake NVML's two devices")
			assert.Equal(t, "-4 0", child.erange, "too small: ERANGE, out holds \"\"")
		}

		// malloc failing for the copy: the parent's answer is given, no
		// copy is kept, the child answers EFORK; the next answer is kept.
		got = runCheck(t, check, env, "64/cuda:1", "failmalloc", "info", "forkinfo", "info", "forkinfo")
		require.Len(t, got, 7, "%q", got)
		assert.Contains(t, got[1], " json=", "the parent answered")
		assert.Equal(t, []string{"child: info=-8", "child=exit:0"}, got[2:4], "malloc failed: no copy")
		_, parent, _ := strings.Cut(got[4], " json=")
		assert.JSONEq(t, parent, childInfo(t, got[5]).json, "the next answer, kept")

		// A fork from inside a flagshim call (a library flagshim calls
		// forks, on the thread making the call): the handler does not
		// enter Go there; the child answers the answer built before, the
		// parent's call goes on. (flagshim_select_json queries NVML
		// again.)
		got = runCheck(t, check, env, "64/cuda:0", "forkinside", "select=cuda/0", "info", "forkinside", "select=cuda/0", "builds")
		require.Len(t, got, 9, "%q", got)
		assert.Equal(t, []string{"inside-child: info=-8", "inside=exit:0"}, got[1:3], "no answer built: none inside a call")
		assert.Contains(t, got[3], "select=", "the call the fork came from answered")
		assert.NotContains(t, got[3], "select=-", "the call the fork came from answered")
		assert.Regexp(t, `^inside-child: info=[1-9][0-9]+$`, got[5], "the answer built before: given inside a call")
		assert.Equal(t, "inside=exit:0", got[6])
		assert.NotContains(t, got[7], "select=-", "the call the fork came from answered")
		assert.Equal(t, "builds=2", got[8], "check's info built two (the size, the answer), the forks none")
	})

	t.Run("no vendor runtime", func(t *testing.T) {
		got := runCheck(t, check, noDrivers,
			"64/cpu", "64/cpu:0", "64/cuda", "64/cuda:1", "alias",
			"64/CUDA", "64/cpu:-1", "64/nope:0", "64/", "64/<null>",
			"3/cpu", "4/cpu", "5/cpu:0", "6/cpu:0", "1/cpu",
			"0/cpu", "-5/cpu", "null/cpu")
		assert.Equal(t, []string{
			"rc=3 out=cpu canary=ok",
			"rc=5 out=cpu:0 canary=ok",
			"rc=4 out=cuda canary=ok", // no flagos device: no alias
			"rc=6 out=cuda:1 canary=ok",
			"alias=0",
			"rc=-3 first=0 canary=ok", // bad device strings: EDEVICE, out = ""
			"rc=-3 first=0 canary=ok",
			"rc=-3 first=0 canary=ok",
			"rc=-3 first=0 canary=ok",
			"rc=-2 first=0 canary=ok", // device NULL: EINVAL, out = ""
			"rc=-4 first=0 canary=ok", // too small: ERANGE, nothing past out_len
			"rc=3 out=cpu canary=ok",  // exactly the answer and its NUL
			"rc=-4 first=0 canary=ok",
			"rc=5 out=cpu:0 canary=ok",
			"rc=-4 first=0 canary=ok",
			"rc=-2 first=90 canary=ok", // out_len <= 0: EINVAL, nothing written
			"rc=-2 first=90 canary=ok",
			"rc=-2 first=90 canary=ok", // out NULL
		}, got)
	})

	t.Run("bad FLAGOS_ALIAS_CUDA: init error", func(t *testing.T) {
		got := runCheck(t, check, append(noDrivers, "FLAGOS_ALIAS_CUDA=perhaps"), "alias", "64/cpu", "64/cuda", "error")
		require.Len(t, got, 4)
		assert.Equal(t, []string{"alias=-1", "rc=-1 first=0 canary=ok", "rc=-1 first=0 canary=ok"}, got[:3])
		assert.Contains(t, got[3], "FLAGOS_ALIAS_CUDA", "flagshim_error names the variable")
		assert.Contains(t, got[3], "invalid setting")
	})

	t.Run("ERANGE and EINVAL say why in flagshim_error", func(t *testing.T) {
		got := runCheck(t, check, noDrivers, "3/cpu:0", "error", "64/<null>", "error", "info/8", "error")
		require.Len(t, got, 6)
		assert.Equal(t, "rc=-4 first=0 canary=ok", got[0])
		assert.Contains(t, got[1], "needs 6 bytes with its NUL and out_len is 3", "the size the answer needs")
		assert.Equal(t, "rc=-2 first=0 canary=ok", got[2])
		assert.Contains(t, got[3], "flagshim_resolve: device is NULL")
		assert.Equal(t, "rc=-4 first=0 canary=ok", got[4])
		assert.Contains(t, got[5], "and out_len is 8")
	})

	t.Run("bad settings: every one is an init error", func(t *testing.T) {
		for _, kv := range []string{"FLAGOS_LIBCUDA_PATH=lib/libcuda.so.1", "FLAGOS_BACKEND=junk", "FLAGOS_LOG=junk", "FLAGOS_PROBE=isolated", "FLAGOS_PROBE=fast"} {
			got := runCheck(t, check, append(noDrivers, kv), "64/cuda", "error")
			require.Len(t, got, 2)
			assert.Equal(t, "rc=-1 first=0 canary=ok", got[0], kv)
			name, _, _ := strings.Cut(kv, "=")
			assert.Contains(t, got[1], name, kv)
		}
	})

	t.Run("ready and info json", func(t *testing.T) {
		got := runCheck(t, check, noDrivers, "ready", "info", "info/8")
		require.Len(t, got, 3)
		assert.Equal(t, "ready=0", got[0])
		n, js, ok := strings.Cut(strings.TrimPrefix(got[1], "info="), " json=")
		require.True(t, ok, got[1])
		var info struct {
			SchemaVersion int `json:"schema_version"`
			Verdict       string
			Probe         string
			ProbeSource   string `json:"probe_source"`
			Alias         struct{ Active bool }
			Backends      []struct{ Type string }
		}
		require.NoError(t, json.Unmarshal([]byte(js), &info), "flagshim_info_json is `flagshim info --json`")
		assert.Equal(t, strconv.Itoa(len(js)), n)
		assert.NotEmpty(t, info.Backends)
		assert.Equal(t, report.SchemaVersion, info.SchemaVersion, "the CLI's model")
		// Where the CLI would answer from another tier, the answer says
		// which one answered here and why.
		assert.Equal(t, "presence", info.Probe)
		assert.Equal(t, "default", info.ProbeSource)
		assert.Equal(t, "no accelerator found; cuda means cuda; presence tier, the default of "+Host, info.Verdict)
		// The machine has no accelerator (cuda, musa and their management
		// libraries name a file in a folder that does not exist; the others
		// are searched for): each fact once, under the CLI's bound, without
		// indentation; the test's temporary folder counted as /nonexistent.
		size := len(strings.ReplaceAll(js, none, "/nonexistent"))
		assert.LessOrEqual(t, size, 8<<10, "flagshim_info_json on a machine without accelerators")
		t.Logf("flagshim_info_json: %d bytes (%d with %s as /nonexistent)", len(js), size, none)
		assert.Equal(t, "rc=-4 first=0 canary=ok", got[2], "too small: ERANGE, nothing past out_len")
	})

	t.Run("presence, the library's default: no driver is initialized", func(t *testing.T) {
		musa := buildFake(t, "musa")
		mtml := buildFake(t, "mtml")
		log := filepath.Join(dltest.PrivateDir(t), "fake.log")
		env := []string{"FLAGOS_LIBCUDA_PATH=" + none + "/libcuda.so.1", "FLAGOS_LIBMUSA_PATH=" + musa,
			"FLAGOS_LIBMTML_PATH=" + mtml, "FAKE_MTML_COUNT=2", "FAKE_LOG=" + log}
		assert.Equal(t, []string{"alias=1", "rc=8 out=flagos:1 canary=ok"}, runCheck(t, check, env, "alias", "64/cuda:1"),
			"MTML's two devices make cuda mean flagos")
		// flagshim_select_json: cuda means flagos, which routes to musa:
		// MUSA's variable, in the form MUSA documents.
		got := runCheck(t, check, env, "select=cuda/1,00000000-aaaa", "select=musa/7", "select=cuda:1/0")
		require.Len(t, got, 3)
		var sel report.Selection
		require.True(t, strings.HasPrefix(got[0], "select="), got[0])
		require.NoError(t, json.Unmarshal([]byte(got[0][strings.Index(got[0], "json=")+5:]), &sel), got[0])
		assert.Equal(t, map[string]string{"MUSA_VISIBLE_DEVICES": "1,0"}, sel.Env)
		assert.Equal(t, "musa", sel.Type)
		assert.Equal(t, "1", sel.Devices[0].Spec)
		assert.Contains(t, got[1], "select=-10 error=flagshim_select_json: visible: bad selection: index 7 is out of range")
		assert.Contains(t, got[2], "select=-3 error=", "cuda:1 is no type")
		_, err := os.Stat(log)
		assert.ErrorIs(t, err, os.ErrNotExist, "libmusa was found and checked, never loaded: none of its code ran in the host")
		assert.Equal(t, []string{"alias=1"}, runCheck(t, check, append(env, "FLAGOS_PROBE=exact"), "alias"))
		b, err := os.ReadFile(log)
		require.NoError(t, err)
		assert.Contains(t, string(b), "init", "the exact tier does initialize it: the test would see it")
	})

	t.Run("concurrent first calls from C threads", func(t *testing.T) {
		assert.Equal(t, []string{"threads=8 alias=0 cuda1=cuda:1 consistent=yes"}, runCheck(t, check, noDrivers, "threads=8"))
	})

	t.Run("fake drivers: cuda means flagos exactly without usable CUDA", func(t *testing.T) {
		musa := buildFake(t, "musa")
		env := []string{"FLAGOS_LIBCUDA_PATH=" + none + "/libcuda.so.1", "FLAGOS_LIBMUSA_PATH=" + musa, "FAKE_DEVICE_COUNT=2", "FLAGOS_PROBE=exact"}
		assert.Equal(t, []string{
			"alias=1",
			"rc=8 out=flagos:0 canary=ok",
			"rc=6 out=flagos canary=ok",
			"rc=6 out=musa:1 canary=ok",
			"rc=-4 first=0 canary=ok",
		}, runCheck(t, check, env, "alias", "64/cuda:0", "64/cuda", "64/musa:1", "8/cuda:0"))
		assert.Equal(t, []string{"threads=8 alias=1 cuda1=flagos:1 consistent=yes"}, runCheck(t, check, env, "threads=8"))

		assert.Equal(t, []string{"alias=0", "rc=6 out=cuda:0 canary=ok"},
			runCheck(t, check, append(env, "FLAGOS_ALIAS_CUDA=0"), "alias", "64/cuda:0"), "FLAGOS_ALIAS_CUDA=0 forbids the alias")
		assert.Equal(t, []string{"alias=0", "rc=6 out=cuda:0 canary=ok"},
			runCheck(t, check, append(env, "FAKE_DEVICE_COUNT=0"), "alias", "64/cuda:0"), "no MUSA device: no alias")

		cuda := buildFake(t, "cuda")
		env[0] = "FLAGOS_LIBCUDA_PATH=" + cuda
		assert.Equal(t, []string{"alias=0", "rc=6 out=cuda:0 canary=ok"},
			runCheck(t, check, env, "alias", "64/cuda:0"), "a usable CUDA runtime (fake libcuda): no alias")
		assert.Equal(t, []string{"alias=1", "rc=8 out=flagos:0 canary=ok"},
			runCheck(t, check, append(env, "FAKE_CUDA_STUB=1"), "alias", "64/cuda:0"), "a stub libcuda is no CUDA runtime")
	})
}

// forkAnswer is what forkinfo's child read.
type forkAnswer struct{ json, erange string }

// childInfo parses forkinfo's "child: info=N json=J erange=N first=N".
func childInfo(t *testing.T, line string) forkAnswer {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "child: info=")
	require.True(t, ok, line)
	n, rest, ok := strings.Cut(rest, " json=")
	require.True(t, ok, "the child has the parent's copy: %s", line)
	js, tail, ok := strings.Cut(rest, " erange=")
	require.True(t, ok, line)
	assert.Equal(t, strconv.Itoa(len(js)), n)
	require.True(t, json.Valid([]byte(js)), js)
	return forkAnswer{js, strings.Replace(tail, " first=", " ", 1)}
}

// buildCheck builds libflagshim.so and the check program linked against it,
// or skips the test, saying why, where this platform cannot.
func buildCheck(t *testing.T) string {
	t.Helper()
	switch runtime.GOOS {
	case "linux", "freebsd":
	default:
		t.Skipf("the C test links a c-shared library with ELF -rpath; not set up for %s", runtime.GOOS)
	}
	cc := dltest.CC()
	if cc == "" {
		t.Skip("-buildmode=c-shared needs cgo, and `go env CC` names no installed C compiler")
	}
	// As pip's build backend builds it (the Python suite's library is the
	// same build, from GoBuild's cache).
	lib := dltest.GoBuild(t, ".", "libflagshim.so", dltest.CSharedFlags...)
	dir := filepath.Dir(lib)
	check := filepath.Join(dir, "check")
	ccArgs := append(strings.Fields(cc)[1:], "-Wall", "-Wextra", "-Werror", "-o", check,
		"-I.", dltest.Abs(t, "testdata/check.c"), "-L"+dir, "-lflagshim", "-Wl,-rpath,"+dir, "-pthread",
		"-rdynamic") // its malloc and getenv interpose the libraries' (forkinside, failmalloc)
	cmd := exec.Command(strings.Fields(cc)[0], ccArgs...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(ccArgs, " "), err, out)
	}
	return check
}

// buildFake builds the fake of a vendor ("cuda", "musa") or management
// library ("mtml") into a private folder and returns its path.
func buildFake(t *testing.T, name string) string {
	t.Helper()
	switch name {
	case "cuda":
		return vendorstest.Driver(t, cuda.Vendor(), dltest.PrivateDir(t))
	case "musa":
		return vendorstest.Driver(t, musa.Vendor(), dltest.PrivateDir(t))
	}
	return vendorstest.Management(t, name, dltest.PrivateDir(t))
}

// runCheck runs check with args in an environment scrubbed of flagshim's
// and the fakes' variables, then env added, and returns its stdout lines.
func runCheck(t *testing.T, check string, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(check, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAGOS_") && !strings.HasPrefix(kv, "FAKE_") &&
			!strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") && !strings.HasPrefix(kv, "MUSA_VISIBLE_DEVICES=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "check %s (env %q)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), env, &stdout, &stderr)
	return strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
}
