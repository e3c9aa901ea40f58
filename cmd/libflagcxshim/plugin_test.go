package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/vendors"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
)

// TestPluginOnFakes builds the plugin with -buildmode=c-shared and a C
// program written from FlagCX's description of the ABI
// (testdata/plugin_test.c), which loads it as FlagCX does, checks the
// struct, drives every field on the fake CUDA, MUSA and HIP drivers, closes
// it and loads it again.
func TestPluginOnFakes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("the plugin's C test is written for Linux's dynamic loader, not %s", runtime.GOOS)
	}
	cc := dltest.CC()
	if cc == "" {
		t.Skip("-buildmode=c-shared needs cgo, and `go env CC` names no installed C compiler")
	}
	lib := dltest.GoBuild(t, ".", "libflagcxshim.so", dltest.CSharedFlags...)
	prog := filepath.Join(dltest.PrivateDir(t), "plugin_test")
	args := append(strings.Fields(cc)[1:], "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-o", prog,
		dltest.Abs(t, "testdata/plugin_test.c"), "-ldl", "-pthread")
	out, err := exec.Command(strings.Fields(cc)[0], args...).CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, c := range []struct {
		name, vendor string
		names        string // FAKE_DEVICE_NAMES
		underROCm    bool   // the fake lives under a /rocm/ folder (AMD's runtime, by its path)
		want         string // getVendor
		dma          string
		direct       string // "1": the hot fields are direct calls (they never enter Go)
		off          bool   // FLAGOS_FLAGCX_DIRECT=0
	}{
		{name: "cuda NVIDIA", vendor: "cuda", names: "NVIDIA H100 80GB HBM3,NVIDIA H100 80GB HBM3", want: "NVIDIA", dma: "1", direct: "1"},
		{name: "cuda Iluvatar", vendor: "cuda", names: "Iluvatar BI-V150,Iluvatar BI-V150", want: "ILUVATAR_COREX", dma: "1", direct: "1"},
		{name: "cuda unknown maker", vendor: "cuda", want: "UNKNOWN", dma: "1", direct: "1"},
		{name: "cuda direct calls off", vendor: "cuda", want: "UNKNOWN", dma: "1", direct: "0", off: true},
		{name: "musa", vendor: "musa", want: "MUSA", dma: "0", direct: "1"},
		{name: "hip AMD", vendor: "hip", underROCm: true, want: "AMD", dma: "1", direct: "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := dltest.PrivateDir(t)
			if c.underROCm {
				dir = filepath.Join(dir, "rocm", "lib")
				require.NoError(t, os.MkdirAll(dir, 0o755))
			}
			fake := buildFake(t, c.vendor, dir)
			missing := filepath.Join(dltest.PrivateDir(t), "none")
			env := []string{"PATH=" + os.Getenv("PATH"), "FLAGOS_BACKEND=" + c.vendor, "FAKE_QUERY_BUSY=1", "FLAGOS_PROBE=exact",
				"FLAGOS_LIBCUDA_PATH=" + filepath.Join(missing, "libcuda.so.1"),
				"FLAGOS_LIBMUSA_PATH=" + filepath.Join(missing, "libmusa.so.1"),
				"FLAGOS_LIBHIP_PATH=" + filepath.Join(missing, "libamdhip64.so.6"),
			}
			switch c.vendor {
			case "cuda":
				env[4] = "FLAGOS_LIBCUDA_PATH=" + fake
			case "musa":
				env[5] = "FLAGOS_LIBMUSA_PATH=" + fake
			case "hip":
				env[6] = "FLAGOS_LIBHIP_PATH=" + fake
			}
			if c.names != "" {
				env = append(env, "FAKE_DEVICE_NAMES="+c.names)
			}
			if c.off {
				env = append(env, directEnv+"=0")
			}
			cmd := exec.Command(prog, lib, "flagshim:"+c.vendor, c.want, c.dma, c.direct)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			require.NoError(t, err, "the C test failed: %s", out)
			assert.Contains(t, string(out), "ok forked child", "a forked child gets its answers without entering Go")
			assert.Contains(t, string(out), "ok reloaded")
		})
	}
}

// TestDecideAtLoad: the load-time name follows FLAGOS_BACKEND, and under
// auto the first vendor of the auto order whose library is found (here: a
// fake MUSA library, before CUDA's).
func TestDecideAtLoad(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	assert.Equal(t, "flagshim:hip", decideAtLoad(env(map[string]string{"FLAGOS_BACKEND": "HIP"})))
	assert.Equal(t, "flagshim:invalid", decideAtLoad(env(map[string]string{"FLAGOS_BACKEND": "no such"})))
	if dltest.CC() == "" {
		t.Skip("no C compiler for the fake libraries")
	}
	dir := dltest.PrivateDir(t)
	musa := buildFake(t, "musa", dir)
	none := filepath.Join(dir, "none")
	vars := map[string]string{"FLAGOS_LIBMUSA_PATH": musa, "FLAGOS_LIBCUDA_PATH": filepath.Join(none, "libcuda.so.1")}
	for _, k := range []string{"FLAGOS_LIBHIP_PATH", "FLAGOS_LIBASCENDCL_PATH", "FLAGOS_LIBMCRUNTIME_PATH", "FLAGOS_LIBTOPSRT_PATH",
		"FLAGOS_LIBXPURT_PATH", "FLAGOS_LIBCNDRV_PATH"} {
		vars[k] = filepath.Join(none, "lib.so")
	}
	assert.Equal(t, "flagshim:musa", decideAtLoad(env(vars)))
	vars["FLAGOS_LIBMUSA_PATH"] = filepath.Join(none, "libmusa.so.1")
	assert.Equal(t, "flagshim:none", decideAtLoad(env(vars)), "nothing found")
}

// buildFake builds the registered vendor name's fake driver into dir.
func buildFake(t testing.TB, name, dir string) string {
	t.Helper()
	v, ok := vendors.Lookup(device.Type(name))
	require.True(t, ok, "no vendor %s", name)
	return vendorstest.Driver(t, v, dir)
}

func TestParseBusID(t *testing.T) {
	for _, c := range []struct {
		id               string
		domain, bus, dev uint64
		ok               bool
	}{
		{"00000000:18:00.0", 0, 0x18, 0, true},
		{"0000:c1:1f.3", 0, 0xc1, 0x1f, true},
		{"0001:3B:00.0", 1, 0x3b, 0, true},
		{"18:00.0", 0, 0, 0, false},
		{"", 0, 0, 0, false},
		{"zz:18:00.0", 0, 0, 0, false},
		{"0000:100:00.0", 0, 0, 0, false},
	} {
		d, b, v, ok := parseBusID(c.id)
		assert.Equal(t, c.ok, ok, c.id)
		if c.ok {
			assert.Equal(t, [3]uint64{c.domain, c.bus, c.dev}, [3]uint64{d, b, v}, c.id)
		}
	}
}

func FuzzParseBusID(f *testing.F) {
	for _, s := range []string{"00000000:18:00.0", "0000:c1:1f.3", "::.", "a:b:c.d.e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, b, v, ok := parseBusID(s)
		if ok && (b > 0xff || v > 0xff || d > 0xffffffff) {
			t.Fatalf("%q: out of range %x %x %x", s, d, b, v)
		}
	})
}

func TestVendorVocabulary(t *testing.T) {
	for maker, want := range flagcxVendors {
		assert.Regexp(t, `^[A-Z_]+$`, want, maker)
		if maker != "NVIDIA" {
			assert.NotEqual(t, "NVIDIA", want, "%s: only NVIDIA's runtime is NVIDIA", maker)
		}
	}
	assert.Equal(t, "NVIDIA", flagcxVendors["NVIDIA"])
}

// BenchmarkPluginFields times the plugin's hot fields on the fake CUDA
// driver (testdata/plugin_bench.c, a C loop over the fields), with the
// direct calls on and off (FLAGOS_FLAGCX_DIRECT=0: every field enters Go),
// reporting each case's nanoseconds per operation.
func BenchmarkPluginFields(b *testing.B) {
	cc := dltest.CC()
	if runtime.GOOS != "linux" || cc == "" {
		b.Skip("needs Linux and a C compiler for -buildmode=c-shared")
	}
	lib := dltest.GoBuild(b, ".", "libflagcxshim.so", dltest.CSharedFlags...)
	prog := filepath.Join(dltest.PrivateDir(b), "plugin_bench")
	args := append(strings.Fields(cc)[1:], "-std=c11", "-D_GNU_SOURCE", "-O2", "-Wall", "-Werror", "-I", dltest.Abs(b, "."), "-o", prog,
		dltest.Abs(b, "testdata/plugin_bench.c"), "-ldl")
	out, err := exec.Command(strings.Fields(cc)[0], args...).CombinedOutput()
	require.NoError(b, err, "%s", out)
	fake := buildFake(b, "cuda", dltest.PrivateDir(b))
	for _, mode := range []struct{ name, env string }{{"direct", "1"}, {"go", "0"}} {
		b.Run(mode.name, func(b *testing.B) {
			cmd := exec.Command(prog, lib, strconv.Itoa(max(b.N, 1000)))
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FLAGOS_BACKEND=cuda", "FLAGOS_PROBE=exact", "FLAGOS_LIBCUDA_PATH=" + fake, directEnv + "=" + mode.env}
			out, err := cmd.CombinedOutput()
			require.NoError(b, err, "%s", out)
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.Fields(line)
				require.Len(b, f, 2, "%q", line)
				ns, err := strconv.ParseFloat(f[1], 64)
				require.NoError(b, err)
				b.ReportMetric(ns, f[0]+"-ns/op")
			}
		})
	}
}
