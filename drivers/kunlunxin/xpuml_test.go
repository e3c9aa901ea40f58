package kunlunxin

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeXPUML is testdata/fake_xpuml.c, a libxpuml.so.1 driven by FAKE_XPUML_*.
var fakeXPUML = presencetest.Lib{
	Src:      "testdata/fake_xpuml.c",
	Soname:   "libxpuml.so.1",
	Override: XPUMLEnvVar,
	LogEnv:   "FAKE_XPUML_LOG",
}

const xpumlInit, xpumlShutdown = "xpumlInit", "xpumlShutdown"

// TestXPUMLFakes runs each case against the fake XPUML in a child process
// (a loaded soname stays loaded for the life of a process).
func TestXPUMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeXPUML, Source: XPUML, Cases: xpumlCases}).Test(t)
}

// r300 is the fake's device i with its defaults.
func r300(i int) presence.Device {
	return presence.Device{Index: i, SourceIndex: i, Name: "R300", PCIBusID: []string{"00000000:4F:00.0", "00000000:50:00.0", "00000000:51:00.0"}[i],
		TotalMemory: 32 << 30, FreeMemory: 30 << 30, Major: 2}
}

var xpumlCases = []presencetest.Case{
	{Name: "two devices", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceXPUML, r.Source)
		assert.Equal(t, os.Getenv(XPUMLEnvVar), r.Library)
		assert.Equal(t, "4.0.25", r.DriverVersion)
		assert.Equal(t, 2, r.Total)
		assert.Equal(t, []presence.Device{r300(0), r300(1)}, r.Devices, "the global memory, not L3; no UUID")
		assert.Equal(t, "XPUML sees 2 devices", r.Reason)
		assert.Empty(t, r.Notes)
		require.GreaterOrEqual(t, len(calls), 3)
		assert.Equal(t, []string{xpumlInit, "xpumlSystemGetDriverVersion", "xpumlDeviceGetCount"}, calls[:3])
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}},
	{Name: "names from the model", Defines: []string{"-DFAKE_NO_NAME"}, Env: []string{"FAKE_XPUML_MODEL=9"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, "RG800", r.Devices[0].Name, "the 2022-07 XPUML has no xpumlDeviceGetName: the attributes' model names it")
		assert.Equal(t, 2, r.Devices[0].Major)
	}},
	{Name: "GetName wins", Env: []string{"FAKE_XPUML_NAMES=KUNLUNXIN P800,KUNLUNXIN P800", "FAKE_XPUML_MODEL=300"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, "KUNLUNXIN P800", r.Devices[1].Name)
		assert.Equal(t, 3, r.Devices[1].Major)
	}},
	{Name: "driver not loaded", Env: []string{"FAKE_XPUML_INIT_RESULT=9"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "XPUML", Func: "xpumlInit", Code: 9, Name: "XPUML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "XPUML: the Kunlunxin kernel driver (kunlun) is not loaded (XPUML_ERROR_DRIVER_NOT_LOADED): no Kunlunxin XPU is usable here", r.Reason)
		assert.Equal(t, []string{xpumlInit, "xpumlErrorString"}, calls, "no shutdown after a failed init, no other call")
	}},
	{Name: "no permission", Env: []string{"FAKE_XPUML_INIT_RESULT=4"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "XPUML_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/xpuctrl")
	}},
	{Name: "version mismatch", Env: []string{"FAKE_XPUML_INIT_RESULT=18"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "reload the kunlun module")
	}},
	{Name: "zero devices", Env: []string{"FAKE_XPUML_COUNT=0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.Equal(t, "XPUML sees no device", r.Reason)
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}},
	{Name: "count fails", Env: []string{"FAKE_XPUML_COUNT_RESULT=999"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Contains(t, r.Reason, "XPUML_ERROR_UNKNOWN (999)")
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}},
	// A library answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_XPUML_COUNT_RAW=4294967295"}, Run: xpumlSmall, Check: xpumlTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_XPUML_COUNT_RAW=3000000"}, Run: xpumlSmall, Check: xpumlTooMany(3000000)},
	{Name: "count 4096", Env: []string{"FAKE_XPUML_COUNT_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device 2")
		assert.Contains(t, r.Reason, "xpumlDeviceGetHandleByIndex(2)")
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}},
	{Name: "handle fails", Env: []string{"FAKE_XPUML_HANDLE_FAIL=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Equal(t, "XPUML: xpumlDeviceGetHandleByIndex(1) returned XPUML_ERROR_UNKNOWN (999): Unknown Error", r.Reason)
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}},
	{Name: "XPU_VISIBLE_DEVICES", Env: []string{"FAKE_XPUML_COUNT=3", "XPU_VISIBLE_DEVICES=2,0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 3, r.Total)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "XPUML sees 3 devices, 2 visible through XPU_VISIBLE_DEVICES=2,0", r.Reason)
	}},
	{Name: "XPU_VISIBLE_DEVICES all spaces", Env: []string{"XPU_VISIBLE_DEVICES=  "}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices, "Paddle reads it as no XPU")
	}},
	{Name: "XPU_VISIBLE_DEVICES by UUID", Env: []string{"XPU_VISIBLE_DEVICES=GPU-12"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "XPUML knows no UUIDs")
		assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
	}},
	{Name: "CUDA_VISIBLE_DEVICES ignored", Env: []string{"CUDA_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Visibility)
	}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_OPTIONAL"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, "", r.DriverVersion)
		assert.Equal(t, []presence.Device{{Index: 0}, {Index: 1, SourceIndex: 1}}, r.Devices)
		assert.Empty(t, r.Notes)
	}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_COUNT"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "xpumlDeviceGetCount")
		assert.Contains(t, r.Reason, XPUMLEnvVar)
		assert.Empty(t, calls)
	}},
	// No source of the presence tier loads a driver: a tripwire libcuda
	// first on LD_LIBRARY_PATH stays unloaded through XPUML and the nodes.
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := XPUML(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 2)
			presencetest.NoDriverLoaded(t)
		}},
}

// xpumlSmall is XPUML on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func xpumlSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = XPUML(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "XPUML allocated %d bytes", n)
	return r
}

// xpumlTooMany checks the answer to a count of n devices, above the bound.
func xpumlTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "XPUML: xpumlDeviceGetCount reported ")
		for _, c := range calls {
			assert.NotContains(t, []string{"xpumlDeviceGetHandleByIndex", "xpumlDeviceGetName", "xpumlDeviceGetMemoryInfo"}, c, "no device is asked for")
		}
		presencetest.Paired(t, calls, xpumlInit, xpumlShutdown)
	}
}

func TestXPUMLNotFound(t *testing.T) {
	r := XPUML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libxpuml-presence-absent.so.1"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceXPUML, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libxpuml.so.1 not found (tried libxpuml-presence-absent.so.1)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBXPUML_PATH=/abs/path/to/libxpuml.so.1")
}

func TestXPUMLRelativeOverride(t *testing.T) {
	r := XPUML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(XPUMLEnvVar, "libxpuml.so.1"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBXPUML_PATH="libxpuml.so.1" cannot be used: the path must be absolute`)
}

func TestXPUMLCodes(t *testing.T) {
	for code, name := range xpumlReturnNames {
		assert.True(t, strings.HasPrefix(name, "XPUML_"), "%d", code)
	}
	assert.Equal(t, "XPUML_ERROR_NO_PERMISSION", xpumlReturnNames[xpumlNoPermission])
	assert.Equal(t, "XPUML_ERROR_DRIVER_NOT_LOADED", xpumlReturnNames[xpumlDriverNotLoaded])
	assert.Equal(t, "XPUML_ERROR_LIB_RM_VERSION_MISMATCH", xpumlReturnNames[xpumlRMMismatch])
}
