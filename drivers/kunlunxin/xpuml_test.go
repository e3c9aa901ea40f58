package kunlunxin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeXPUML is testdata/fake_xpuml.c, a libxpuml.so.1 driven by FAKE_XPUML_* (the log variable: the kit's default).
var fakeXPUML = presencetest.Lib{Src: "testdata/fake_xpuml.c", Soname: "libxpuml.so.1", Override: XPUMLEnvVar}

const xpumlInit, xpumlShutdown = "xpumlInit", "xpumlShutdown"

// TestXPUMLFakes runs each case against the fake XPUML in a child process
// (a loaded soname stays loaded for the life of a process): what every
// binding is tested for, then XPUML's own.
func TestXPUMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeXPUML, Source: XPUML, Common: xpumlCommon, Cases: xpumlCases}).Test(t)
}

var xpumlCommon = &presencetest.Common{
	Source: SourceXPUML, Label: "XPUML",
	Init: xpumlInit, Shutdown: xpumlShutdown, ErrorString: "xpumlErrorString",
	Count: "xpumlDeviceGetCount", Handle: "xpumlDeviceGetHandleByIndex",
	DeviceCalls: []string{"xpumlDeviceGetHandleByIndex", "xpumlDeviceGetName", "xpumlDeviceGetMemoryInfo"},
	Answer:      presencetest.Answer{DriverVersion: "4.0.25", Devices: []presence.Device{r300(0), r300(1)}},
	InitFail: presencetest.Failure{Code: 9, Name: "XPUML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded",
		Reason: "XPUML: the Kunlunxin kernel driver (kunlun) is not loaded (XPUML_ERROR_DRIVER_NOT_LOADED): no Kunlunxin XPU is usable here"},
	CountFail:  presencetest.Failure{Code: 999, Name: "XPUML_ERROR_UNKNOWN", Message: "Unknown Error"},
	HandleFail: presencetest.Failure{Code: 999, Name: "XPUML_ERROR_UNKNOWN", Message: "Unknown Error"},
	Missing:    presencetest.Missing{Define: "FAKE_NO_COUNT", Names: []string{"xpumlDeviceGetCount"}},
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_OPTIONAL"},
		Answer: presencetest.Answer{Devices: []presence.Device{{}, {Index: 1, SourceIndex: 1}}}},
	Visible: VisibleDevicesEnv, Ignored: []string{"CUDA_VISIBLE_DEVICES"},
	Also: func(e *presence.Env) { presenceSources(e) }, // the nodes
}

// r300 is the fake's device i with its defaults.
func r300(i int) presence.Device {
	return presence.Device{Index: i, SourceIndex: i, Name: "R300", PCIBusID: []string{"00000000:4F:00.0", "00000000:50:00.0", "00000000:51:00.0"}[i],
		TotalMemory: 32 << 30, FreeMemory: 30 << 30, Major: 2}
}

var xpumlCases = []presencetest.Case{
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
	// More memory free than there is (the other bindings' libraries are
	// checked alike, by presence.Query): free memory unknown, with a note.
	{Name: "free above total", Env: []string{"FAKE_XPUML_MEM_FREE=68719476736"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.NotEmpty(t, r.Devices)
		assert.Equal(t, uint64(32<<30), r.Devices[0].TotalMemory)
		assert.Zero(t, r.Devices[0].FreeMemory)
		assert.Contains(t, presencetest.Notes(r), "68719476736 bytes free of 34359738368: free memory left unknown")
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
}

func TestXPUMLCodes(t *testing.T) {
	presencetest.CodeNames(t, xpumlReturnNames, "XPUML_", map[int]string{xpumlNoPermission: "XPUML_ERROR_NO_PERMISSION",
		xpumlDriverNotLoaded: "XPUML_ERROR_DRIVER_NOT_LOADED", xpumlRMMismatch: "XPUML_ERROR_LIB_RM_VERSION_MISMATCH"})
}
