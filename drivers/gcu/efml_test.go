package gcu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeEFML is testdata/fake_efml.c, a libefml.so driven by FAKE_EFML_* (the log variable: the kit's default).
var fakeEFML = presencetest.Lib{Src: "testdata/fake_efml.c", Soname: "libefml.so", Override: EFMLEnvVar}

const efmlInit, efmlShutdown = "EfmlInit", "EfmlShutdown"

// TestEFMLLayouts: the Go structs have efml.h's sizes and offsets (the fake
// checks the C side with _Static_assert).
func TestEFMLLayouts(t *testing.T) {
	assert.Equal(t, uintptr(16), unsafe.Sizeof(efmlDevMemInfo{}))
	assert.Equal(t, uintptr(8), unsafe.Offsetof(efmlDevMemInfo{}.memUsed))
	assert.Equal(t, uintptr(156), unsafe.Sizeof(efmlDeviceInfo{}))
	assert.Equal(t, uintptr(136), unsafe.Offsetof(efmlDeviceInfo{}.domainID))
	assert.Equal(t, uintptr(148), unsafe.Offsetof(efmlDeviceInfo{}.funcID))
}

// TestEFMLFakes runs each case against the fake EFML in a child process (a
// loaded soname stays loaded for the life of a process): what every
// binding is tested for, then EFML's own.
func TestEFMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeEFML, Source: EFML, Common: efmlCommon, Cases: efmlCases}).Test(t)
}

var efmlCommon = &presencetest.Common{
	Source: SourceEFML, Label: "EFML",
	Init: efmlInit, Shutdown: efmlShutdown, ErrorString: "EfmlErrorString",
	Count:       "EfmlGetDevCount", // no handles: a device is its index
	DeviceCalls: []string{"EfmlGetDevName", "EfmlGetDevUuid", "EfmlGetDevMem", "EfmlGetDevInfo"},
	Answer: presencetest.Answer{DriverVersion: "1.4.0.9", Devices: []presence.Device{{Name: "S60", UUID: "00000000-1e36-c035-0000-000000000000", PCIBusID: "0000:5a:00.0",
		TotalMemory: 48 << 30, FreeMemory: 47 << 30}}},
	InitFail: presencetest.Failure{Code: 6, Name: "EFML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded",
		Reason: "EFML: the Enflame GCU driver is not loaded (EFML_ERROR_DRIVER_NOT_LOADED)"},
	CountFail: presencetest.Failure{Code: 254, Name: "EFML_ERROR_FAIL", Message: "Fail"},
	Missing:   presencetest.Missing{Define: "FAKE_NO_COUNT", Names: []string{"EfmlGetDevCount"}},
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_NAME", "-DFAKE_NO_UUID", "-DFAKE_NO_MEMORY", "-DFAKE_NO_INFO", "-DFAKE_NO_VERSION", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_EFML_COUNT=2"}, Answer: presencetest.Answer{Devices: []presence.Device{{}, {Index: 1, SourceIndex: 1}}}},
	NoErrorString: "FAKE_NO_ERRSTR",
	// ENFLAME_VISIBLE_DEVICES is the container toolkit's, not the runtime's.
	Visible: VisibleDevicesEnv, Ignored: []string{"ENFLAME_VISIBLE_DEVICES"},
	Also: func(e *presence.Env) { presenceSources(e) }, // the nodes
	// Its fake's init is a flag its release clears (no public source says
	// the library counts its inits): the concurrent case holds because
	// presence.Query runs one session at a time.
}

var efmlCases = []presencetest.Case{
	{Name: "no device", Env: []string{"FAKE_EFML_INIT_RESULT=12"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "EFML_ERROR_NO_DEVICE")
		assert.Contains(t, r.Reason, "/dev/gcuctl")
	}},
	{Name: "visible, the last two", Env: []string{"FAKE_EFML_COUNT=4", "TOPS_VISIBLE_DEVICES=2,3"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 4, r.Total)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 3}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, "0000:5c:00.0", r.Devices[0].PCIBusID)
			assert.Equal(t, "TOPS_VISIBLE_DEVICES=2,3", r.Visibility)
		}},
	{Name: "visible DRS partition: undecidable", Env: []string{"FAKE_EFML_COUNT=2", "TOPS_VISIBLE_DEVICES=DRS-0a1b2c"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
			assert.Empty(t, r.Devices)
			assert.Contains(t, r.Reason, `EFML sees 2 devices, but TOPS_VISIBLE_DEVICES="DRS-0a1b2c"`)
			assert.Contains(t, r.Reason, "DRS partition")
			assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
			presencetest.Paired(t, calls, efmlInit, efmlShutdown)
		}},
	{Name: "memory fails: noted", Env: []string{"FAKE_EFML_MEM_RESULT=3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Zero(t, r.Devices[0].TotalMemory)
		assert.Contains(t, presencetest.Notes(r), "device 0: EFML: EfmlGetDevMem returned EFML_ERROR_NOT_SUPPORTED (3): Not Supported")
	}},
	{Name: "name from the device info", Defines: []string{"-DFAKE_NO_NAME"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "Enflame S60 (info)", r.Devices[0].Name)
	}},
}
