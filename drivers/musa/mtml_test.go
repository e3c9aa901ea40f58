package musa

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeMTML is testdata/fake_mtml.c, a libmtml.so driven by FAKE_MTML_* (the log variable: the kit's default).
var fakeMTML = presencetest.Lib{Src: "testdata/fake_mtml.c", Soname: "libmtml.so", Override: MTMLEnvVar}

const mtmlInit, mtmlShutdown = "mtmlLibraryInit", "mtmlLibraryShutDown"

// TestMTMLFakes runs each case against the fake MTML in a child process (a
// loaded soname stays loaded for the life of a process): what every
// binding is tested for, then MTML's own.
func TestMTMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeMTML, Source: MTML, Common: mtmlCommon, Cases: mtmlCases}).Test(t)
}

var mtmlCommon = &presencetest.Common{
	Source: SourceMTML, Label: "MTML",
	Init: mtmlInit, Shutdown: mtmlShutdown, ErrorString: "mtmlErrorString",
	Count: "mtmlLibraryCountDevice", Handle: "mtmlLibraryInitDeviceByIndex",
	DeviceCalls: []string{"mtmlLibraryInitDeviceByIndex", "mtmlDeviceGetProperty", "mtmlDeviceGetName", "mtmlDeviceGetUUID"},
	Answer: presencetest.Answer{DriverVersion: "2.7.0", Devices: []presence.Device{{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd", PCIBusID: "00000000:3a:00.0",
		TotalMemory: 48 << 30, FreeMemory: 46 << 30}}},
	InitFail: presencetest.Failure{Code: 1, Name: "MTML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded",
		Reason: "MTML: the Moore Threads kernel driver is not loaded (MTML_ERROR_DRIVER_NOT_LOADED)"},
	CountFail: presencetest.Failure{Code: 2, Name: "MTML_ERROR_DRIVER_FAILURE", Message: "Unknown Error"},
	Missing:   presencetest.Missing{Define: "FAKE_NO_UUID", Names: []string{"mtmlDeviceGetUUID"}},
	// Without mtmlDeviceGetProperty no device is known to be an MPC parent.
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_MEMORY", "-DFAKE_NO_SYSTEM", "-DFAKE_NO_PCI", "-DFAKE_NO_PROPERTY", "-DFAKE_NO_ERRSTR"},
		Env:    []string{"FAKE_MTML_MPC_PARENT=0"},
		Answer: presencetest.Answer{Devices: []presence.Device{{Name: "MTT S4000", UUID: "00000000-aaaa-bbbb-cccc-dddddddddddd"}}}},
	NoErrorString: "FAKE_NO_ERRSTR",
	Visible:       VisibleDevicesEnv, EmptyUndecidable: true, Ignored: []string{"CUDA_VISIBLE_DEVICES"},
	// MUSA's nodes and HIP's sources. (NVML is drivers/cuda's case.)
	Also: func(e *presence.Env) { presenceSources(e); hip.Vendor().Presence(e) },
}

var mtmlCases = []presencetest.Case{
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
	// MUSA documents lists of indexes only: a UUID, a repeat or an index
	// past the last device is not guessed.
	{Name: "visible by UUID", Env: []string{"FAKE_MTML_COUNT=3", "FAKE_MTML_UUIDS=1a000000-0,2b000000-1,3c000000-2", "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
			assert.Equal(t, "MUSA_VISIBLE_DEVICES=GPU-3c,GPU-1a", r.Visibility)
			assert.Contains(t, r.Reason, "lists of indexes only")
		}},
	{Name: "visible indexes", Env: []string{"FAKE_MTML_COUNT=3", "MUSA_VISIBLE_DEVICES=2,0"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		}},
	{Name: "visible repeat", Env: []string{"FAKE_MTML_COUNT=3", "MUSA_VISIBLE_DEVICES=1,1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
		}},
}
