package mlu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeCNDev is testdata/fake_cndev.c, a libcndev.so driven by FAKE_CNDEV_* (the log variable: the kit's default).
var fakeCNDev = presencetest.Lib{Src: "testdata/fake_cndev.c", Soname: "libcndev.so", Override: CNDevEnvVar}

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
// (a loaded soname stays loaded for the life of a process): what every
// binding is tested for, then CNDev's own.
func TestCNDevFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeCNDev, Source: CNDev, Common: cndevCommon, Cases: cndevCases}).Test(t)
}

var cndevCommon = &presencetest.Common{
	Source: SourceCNDev, Label: "CNDev",
	Init: cndevInit, Shutdown: cndevRelease, ErrorString: "cndevGetErrorString",
	Count: "cndevGetDeviceCount", Handle: "cndevGetDeviceHandleByIndex",
	DeviceCalls: []string{"cndevGetDeviceHandleByIndex", "cndevGetUUID", "cndevGetCardNameStringByDevId"},
	Answer: presencetest.Answer{DriverVersion: "6.2.10", Devices: []presence.Device{{Name: "MLU590", UUID: "MLU-00000000-aaaa-bbbb-cccc-dddddddddddd", PCIBusID: "0000:3a:00.0",
		TotalMemory: 80 << 30, FreeMemory: 78 << 30}}},
	InitFail: presencetest.Failure{Code: 1, Name: "CNDEV_ERROR_NO_DRIVER", Message: "No Driver",
		Reason: "CNDev: the Cambricon MLU driver is not loaded (CNDEV_ERROR_NO_DRIVER)"},
	CountFail: presencetest.Failure{Code: 7, Name: "CNDEV_ERROR_UNKNOWN", Message: "Cndev_ERROR not found!"},
	Missing:   presencetest.Missing{Define: "FAKE_NO_HANDLE", Names: []string{"cndevGetDeviceHandleByIndex"}},
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_NAME", "-DFAKE_NO_UUID", "-DFAKE_NO_MEMORY", "-DFAKE_NO_PCI", "-DFAKE_NO_VERSION", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_CNDEV_COUNT=2"}, Answer: presencetest.Answer{Devices: []presence.Device{{}, {Index: 1, SourceIndex: 1}}}},
	NoErrorString: "FAKE_NO_ERRSTR",
	Visible:       VisibleDevicesEnv,
	Also:          func(e *presence.Env) { presenceSources(e) }, // the nodes
	// Its fake's init is a flag its release clears (no public source says
	// the library counts its inits): the concurrent case holds because
	// presence.Query runs one session at a time.
}

var cndevCases = []presencetest.Case{
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
	{Name: "visible in another order", Env: []string{"FAKE_CNDEV_COUNT=4", "MLU_VISIBLE_DEVICES=3,1"},
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
	// A name without its terminator whose last byte ends a readable page,
	// a PROT_NONE page after it: read up to the page, never past it (the
	// CLI once died of it).
	{Name: "unterminated name at a guard page", Env: []string{"FAKE_CNDEV_NAME_GUARD=1", "FAKE_CNDEV_NAMES=MLU370-X8"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1)
			assert.Equal(t, "MLU370-X8", r.Devices[0].Name)
		}},
	// 2^62 MB of memory: its bytes do not fit in 64 bits (it once became
	// 0 silently); unknown, with a note.
	{Name: "memory whose bytes overflow", Env: []string{"FAKE_CNDEV_MEM_TOTAL_MB=4611686018427387904"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1)
			assert.Zero(t, r.Devices[0].TotalMemory)
			assert.Zero(t, r.Devices[0].FreeMemory)
			assert.Contains(t, presencetest.Notes(r), "physicalMemoryTotal is 4611686018427387904 MB, more bytes than 64 bits hold")
		}},
	{Name: "CN_VISIBLE_DEVICES first", Env: []string{"FAKE_CNDEV_COUNT=3", "CN_VISIBLE_DEVICES=2", "MLU_VISIBLE_DEVICES=0,1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1)
			assert.Equal(t, 2, r.Devices[0].SourceIndex)
			assert.Equal(t, "CN_VISIBLE_DEVICES=2", r.Visibility)
		}},
	{Name: "visible by UUID", Env: []string{"FAKE_CNDEV_COUNT=3", "MLU_VISIBLE_DEVICES=00000002-aaaa-bbbb-cccc-dddddddddddd,00000000-aaaa-bbbb-cccc-dddddddddddd"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		}},
	{Name: "CUDA_VISIBLE_DEVICES alone is undecidable", Env: []string{"FAKE_CNDEV_COUNT=3", "CUDA_VISIBLE_DEVICES=1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "torch_mlu r2.4 reads it, r2.1 does not")
			assert.Contains(t, r.Reason, `CUDA_VISIBLE_DEVICES="1" is set`)
		}},
	{Name: "CUDA_VISIBLE_DEVICES after MLU's", Env: []string{"FAKE_CNDEV_COUNT=3", "CUDA_VISIBLE_DEVICES=1", "MLU_VISIBLE_DEVICES=0"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1)
			assert.Equal(t, 0, r.Devices[0].SourceIndex)
		}},
	{Name: "uuid fails: noted", Env: []string{"FAKE_CNDEV_UUID_RESULT=10"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Empty(t, r.Devices[0].UUID)
		assert.Equal(t, "MLU590", r.Devices[0].Name)
		assert.Contains(t, presencetest.Notes(r), "device 0: CNDev: cndevGetUUID returned CNDEV_ERROR_NOT_SUPPORTED (10)")
	}},
}
