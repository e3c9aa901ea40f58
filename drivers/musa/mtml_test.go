package musa

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeMTML is testdata/fake_mtml.c, a libmtml.so driven by FAKE_MTML_*.
var fakeMTML = presencetest.Lib{
	Src:      "testdata/fake_mtml.c",
	Soname:   "libmtml.so",
	Override: MTMLEnvVar,
	LogEnv:   "FAKE_MTML_LOG",
}

const mtmlInit, mtmlShutdown = "mtmlLibraryInit", "mtmlLibraryShutDown"

// TestMTMLFakes runs each case against the fake MTML in a child process (a
// loaded soname stays loaded for the life of a process).
func TestMTMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeMTML, Source: MTML, Cases: mtmlCases}).Test(t)
}

var mtmlCases = []presencetest.Case{
	{Name: "one device", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceMTML, r.Source)
		assert.Equal(t, os.Getenv(MTMLEnvVar), r.Library)
		assert.Equal(t, "2.7.0", r.DriverVersion)
		assert.Equal(t, 0, r.CUDAVersion)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, presence.Device{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd", PCIBusID: "00000000:3a:00.0",
			TotalMemory: 48 << 30, FreeMemory: 46 << 30}, r.Devices[0])
		assert.Equal(t, "MTML sees 1 device", r.Reason)
		assert.Empty(t, r.Notes)
		presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{Name: "driver not loaded", Env: []string{"FAKE_MTML_INIT_RESULT=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "MTML", Func: "mtmlLibraryInit", Code: 1, Name: "MTML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "MTML: mtmlLibraryInit returned MTML_ERROR_DRIVER_NOT_LOADED (1): Driver Not Loaded", e.Error())
		assert.Contains(t, r.Reason, "MTML_ERROR_DRIVER_NOT_LOADED")
		assert.Contains(t, r.Reason, "Moore Threads kernel driver is not loaded")
		assert.Equal(t, []string{mtmlInit, "mtmlErrorString"}, calls)
	}},
	{Name: "no permission", Env: []string{"FAKE_MTML_INIT_RESULT=5"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "MTML_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/mtgpu.*")
	}},
	{Name: "MPC parent not counted", Env: []string{"FAKE_MTML_COUNT=3", "FAKE_MTML_MPC_PARENT=0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 2, r.Total)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{1, 2}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Contains(t, presencetest.Notes(r), "device 0 is an MPC parent")
		presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{Name: "visible", Env: []string{"FAKE_MTML_COUNT=3", "FAKE_MTML_UUIDS=1a000000-0,2b000000-1,3c000000-2", "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a", r.Visibility)
		}},
	{Name: "CUDA_VISIBLE_DEVICES ignored", Env: []string{"FAKE_MTML_COUNT=2", "CUDA_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Visibility)
	}},
	{Name: "count fails", Env: []string{"FAKE_MTML_COUNT_RESULT=2"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Contains(t, r.Reason, "MTML_ERROR_DRIVER_FAILURE (2)")
		presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	// A driver answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_MTML_COUNT_RAW=4294967295"}, Run: mtmlSmall, Check: mtmlTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_MTML_COUNT_RAW=3000000"}, Run: mtmlSmall, Check: mtmlTooMany(3000000)},
	{Name: "count 4096", Env: []string{"FAKE_MTML_COUNT_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device 1")
		assert.Contains(t, r.Reason, "mtmlLibraryInitDeviceByIndex(1)")
		presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
	}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_MEMORY", "-DFAKE_NO_SYSTEM", "-DFAKE_NO_PCI", "-DFAKE_NO_PROPERTY", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_MTML_MPC_PARENT=0", "FAKE_MTML_COUNT_RESULT=4"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, "MTML: mtmlLibraryCountDevice returned MTML_ERROR_NOT_SUPPORTED (4)", r.Reason, "no mtmlErrorString: no message")
			assert.Equal(t, "", r.DriverVersion)
			presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
		}},
	{Name: "optional functions missing, devices", Defines: []string{"-DFAKE_NO_MEMORY", "-DFAKE_NO_SYSTEM", "-DFAKE_NO_PCI", "-DFAKE_NO_PROPERTY", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_MTML_MPC_PARENT=0"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1, "without mtmlDeviceGetProperty no device is known to be a parent")
			assert.Equal(t, presence.Device{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd"}, r.Devices[0])
			assert.Empty(t, r.Notes)
		}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_UUID"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "lacks the required symbol mtmlDeviceGetUUID")
		assert.Contains(t, r.Reason, MTMLEnvVar)
		assert.Empty(t, calls)
	}},
	// No source of the presence tier loads a driver: MTML, MUSA's nodes,
	// and HIP's sources, with a tripwire libcuda first on LD_LIBRARY_PATH.
	// (NVML is drivers/cuda's case.)
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := MTML(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			hip.Vendor().Presence(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 1)
			presencetest.NoDriverLoaded(t)
		}},
}

// mtmlSmall is MTML on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func mtmlSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = MTML(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "MTML allocated %d bytes", n)
	return r
}

// mtmlTooMany checks the answer to a count of n devices, above the bound.
func mtmlTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "MTML: mtmlLibraryCountDevice reported ")
		var asked []string
		for _, c := range calls {
			if strings.HasPrefix(c, "mtmlDevice") || c == "mtmlLibraryInitDeviceByIndex" {
				asked = append(asked, c)
			}
		}
		assert.Empty(t, asked, "no device is asked for")
		presencetest.Paired(t, calls, mtmlInit, mtmlShutdown)
	}
}

func TestMTMLNotFound(t *testing.T) {
	r := MTML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libmtml-presence-absent.so"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceMTML, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libmtml.so not found (tried libmtml-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBMTML_PATH=/abs/path/to/libmtml.so")
}

func TestMTMLRelativeOverride(t *testing.T) {
	r := MTML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(MTMLEnvVar, "libmtml.so"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBMTML_PATH="libmtml.so" cannot be used: the path must be absolute`)
}
