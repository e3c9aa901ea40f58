package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeNVML is testdata/fake_nvml.c, a libnvidia-ml.so.1 driven by FAKE_NVML_*.
var fakeNVML = presencetest.Lib{
	Src:      "testdata/fake_nvml.c",
	Soname:   "libnvidia-ml.so.1",
	Override: NVMLEnvVar,
	LogEnv:   "FAKE_NVML_LOG",
}

const nvmlInit, nvmlShutdown = "nvmlInit_v2", "nvmlShutdown"

// TestNVMLFakes runs each case against the fake NVML in a child process (a
// loaded soname stays loaded for the life of a process).
func TestNVMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeNVML, Source: NVML, Cases: nvmlCases}).Test(t)
}

var nvmlCases = []presencetest.Case{
	{Name: "two devices", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceNVML, r.Source)
		assert.Equal(t, os.Getenv(NVMLEnvVar), r.Library)
		assert.Equal(t, "550.54.15", r.DriverVersion)
		assert.Equal(t, 12040, r.CUDAVersion)
		assert.Equal(t, 2, r.Total)
		assert.Equal(t, "", r.Visibility)
		require.Len(t, r.Devices, 2)
		for i, d := range r.Devices {
			assert.Equal(t, i, d.Index)
			assert.Equal(t, i, d.SourceIndex)
			assert.Equal(t, "Fake NVIDIA GPU "+string(rune('0'+i)), d.Name)
			assert.Equal(t, "GPU-0000000"+string(rune('0'+i))+"-1111-2222-3333-444444444444", d.UUID)
			assert.Equal(t, uint64(80<<30), d.TotalMemory)
			assert.Equal(t, uint64(79<<30), d.FreeMemory)
			assert.Equal(t, [2]int{9, 0}, [2]int{d.Major, d.Minor})
		}
		assert.Equal(t, "00000000:18:00.0", r.Devices[0].PCIBusID)
		assert.Equal(t, "00000000:19:00.0", r.Devices[1].PCIBusID)
		assert.Equal(t, "NVML sees 2 devices", r.Reason)
		assert.Empty(t, r.Notes)
		require.GreaterOrEqual(t, len(calls), 4)
		assert.Equal(t, []string{nvmlInit, "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2"}, calls[:4])
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "driver not loaded", Env: []string{"FAKE_NVML_INIT_RESULT=9"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "NVML", Func: "nvmlInit_v2", Code: 9, Name: "NVML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "NVML: nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded", e.Error())
		assert.Equal(t, "NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded", e.Detail())
		assert.ErrorIs(t, r.Err, &clib.Error{Library: "NVML", Code: 9}, "an *clib.Error of the same library and code matches")
		assert.Equal(t, "NVML: the NVIDIA kernel driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED): no NVIDIA GPU is usable here", r.Reason)
		assert.Empty(t, r.Devices)
		assert.Equal(t, []string{nvmlInit, "nvmlErrorString"}, calls, "no shutdown after a failed init, no other call")
	}},
	{Name: "no permission", Env: []string{"FAKE_NVML_INIT_RESULT=4"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "NVML_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/nvidia*")
	}},
	{Name: "driver version mismatch", Env: []string{"FAKE_NVML_INIT_RESULT=18"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "NVML_ERROR_LIB_RM_VERSION_MISMATCH")
		assert.Contains(t, r.Reason, "reboot, or reload the nvidia module")
	}},
	{Name: "unknown init code", Env: []string{"FAKE_NVML_INIT_RESULT=77"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Equal(t, "NVML: nvmlInit_v2 returned unknown code (77): Unknown Error", r.Reason)
	}},
	{Name: "zero devices", Env: []string{"FAKE_NVML_COUNT=0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.False(t, r.Available())
		assert.Equal(t, "NVML sees no device", r.Reason)
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "count fails", Env: []string{"FAKE_NVML_COUNT_RESULT=999"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Contains(t, r.Reason, "NVML_ERROR_UNKNOWN (999)")
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	// A driver answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_NVML_COUNT_RAW=4294967295"}, Run: nvmlSmall, Check: nvmlTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_NVML_COUNT_RAW=3000000"}, Run: nvmlSmall, Check: nvmlTooMany(3000000)},
	{Name: "count 4096", Env: []string{"FAKE_NVML_COUNT_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device 2")
		assert.Contains(t, r.Reason, "nvmlDeviceGetHandleByIndex_v2(2)")
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "handle fails", Env: []string{"FAKE_NVML_HANDLE_FAIL=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Equal(t, "NVML: nvmlDeviceGetHandleByIndex_v2(1) returned NVML_ERROR_UNKNOWN (999): Unknown Error", r.Reason)
		assert.Empty(t, r.Devices)
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "name fails", Env: []string{"FAKE_NVML_NAME_RESULT=3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Devices[0].Name)
		assert.Equal(t, "GPU-00000000-1111-2222-3333-444444444444", r.Devices[0].UUID, "the rest is read")
		assert.Contains(t, presencetest.Notes(r), "device 1: NVML: nvmlDeviceGetName returned NVML_ERROR_NOT_SUPPORTED (3): Not Supported")
	}},
	{Name: "visible ordinals", Env: []string{"FAKE_NVML_COUNT=4", "CUDA_VISIBLE_DEVICES=3,1,7,2"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 4, r.Total)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=3,1,7,2", r.Visibility)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{3, 1}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "NVML sees 4 devices, 2 visible through CUDA_VISIBLE_DEVICES=3,1,7,2", r.Reason)
	}},
	{Name: "visible UUID prefix", Env: []string{"FAKE_NVML_UUIDS=GPU-aaaa-1,GPU-bbbb-2", "CUDA_VISIBLE_DEVICES=GPU-bb"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "GPU-bbbb-2", r.Devices[0].UUID)
		assert.Equal(t, 0, r.Devices[0].Index)
	}},
	{Name: "visible empty", Env: []string{"CUDA_VISIBLE_DEVICES="}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=", r.Visibility)
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "visible MIG", Env: []string{"CUDA_VISIBLE_DEVICES=MIG-4e1c"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
		assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
		assert.Equal(t, 2, r.Total)
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_CC", "-DFAKE_NO_CUDA_VERSION", "-DFAKE_NO_PCI"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 0, r.CUDAVersion)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, presence.Device{Index: 0, Name: "Fake NVIDIA GPU 0", UUID: "GPU-00000000-1111-2222-3333-444444444444", TotalMemory: 80 << 30, FreeMemory: 79 << 30}, r.Devices[0])
		assert.Empty(t, r.Notes)
	}},
	{Name: "pre-R319 names", Defines: []string{"-DFAKE_V1_ONLY"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		presencetest.Paired(t, calls, "nvmlInit", nvmlShutdown)
		assert.Contains(t, calls, "nvmlDeviceGetHandleByIndex")
	}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_NAME"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		var me *clib.MissingSymbolError
		require.True(t, errors.As(r.Err, &me))
		assert.Equal(t, [][]string{{"nvmlDeviceGetName"}}, me.Missing)
		assert.Contains(t, r.Reason, "lacks the required symbol nvmlDeviceGetName")
		assert.Contains(t, r.Reason, NVMLEnvVar)
		assert.Empty(t, calls, "nothing is called before every required function is there")
	}},
	{Name: "found by the search", File: "libnvidia-ml-presencefake.so.1", NoOverride: true,
		Run: func(t *testing.T) presence.Report {
			dir := presencetest.LibDir()
			return NVML(presence.NewEnv(presence.WithSearch(func(l *clib.Library) {
				l.Sonames = []string{"libnvidia-ml-presencefake.so.1"}
				l.Dirs = []string{dir}
			})))
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			want := filepath.Join(presencetest.LibDir(), "libnvidia-ml-presencefake.so.1")
			assert.Equal(t, want, r.Library)
			require.Len(t, r.Attempts, 2, "the bare soname, then the folder")
			assert.Equal(t, "libnvidia-ml-presencefake.so.1", r.Attempts[0].Path)
			assert.NotEmpty(t, r.Attempts[0].Error)
			assert.Equal(t, want, r.Attempts[1].Path)
			assert.Empty(t, r.Attempts[1].Error)
			assert.Len(t, r.Devices, 2)
		}},
	{Name: "concurrent calls",
		Run: func(t *testing.T) presence.Report {
			var wg sync.WaitGroup
			reports := make([]presence.Report, 16)
			for i := range reports {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reports[i] = NVML(presence.NewEnv())
				}()
			}
			wg.Wait()
			for _, r := range reports[1:] {
				require.NoError(t, r.Err)
				require.Equal(t, reports[0].Devices, r.Devices)
			}
			return reports[0]
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.Len(t, r.Devices, 2)
			assert.Equal(t, 16, presencetest.Count(calls, nvmlInit))
			assert.Equal(t, 16, presencetest.Count(calls, nvmlShutdown))
		}},
	// No source of the presence tier loads a driver: NVML, CUDA's nodes,
	// and HIP's sources (KFD, render nodes), with a tripwire libcuda first
	// on LD_LIBRARY_PATH. (MTML is drivers/musa's case.)
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := NVML(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			hip.Vendor().Presence(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 2)
			presencetest.NoDriverLoaded(t)
		}},
}

// nvmlSmall is NVML on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func nvmlSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = NVML(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "NVML allocated %d bytes", n)
	return r
}

// nvmlTooMany checks the answer to a count of n devices, above the bound.
func nvmlTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "NVML: nvmlDeviceGetCount_v2 reported ")
		var asked []string
		for _, c := range calls {
			if strings.HasPrefix(c, "nvmlDeviceGet") && c != "nvmlDeviceGetCount_v2" {
				asked = append(asked, c)
			}
		}
		assert.Empty(t, asked, "no device is asked for")
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}
}

func TestNVMLNotFound(t *testing.T) {
	dir := dltest.PrivateDir(t)
	r := NVML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libnvidia-ml-presence-absent.so.1"}
		l.Dirs = []string{dir}
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceNVML, r.Source)
	assert.Equal(t, "libnvidia-ml.so.1 not found (tried libnvidia-ml-presence-absent.so.1); install the driver's management library or set FLAGOS_LIBNVML_PATH=/abs/path/to/libnvidia-ml.so.1", r.Reason)
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, "libnvidia-ml-presence-absent.so.1", r.Attempts[0].Path)
	assert.Contains(t, r.Attempts[0].Error, "not found in LD_LIBRARY_PATH", "the attempt says where the loader's search looked")
	assert.False(t, r.Available())
}

func TestNVMLRelativeOverride(t *testing.T) {
	r := NVML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(NVMLEnvVar, "lib/libnvidia-ml.so.1"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBNVML_PATH="lib/libnvidia-ml.so.1" cannot be used: the path must be absolute`)
}

func TestNVMLOverrideInOpenFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	p := filepath.Join(dir, "libnvidia-ml.so.1")
	require.NoError(t, os.WriteFile(p, []byte("not loaded: the folder is checked first"), 0o644))
	r := NVML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(NVMLEnvVar, p))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, "chmod o-w")
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, p, r.Attempts[0].Path)
}

func TestNVMLReturnNames(t *testing.T) {
	for code, name := range nvmlReturnNames {
		assert.True(t, strings.HasPrefix(name, "NVML_"), name)
		if code == nvmlSuccess {
			assert.Equal(t, "NVML_SUCCESS", name)
		} else {
			assert.True(t, strings.HasPrefix(name, "NVML_ERROR_"), name)
		}
	}
	assert.Equal(t, "NVML_ERROR_NO_PERMISSION", nvmlReturnNames[nvmlNoPermission])
	assert.Equal(t, "NVML_ERROR_DRIVER_NOT_LOADED", nvmlReturnNames[nvmlDriverNotLoaded])
	assert.Equal(t, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", nvmlReturnNames[nvmlRMMismatch])
}

// BenchmarkNVML is one whole presence answer on the fake (two devices):
// open (a dlopen the loader answers from its table after the first), resolve
// the symbols, nvmlInit_v2, enumerate, nvmlShutdown. The fake is loaded into
// the benchmark's own process through an absolute override handed over by
// WithLookupEnv (never the environment), so no test of the process is
// affected: the tests that load a fake do so in children.
func BenchmarkNVML(b *testing.B) {
	p := fakeNVML.Build(b, dltest.PrivateDir(b), "")
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(NVMLEnvVar, p)))
	b.ReportAllocs()
	for b.Loop() {
		if r := NVML(e); r.Err != nil || len(r.Devices) != 2 {
			b.Fatalf("%v: %s", r.Err, r.Reason)
		}
	}
}
