package mlu

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeCNDev is testdata/fake_cndev.c, a libcndev.so driven by FAKE_CNDEV_*.
var fakeCNDev = presencetest.Lib{
	Src:      "testdata/fake_cndev.c",
	Soname:   "libcndev.so",
	Override: CNDevEnvVar,
	LogEnv:   "FAKE_CNDEV_LOG",
}

const cndevInit, cndevRelease = "cndevInit", "cndevRelease"

// TestCNDevLayouts: the Go structs have cndev.h's sizes and offsets on LP64
// (the fake checks the C side with _Static_assert).
func TestCNDevLayouts(t *testing.T) {
	assert.Equal(t, uintptr(8), unsafe.Sizeof(cndevCardInfo{}))
	assert.Equal(t, uintptr(56), unsafe.Sizeof(cndevUUID{}))
	assert.Equal(t, uintptr(4), unsafe.Offsetof(cndevUUID{}.uuid))
	assert.Equal(t, uintptr(176), unsafe.Sizeof(cndevMemoryInfoV2{}))
	assert.Equal(t, uintptr(64), unsafe.Sizeof(cndevPCIeInfoV2{}))
	assert.Equal(t, uintptr(12), unsafe.Offsetof(cndevPCIeInfoV2{}.domain))
	assert.Equal(t, uintptr(24), unsafe.Offsetof(cndevPCIeInfoV2{}.function))
}

// TestCNDevFakes runs each case against the fake CNDev in a child process
// (a loaded soname stays loaded for the life of a process).
func TestCNDevFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeCNDev, Source: CNDev, Cases: cndevCases}).Test(t)
}

var cndevCases = []presencetest.Case{
	{Name: "one device", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceCNDev, r.Source)
		assert.Equal(t, os.Getenv(CNDevEnvVar), r.Library)
		assert.Equal(t, "6.2.10", r.DriverVersion)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, presence.Device{Name: "MLU590", UUID: "MLU-00000000-aaaa-bbbb-cccc-dddddddddddd", PCIBusID: "0000:3a:00.0",
			TotalMemory: 80 << 30, FreeMemory: 78 << 30}, r.Devices[0])
		assert.Equal(t, "CNDev sees 1 device", r.Reason)
		assert.Empty(t, r.Notes)
		presencetest.Paired(t, calls, cndevInit, cndevRelease)
	}},
	{Name: "no driver", Env: []string{"FAKE_CNDEV_INIT_RESULT=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "CNDev", Func: "cndevInit", Code: 1, Name: "CNDEV_ERROR_NO_DRIVER", Message: "No Driver"}, e)
		assert.Equal(t, "CNDev: cndevInit returned CNDEV_ERROR_NO_DRIVER (1): No Driver", e.Error())
		assert.Contains(t, r.Reason, "the Cambricon MLU driver is not loaded")
		assert.Equal(t, []string{cndevInit, "cndevGetErrorString"}, calls, "nothing after a failed init, not even cndevRelease")
	}},
	{Name: "no devices", Env: []string{"FAKE_CNDEV_INIT_RESULT=12"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "CNDEV_ERROR_NO_DEVICES")
		assert.Contains(t, r.Reason, "/dev/cambricon_dev*")
	}},
	{Name: "no permission", Env: []string{"FAKE_CNDEV_INIT_RESULT=13"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "CNDEV_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/cambricon_ctl")
	}},
	{Name: "visible", Env: []string{"FAKE_CNDEV_COUNT=4", "MLU_VISIBLE_DEVICES=3,1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 4, r.Total)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{3, 1}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, "0000:3d:00.0", r.Devices[0].PCIBusID)
			assert.Equal(t, "MLU_VISIBLE_DEVICES=3,1", r.Visibility)
			assert.Equal(t, "CNDev sees 4 devices, 2 visible through MLU_VISIBLE_DEVICES=3,1", r.Reason)
		}},
	{Name: "visible empty hides all", Env: []string{"FAKE_CNDEV_COUNT=2", "MLU_VISIBLE_DEVICES="},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 2, r.Total)
			assert.Empty(t, r.Devices)
			assert.False(t, r.Available())
		}},
	{Name: "CUDA_VISIBLE_DEVICES ignored", Env: []string{"FAKE_CNDEV_COUNT=2", "CUDA_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Visibility)
	}},
	{Name: "count fails", Env: []string{"FAKE_CNDEV_COUNT_RESULT=7"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Contains(t, r.Reason, "CNDEV_ERROR_UNKNOWN (7)")
		presencetest.Paired(t, calls, cndevInit, cndevRelease)
	}},
	{Name: "uuid fails: noted", Env: []string{"FAKE_CNDEV_UUID_RESULT=10"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Empty(t, r.Devices[0].UUID)
		assert.Equal(t, "MLU590", r.Devices[0].Name)
		assert.Contains(t, presencetest.Notes(r), "device 0: CNDev: cndevGetUUID returned CNDEV_ERROR_NOT_SUPPORTED (10)")
	}},
	// A driver answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_CNDEV_COUNT_RAW=4294967295"}, Run: cndevSmall, Check: cndevTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_CNDEV_COUNT_RAW=3000000"}, Run: cndevSmall, Check: cndevTooMany(3000000)},
	{Name: "count 4096", Env: []string{"FAKE_CNDEV_COUNT_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device 1")
		assert.Contains(t, r.Reason, "cndevGetDeviceHandleByIndex(1)")
		presencetest.Paired(t, calls, cndevInit, cndevRelease)
	}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_NAME", "-DFAKE_NO_UUID", "-DFAKE_NO_MEMORY", "-DFAKE_NO_PCI", "-DFAKE_NO_VERSION", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_CNDEV_COUNT=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, presence.Device{Index: 1, SourceIndex: 1}, r.Devices[1], "what CNDev cannot say stays empty")
			assert.Equal(t, "", r.DriverVersion)
			assert.Empty(t, r.Notes)
			presencetest.Paired(t, calls, cndevInit, cndevRelease)
		}},
	{Name: "optional functions missing, errors", Defines: []string{"-DFAKE_NO_ERRSTR"}, Env: []string{"FAKE_CNDEV_COUNT_RESULT=10"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, "CNDev: cndevGetDeviceCount returned CNDEV_ERROR_NOT_SUPPORTED (10)", r.Reason, "no cndevGetErrorString: no message")
		}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_HANDLE"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "lacks the required symbol cndevGetDeviceHandleByIndex")
		assert.Contains(t, r.Reason, CNDevEnvVar)
		assert.Empty(t, calls)
	}},
	// No source of the MLU's presence tier loads a driver: CNDev and the
	// nodes, with a tripwire libcuda first on LD_LIBRARY_PATH.
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := CNDev(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 1)
			presencetest.NoDriverLoaded(t)
		}},
}

// cndevSmall is CNDev on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func cndevSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = CNDev(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "CNDev allocated %d bytes", n)
	return r
}

// cndevTooMany checks the answer to a count of n devices, above the bound.
func cndevTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "CNDev: cndevGetDeviceCount reported ")
		for _, c := range calls {
			assert.NotContains(t, []string{"cndevGetDeviceHandleByIndex", "cndevGetUUID", "cndevGetCardNameStringByDevId"}, c, "no device is asked for")
		}
		presencetest.Paired(t, calls, cndevInit, cndevRelease)
	}
}

func TestCNDevNotFound(t *testing.T) {
	r := CNDev(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libcndev-presence-absent.so"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceCNDev, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libcndev.so not found (tried libcndev-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBCNDEV_PATH=/abs/path/to/libcndev.so")
}

func TestCNDevRelativeOverride(t *testing.T) {
	r := CNDev(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(CNDevEnvVar, "libcndev.so"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBCNDEV_PATH="libcndev.so" cannot be used: the path must be absolute`)
}
