package maca

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeMXSML is testdata/fake_mxsml.c, a libmxsml.so driven by FAKE_MXSML_* (the log variable: the kit's default).
var fakeMXSML = presencetest.Lib{Src: "testdata/fake_mxsml.c", Soname: "libmxsml.so", Override: MXSMLEnvVar}

const mxsmlInit, mxsmlShutdown = "mxSmlExInit", "mxSmlExShutdown"

// TestMXSMLFakes runs each case against the fake MXSML in a child process
// (a loaded soname stays loaded for the life of a process): what every
// binding is tested for, then MXSML's own.
func TestMXSMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeMXSML, Source: MXSML, Common: mxsmlCommon, Cases: mxsmlCases}).Test(t)
}

var mxsmlCommon = &presencetest.Common{
	Source: SourceMXSML, Label: "MXSML",
	Init: mxsmlInit, Shutdown: mxsmlShutdown, ErrorString: "mxSmlExErrorString",
	Count: "mxSmlExDeviceGetCount", Handle: "mxSmlExGetDeviceHandleByIndex",
	DeviceCalls: []string{"mxSmlExGetDeviceHandleByIndex", "mxSmlExDeviceGetName", "mxSmlExDeviceGetUUID", "mxSmlExDeviceGetMemoryInfo"},
	Answer:      presencetest.Answer{DriverVersion: "2.32.0.6", Devices: []presence.Device{c500(0), c500(1)}},
	InitFail: presencetest.Failure{Code: 9, Name: "MXSMLEX_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded",
		Reason: "MXSML: the MetaX kernel driver is not loaded (MXSMLEX_ERROR_DRIVER_NOT_LOADED): no MetaX GPU is usable here"},
	CountFail:  presencetest.Failure{Code: 999, Name: "MXSMLEX_ERROR_UNKNOWN", Message: "Unknown Error"},
	HandleFail: presencetest.Failure{Code: 999, Name: "MXSMLEX_ERROR_UNKNOWN", Message: "Unknown Error"},
	Missing:    presencetest.Missing{Define: "FAKE_NO_NAME", Names: []string{"mxSmlExDeviceGetName"}},
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_OPTIONAL"},
		Answer: presencetest.Answer{Devices: []presence.Device{{Name: "MetaX C500"}, {Index: 1, SourceIndex: 1, Name: "MetaX C500"}}}},
	Visible: CUDAVisibleDevicesEnv, EmptyUndecidable: true, // MACA_VISIBLE_DEVICES is undecidable: see below
	Also: func(e *presence.Env) { presenceSources(e) }, // the nodes
}

// c500 is the fake's device i with its defaults.
func c500(i int) presence.Device {
	return presence.Device{Index: i, SourceIndex: i, Name: "MetaX C500", UUID: "GPU-5f3c0000-1111-2222-3333-00000000000" + string(rune('0'+i)),
		PCIBusID: "0000:" + []string{"3a", "3b", "3c"}[i] + ":00.0", TotalMemory: 64 << 30, FreeMemory: 60 << 30, Major: 10}
}

var mxsmlCases = []presencetest.Case{
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
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "MetaX's stack documents lists of indexes only")
	}},
	{Name: "UUID within its 80-byte bound", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, "GPU-5f3c0000-1111-2222-3333-000000000000", r.Devices[0].UUID, "the fake refuses a length past 80")
		assert.Empty(t, r.Notes)
	}},
	{Name: "fewer MACA compute devices", Env: []string{"FAKE_MXSML_COUNT=3", "FAKE_MXSML_MACA_COUNT=2"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 3, "which one the runtime leaves out is not told")
		assert.Contains(t, presencetest.Notes(r), "mxSmlExMacaDeviceGetCount counts 2 MACA compute device(s) of the 3")
		assert.Contains(t, calls, "mxSmlExMacaDeviceGetCount")
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
	presencetest.CodeNames(t, mxsmlReturnNames, "MXSMLEX_", map[int]string{mxsmlNoPermission: "MXSMLEX_ERROR_NO_PERMISSION",
		mxsmlDriverNotLoaded: "MXSMLEX_ERROR_DRIVER_NOT_LOADED", mxsmlRMMismatch: "MXSMLEX_ERROR_LIB_RM_VERSION_MISMATCH"})
}
