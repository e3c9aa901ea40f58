package presence

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// withSpec replaces the library search, so that a machine's real library
// cannot answer for a fake (tests only).
func withSpec(f func(*specEdit)) Option { return func(c *config) { c.spec = f } }

var nvmlCases = []fakeCase{
	{name: "two devices", lib: "nvml", check: func(t *testing.T, r Report, calls []string) {
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
		assert.Equal(t, []string{"nvmlInit_v2", "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2"}, calls[:4])
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "driver not loaded", lib: "nvml", env: []string{"FAKE_NVML_INIT_RESULT=9"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrInit)
		var e *Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &Error{Library: "NVML", Func: "nvmlInit_v2", Code: 9, Name: "NVML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "NVML nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded", e.Error())
		assert.Contains(t, r.Reason, "NVIDIA kernel driver is not loaded")
		assert.Empty(t, r.Devices)
		assert.Equal(t, []string{"nvmlInit_v2", "nvmlErrorString"}, calls, "no shutdown after a failed init, no other call")
	}},
	{name: "no permission", lib: "nvml", env: []string{"FAKE_NVML_INIT_RESULT=4"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrInit)
		assert.Contains(t, r.Reason, "NVML_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/nvidia*")
	}},
	{name: "unknown init code", lib: "nvml", env: []string{"FAKE_NVML_INIT_RESULT=77"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrInit)
		assert.Equal(t, "NVML nvmlInit_v2: unknown code (77): Unknown Error", r.Reason)
	}},
	{name: "zero devices", lib: "nvml", env: []string{"FAKE_NVML_COUNT=0"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.False(t, r.Available())
		assert.Equal(t, "NVML sees no device", r.Reason)
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "count fails", lib: "nvml", env: []string{"FAKE_NVML_COUNT_RESULT=999"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrQuery)
		assert.Contains(t, r.Reason, "NVML_ERROR_UNKNOWN (999)")
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "handle fails", lib: "nvml", env: []string{"FAKE_NVML_HANDLE_FAIL=1"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrQuery)
		assert.Contains(t, r.Reason, "nvmlDeviceGetHandleByIndex(1)")
		assert.Empty(t, r.Devices)
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "name fails", lib: "nvml", env: []string{"FAKE_NVML_NAME_RESULT=3"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Devices[0].Name)
		assert.Contains(t, notes(r), "device 1: NVML nvmlDeviceGetName: NVML_ERROR_NOT_SUPPORTED (3): Not Supported")
	}},
	{name: "visible ordinals", lib: "nvml", env: []string{"FAKE_NVML_COUNT=4", "CUDA_VISIBLE_DEVICES=3,1,7,2"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 4, r.Total)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=3,1,7,2", r.Visibility)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{3, 1}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "NVML sees 4 devices, 2 visible through CUDA_VISIBLE_DEVICES=3,1,7,2", r.Reason)
	}},
	{name: "visible UUID prefix", lib: "nvml", env: []string{"FAKE_NVML_UUIDS=GPU-aaaa-1,GPU-bbbb-2", "CUDA_VISIBLE_DEVICES=GPU-bb"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "GPU-bbbb-2", r.Devices[0].UUID)
		assert.Equal(t, 0, r.Devices[0].Index)
	}},
	{name: "visible empty", lib: "nvml", env: []string{"CUDA_VISIBLE_DEVICES="}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=", r.Visibility)
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "visible MIG", lib: "nvml", env: []string{"CUDA_VISIBLE_DEVICES=MIG-4e1c"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrUndecidable)
		assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
		assert.Equal(t, 2, r.Total)
		paired(t, calls, "nvmlInit_v2", "nvmlShutdown")
	}},
	{name: "optional functions missing", lib: "nvml", defines: []string{"-DFAKE_NO_CC", "-DFAKE_NO_CUDA_VERSION", "-DFAKE_NO_PCI"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 0, r.CUDAVersion)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, Device{Index: 0, Name: "Fake NVIDIA GPU 0", UUID: "GPU-00000000-1111-2222-3333-444444444444", TotalMemory: 80 << 30, FreeMemory: 79 << 30}, r.Devices[0])
		assert.Empty(t, r.Notes)
	}},
	{name: "pre-R319 names", lib: "nvml", defines: []string{"-DFAKE_V1_ONLY"}, check: func(t *testing.T, r Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		paired(t, calls, "nvmlInit", "nvmlShutdown")
		assert.Contains(t, calls, "nvmlDeviceGetHandleByIndex")
	}},
	{name: "required function missing", lib: "nvml", defines: []string{"-DFAKE_NO_NAME"}, check: func(t *testing.T, r Report, calls []string) {
		assert.ErrorIs(t, r.Err, ErrMissingSymbol)
		assert.Contains(t, r.Reason, "lacks nvmlDeviceGetName")
		assert.Contains(t, r.Reason, NVMLEnvVar)
		assert.Empty(t, calls, "nothing is called before every required function is there")
	}},
	{name: "found by the search", lib: "nvml", file: "libnvidia-ml-presencefake.so.1", noOverride: true,
		run: func(t *testing.T) Report {
			dir := os.Getenv(libDirEnv)
			return NVML(withSpec(func(s *specEdit) {
				s.Sonames = []string{"libnvidia-ml-presencefake.so.1"}
				s.Dirs = []string{dir}
			}))
		},
		check: func(t *testing.T, r Report, calls []string) {
			require.NoError(t, r.Err)
			want := filepath.Join(os.Getenv(libDirEnv), "libnvidia-ml-presencefake.so.1")
			assert.Equal(t, want, r.Library)
			require.Len(t, r.Attempts, 2, "the bare soname, then the folder")
			assert.Equal(t, "libnvidia-ml-presencefake.so.1", r.Attempts[0].Path)
			assert.NotEmpty(t, r.Attempts[0].Error)
			assert.Equal(t, want, r.Attempts[1].Path)
			assert.Empty(t, r.Attempts[1].Error)
			assert.Len(t, r.Devices, 2)
		}},
}

func TestNVMLNotFound(t *testing.T) {
	dir := dltest.PrivateDir(t)
	r := NVML(WithLookupEnv(env()), withSpec(func(s *specEdit) {
		s.Sonames = []string{"libnvidia-ml-presence-absent.so.1"}
		s.Dirs = []string{dir}
	}))
	assert.ErrorIs(t, r.Err, ErrNoLibrary)
	assert.Equal(t, SourceNVML, r.Source)
	assert.Equal(t, "libnvidia-ml.so.1 not found (tried libnvidia-ml-presence-absent.so.1); install the driver's management library or set FLAGOS_LIBNVML_PATH=/abs/path/to/libnvidia-ml.so.1", r.Reason)
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, "libnvidia-ml-presence-absent.so.1", r.Attempts[0].Path)
	assert.Contains(t, r.Attempts[0].Error, "not found in LD_LIBRARY_PATH", "the attempt says where the loader's search looked")
	assert.False(t, r.Available())
}

func TestNVMLRelativeOverride(t *testing.T) {
	r := NVML(WithLookupEnv(env(NVMLEnvVar, "lib/libnvidia-ml.so.1")))
	assert.ErrorIs(t, r.Err, ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBNVML_PATH="lib/libnvidia-ml.so.1" cannot be used: the path must be absolute`)
}

func TestNVMLOverrideInOpenFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	p := filepath.Join(dir, "libnvidia-ml.so.1")
	require.NoError(t, os.WriteFile(p, []byte("not loaded: the folder is checked first"), 0o644))
	r := NVML(WithLookupEnv(env(NVMLEnvVar, p)))
	assert.ErrorIs(t, r.Err, ErrBadOverride)
	assert.Contains(t, r.Reason, "chmod o-w")
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, p, r.Attempts[0].Path)
}

func TestMTMLNotFound(t *testing.T) {
	r := MTML(WithLookupEnv(env()), withSpec(func(s *specEdit) {
		s.Sonames = []string{"libmtml-presence-absent.so"}
		s.Dirs = nil
	}))
	assert.ErrorIs(t, r.Err, ErrNoLibrary)
	assert.True(t, strings.HasPrefix(r.Reason, "libmtml.so not found (tried libmtml-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBMTML_PATH=/abs/path/to/libmtml.so")
}
