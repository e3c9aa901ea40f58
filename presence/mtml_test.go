package presence

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

const mtmlInit, mtmlShutdown = "mtmlLibraryInit", "mtmlLibraryShutDown"

var mtmlCases = []fakeCase{
	{name: "one device", lib: "mtml", check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceMTML, r.Source)
		assert.Equal(t, os.Getenv(MTMLEnvVar), r.Library)
		assert.Equal(t, "2.7.0", r.DriverVersion)
		assert.Equal(t, 0, r.CUDAVersion)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, Device{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd", PCIBusID: "00000000:3a:00.0",
			TotalMemory: 48 << 30, FreeMemory: 46 << 30}, r.Devices[0])
		assert.Equal(t, "MTML sees 1 device", r.Reason)
		assert.Empty(t, r.Notes)
		paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{name: "driver not loaded", lib: "mtml", env: []string{"FAKE_MTML_INIT_RESULT=1"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrInit)
		assert.Contains(t, r.Reason, "MTML_ERROR_DRIVER_NOT_LOADED")
		assert.Contains(t, r.Reason, "Moore Threads kernel driver is not loaded")
		assert.Equal(t, []string{mtmlInit, "mtmlErrorString"}, calls)
	}},
	{name: "MPC parent not counted", lib: "mtml", env: []string{"FAKE_MTML_COUNT=3", "FAKE_MTML_MPC_PARENT=0"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 2, r.Total)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{1, 2}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Contains(t, notes(r), "device 0 is an MPC parent")
		paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{name: "visible", lib: "mtml", env: []string{"FAKE_MTML_COUNT=3", "FAKE_MTML_UUIDS=1a000000-0,2b000000-1,3c000000-2", "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a"},
		check: func(t *testing.T, r Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a", r.Visibility)
		}},
	{name: "CUDA_VISIBLE_DEVICES ignored", lib: "mtml", env: []string{"FAKE_MTML_COUNT=2", "CUDA_VISIBLE_DEVICES=1"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Visibility)
	}},
	{name: "count fails", lib: "mtml", env: []string{"FAKE_MTML_COUNT_RESULT=2"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrQuery)
		assert.Contains(t, r.Reason, "MTML_ERROR_DRIVER_FAILURE (2)")
		paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{name: "optional functions missing", lib: "mtml", defines: []string{"-DFAKE_NO_MEMORY", "-DFAKE_NO_SYSTEM", "-DFAKE_NO_PCI", "-DFAKE_NO_PROPERTY", "-DFAKE_NO_ERRSTR"},
		env: []string{"FAKE_MTML_MPC_PARENT=0", "FAKE_MTML_COUNT_RESULT=4"},
		check: func(t *testing.T, r Report, calls []string) {
			assert.ErrorIs(t, r.Err, ErrQuery)
			assert.Equal(t, "MTML mtmlLibraryCountDevice: MTML_ERROR_NOT_SUPPORTED (4)", r.Reason, "no mtmlErrorString: no message")
			assert.Equal(t, "", r.DriverVersion)
			paired(t, calls, mtmlInit, mtmlShutdown)
		}},
	{name: "optional functions missing, devices", lib: "mtml", defines: []string{"-DFAKE_NO_MEMORY", "-DFAKE_NO_SYSTEM", "-DFAKE_NO_PCI", "-DFAKE_NO_PROPERTY", "-DFAKE_NO_ERRSTR"},
		env: []string{"FAKE_MTML_MPC_PARENT=0"},
		check: func(t *testing.T, r Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1, "without mtmlDeviceGetProperty no device is known to be a parent")
			assert.Equal(t, Device{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd"}, r.Devices[0])
			assert.Empty(t, r.Notes)
		}},
	{name: "required function missing", lib: "mtml", defines: []string{"-DFAKE_NO_UUID"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrMissingSymbol)
		assert.Contains(t, r.Reason, "lacks mtmlDeviceGetUUID")
		assert.Empty(t, calls)
	}},
}

// otherCases: concurrency, and proof that no source loads libcuda.
var otherCases = []fakeCase{
	{name: "concurrent calls", lib: "nvml",
		run: func(t *testing.T) Report {
			var wg sync.WaitGroup
			reports := make([]Report, 16)
			for i := range reports {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reports[i] = NVML()
				}()
			}
			wg.Wait()
			for _, r := range reports[1:] {
				require.NoError(t, r.Err)
				require.Equal(t, reports[0].Devices, r.Devices)
			}
			return reports[0]
		},
		check: func(t *testing.T, r Report, calls []string) {
			require.Len(t, r.Devices, 2)
			assert.Equal(t, 16, count(calls, "nvmlInit_v2"))
			assert.Equal(t, 16, count(calls, "nvmlShutdown"))
		}},
	{name: "no driver is loaded", lib: "nvml",
		setup: func(t *testing.T) []string {
			dir := filepath.Join(dltest.PrivateDir(t), "cuda")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			dltest.BuildLib(t, filepath.Join(dir, "libcuda.so.1"), "libcuda.so.1", []string{dltest.Abs(t, "testdata/tripwire_libcuda.c")})
			return []string{"LD_LIBRARY_PATH=" + dir, "FAKE_TRIPWIRE_LOG=" + filepath.Join(dltest.PrivateDir(t), "tripwire.log")}
		},
		run: func(t *testing.T) Report {
			r := NVML()
			require.NoError(t, r.Err)
			for _, v := range []Vendor{NVIDIA, MooreThreads, AMD} {
				Nodes(v)
			}
			KFD()
			MTML()
			return r
		},
		check: func(t *testing.T, r Report, calls []string) {
			log := os.Getenv("FAKE_TRIPWIRE_LOG")
			_, err := os.Stat(log)
			assert.True(t, os.IsNotExist(err), "the tripwire libcuda was loaded: %v", err)
			maps, err := os.ReadFile("/proc/self/maps")
			require.NoError(t, err)
			assert.NotContains(t, string(maps), "libcuda", "libcuda is mapped")
			assert.NotContains(t, string(maps), "libmusa", "libmusa is mapped")
			// The control: loading libcuda is seen.
			_, err = purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
			require.NoError(t, err)
			b, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, "loaded", strings.TrimSpace(string(b)))
		}},
}
