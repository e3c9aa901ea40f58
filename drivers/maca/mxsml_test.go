package maca

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

// fakeMXSML is testdata/fake_mxsml.c, a libmxsml.so driven by FAKE_MXSML_*.
var fakeMXSML = presencetest.Lib{
	Src:      "testdata/fake_mxsml.c",
	Soname:   "libmxsml.so",
	Override: MXSMLEnvVar,
	LogEnv:   "FAKE_MXSML_LOG",
}

const mxsmlInit, mxsmlShutdown = "mxSmlExInit", "mxSmlExShutdown"

// TestMXSMLFakes runs each case against the fake MXSML in a child process
// (a loaded soname stays loaded for the life of a process).
func TestMXSMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeMXSML, Source: MXSML, Cases: mxsmlCases}).Test(t)
}

// c500 is the fake's device i with its defaults.
func c500(i int) presence.Device {
	return presence.Device{Index: i, SourceIndex: i, Name: "MetaX C500", UUID: "GPU-5f3c0000-1111-2222-3333-00000000000" + string(rune('0'+i)),
		PCIBusID: "0000:" + []string{"3a", "3b", "3c"}[i] + ":00.0", TotalMemory: 64 << 30, FreeMemory: 60 << 30, Major: 10}
}

var mxsmlCases = []presencetest.Case{
	{Name: "two devices", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceMXSML, r.Source)
		assert.Equal(t, os.Getenv(MXSMLEnvVar), r.Library)
		assert.Equal(t, "2.32.0.6", r.DriverVersion)
		assert.Equal(t, 2, r.Total)
		assert.Equal(t, "", r.Visibility)
		assert.Equal(t, []presence.Device{c500(0), c500(1)}, r.Devices)
		assert.Equal(t, "MXSML sees 2 devices", r.Reason)
		assert.Empty(t, r.Notes)
		require.GreaterOrEqual(t, len(calls), 3)
		assert.Equal(t, []string{mxsmlInit, "mxSmlExSystemGetDriverVersion", "mxSmlExDeviceGetCount"}, calls[:3])
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	{Name: "memory in pymxsml's order", Env: []string{"FAKE_MXSML_MEM_ORDER=pymxsml"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]uint64{64 << 30, 60 << 30}, [2]uint64{r.Devices[0].TotalMemory, r.Devices[0].FreeMemory}, "total and free told apart by size")
		assert.Empty(t, r.Notes)
	}},
	{Name: "memory that is neither order", Env: []string{"FAKE_MXSML_MEM_ORDER=garbage"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Zero(t, r.Devices[0].TotalMemory, "left unknown")
		assert.Zero(t, r.Devices[0].FreeMemory)
		assert.Contains(t, presencetest.Notes(r), "device 0: mxSmlExDeviceGetMemoryInfo answered {7, 68719476736, 34359738368}")
		assert.Contains(t, presencetest.Notes(r), "memory left unknown")
	}},
	{Name: "driver not loaded", Env: []string{"FAKE_MXSML_INIT_RESULT=9"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "MXSML", Func: "mxSmlExInit", Code: 9, Name: "MXSMLEX_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "MXSML: the MetaX kernel driver is not loaded (MXSMLEX_ERROR_DRIVER_NOT_LOADED): no MetaX GPU is usable here", r.Reason)
		assert.Empty(t, r.Devices)
		assert.Equal(t, []string{mxsmlInit, "mxSmlExErrorString"}, calls, "no shutdown after a failed init, no other call")
	}},
	{Name: "no permission", Env: []string{"FAKE_MXSML_INIT_RESULT=4"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "MXSMLEX_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "--device=/dev/mxcd")
	}},
	{Name: "driver version mismatch", Env: []string{"FAKE_MXSML_INIT_RESULT=18"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "MXSMLEX_ERROR_LIB_RM_VERSION_MISMATCH")
		assert.Contains(t, r.Reason, "reload the metax module")
	}},
	{Name: "zero devices", Env: []string{"FAKE_MXSML_COUNT=0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.Equal(t, "MXSML sees no device", r.Reason)
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	{Name: "count fails", Env: []string{"FAKE_MXSML_COUNT_RESULT=999"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Contains(t, r.Reason, "MXSMLEX_ERROR_UNKNOWN (999)")
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	// A library answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_MXSML_COUNT_RAW=4294967295"}, Run: mxsmlSmall, Check: mxsmlTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_MXSML_COUNT_RAW=3000000"}, Run: mxsmlSmall, Check: mxsmlTooMany(3000000)},
	{Name: "count 4096", Env: []string{"FAKE_MXSML_COUNT_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device 2")
		assert.Contains(t, r.Reason, "mxSmlExGetDeviceHandleByIndex(2)")
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	{Name: "handle fails", Env: []string{"FAKE_MXSML_HANDLE_FAIL=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Equal(t, "MXSML: mxSmlExGetDeviceHandleByIndex(1) returned MXSMLEX_ERROR_UNKNOWN (999): Unknown Error", r.Reason)
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	{Name: "CUDA_VISIBLE_DEVICES", Env: []string{"FAKE_MXSML_COUNT=3", "CUDA_VISIBLE_DEVICES=2,0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 3, r.Total)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=2,0", r.Visibility)
		assert.Equal(t, "MXSML sees 3 devices, 2 visible through CUDA_VISIBLE_DEVICES=2,0", r.Reason)
	}},
	{Name: "CUDA_VISIBLE_DEVICES by UUID", Env: []string{"CUDA_VISIBLE_DEVICES=GPU-5f3c0000-1111-2222-3333-000000000001"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, 1, r.Devices[0].SourceIndex)
	}},
	{Name: "MACA_VISIBLE_DEVICES undecidable", Env: []string{"MACA_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
		assert.Equal(t, 2, r.Total)
		assert.Empty(t, r.Devices)
		assert.Equal(t, "MACA_VISIBLE_DEVICES=1", r.Visibility)
		assert.Contains(t, r.Reason, `MACA_VISIBLE_DEVICES="1" is set`)
		assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_OPTIONAL"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, "", r.DriverVersion)
		assert.Equal(t, []presence.Device{{Index: 0, Name: "MetaX C500"}, {Index: 1, SourceIndex: 1, Name: "MetaX C500"}}, r.Devices)
		assert.Empty(t, r.Notes)
	}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_NAME"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "mxSmlExDeviceGetName")
		assert.Contains(t, r.Reason, MXSMLEnvVar)
		assert.Empty(t, calls)
	}},
	// No source of the presence tier loads a driver: a tripwire libcuda
	// first on LD_LIBRARY_PATH stays unloaded through MXSML and the nodes.
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := MXSML(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 2)
			presencetest.NoDriverLoaded(t)
		}},
}

// mxsmlSmall is MXSML on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func mxsmlSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = MXSML(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "MXSML allocated %d bytes", n)
	return r
}

// mxsmlTooMany checks the answer to a count of n devices, above the bound.
func mxsmlTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "MXSML: mxSmlExDeviceGetCount reported ")
		for _, c := range calls {
			assert.False(t, strings.HasPrefix(c, "mxSmlExDevice") && c != "mxSmlExDeviceGetCount" || c == "mxSmlExGetDeviceHandleByIndex", "no device is asked for: %s", c)
		}
		presencetest.Paired(t, calls, mxsmlInit, mxsmlShutdown)
	}
}

func TestMXSMLNotFound(t *testing.T) {
	r := MXSML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libmxsml-presence-absent.so"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceMXSML, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libmxsml.so not found (tried libmxsml-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBMXSML_PATH=/abs/path/to/libmxsml.so")
}

func TestMXSMLRelativeOverride(t *testing.T) {
	r := MXSML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(MXSMLEnvVar, "libmxsml.so"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBMXSML_PATH="libmxsml.so" cannot be used: the path must be absolute`)
}

func TestMXSMLMemory(t *testing.T) {
	for _, c := range []struct {
		m           mxsmlMemory
		total, free uint64
		ok          bool
	}{
		{mxsmlMemory{60, 64, 4}, 64, 60, true},   // header 2.3.1: free, total, used
		{mxsmlMemory{64, 60, 4}, 64, 60, true},   // pymxsml: total, free, used
		{mxsmlMemory{64, 64, 0}, 64, 64, true},   // idle
		{mxsmlMemory{0, 100, 100}, 100, 0, true}, // full
		{mxsmlMemory{61, 64, 0}, 64, 61, true},   // reserved memory: within a tenth
		{mxsmlMemory{7, 64, 32}, 0, 0, false},    // free + used far from total
		{mxsmlMemory{60, 64, 65}, 0, 0, false},   // used above total
		{mxsmlMemory{0, 0, 0}, 0, 0, false},
		{mxsmlMemory{1 << 63, 1 << 63, 1 << 63}, 0, 0, false},
	} {
		total, free, ok := c.m.read()
		assert.Equal(t, [3]any{c.total, c.free, c.ok}, [3]any{total, free, ok}, "%+v", c.m)
	}
}

func TestMXSMLCodes(t *testing.T) {
	for code, name := range mxsmlReturnNames {
		assert.True(t, strings.HasPrefix(name, "MXSMLEX_"), "%d", code)
	}
	assert.Equal(t, "MXSMLEX_ERROR_NO_PERMISSION", mxsmlReturnNames[mxsmlNoPermission])
	assert.Equal(t, "MXSMLEX_ERROR_DRIVER_NOT_LOADED", mxsmlReturnNames[mxsmlDriverNotLoaded])
	assert.Equal(t, "MXSMLEX_ERROR_LIB_RM_VERSION_MISMATCH", mxsmlReturnNames[mxsmlRMMismatch])
}
