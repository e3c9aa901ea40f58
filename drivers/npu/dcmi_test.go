package npu

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeDCMI is testdata/fake_dcmi.c, a libdcmi.so driven by FAKE_DCMI_* (the log variable: the kit's default).
var fakeDCMI = presencetest.Lib{Src: "testdata/fake_dcmi.c", Soname: "libdcmi.so", Override: DCMIEnvVar}

// TestDCMIFakes runs each case against the fake DCMI in a child process (a
// loaded soname stays loaded for the life of a process): what every
// binding is tested for, then DCMI's own.
func TestDCMIFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeDCMI, Source: DCMI, Common: dcmiCommon, Cases: append(dcmiCases, dcmiV2Cases...)}).Test(t)
}

// dcmiCommon: DCMI counts cards (FAKE_DCMI_CARDS, one NPU each by default)
// and has no shutdown and no error string.
var dcmiCommon = &presencetest.Common{
	Source: SourceDCMI, Label: "DCMI",
	Vars:        presencetest.Vars{InitResult: "FAKE_DCMI_INIT_RESULT", Count: "FAKE_DCMI_CARDS", CountResult: "FAKE_DCMI_LIST_RESULT", CountRaw: "FAKE_DCMI_CARDS_RAW"},
	Init:        "dcmi_init",
	Count:       "dcmi_get_card_list",
	DeviceCalls: []string{"dcmi_get_device_logic_id", "dcmi_get_device_chip_info", "dcmi_get_device_hbm_info"},
	Answer:      presencetest.Answer{DriverVersion: "24.1.rc2", Devices: []presence.Device{npuAt(0, 0, 0)}},
	InitFail:    presencetest.Failure{Code: -8002, Name: "DCMI_ERR_CODE_OPER_NOT_PERMITTED", Reason: "no permission"},
	CountFail:   presencetest.Failure{Code: -8005, Name: "DCMI_ERR_CODE_INNER_ERR"},
	Missing:     presencetest.Missing{Define: "FAKE_NO_LOGIC_ID", Names: []string{"dcmi_get_device_logic_id"}},
	// The card count and the logic ids alone.
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_OPTIONAL"}, Env: []string{"FAKE_DCMI_CARDS=2"},
		Answer: presencetest.Answer{Devices: []presence.Device{{}, {Index: 1, SourceIndex: 1}}}},
	// The container runtime's variable and CUDA's are not the runtime's.
	Visible: VisibleDevicesEnv, Ignored: []string{"ASCEND_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"},
	Also: func(e *presence.Env) { presenceSources(e) }, // the nodes
}

// npuAt is the fake's NPU k as DCMI describes it, numbered index.
func npuAt(index, logic, k int) presence.Device {
	return presence.Device{Index: index, SourceIndex: logic, Name: "Ascend910B3", PCIBusID: fmt.Sprintf("0000:%02x:00.0", 0x18+k),
		TotalMemory: 65536 << 20, FreeMemory: (65536 - 1024) << 20}
}

var dcmiCases = []presencetest.Case{
	{Name: "the newer card list first", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.NotContains(t, calls, "dcmi_get_card_num_list", "the newer card list first")
	}},
	// Two cards of two NPUs, card ids 1 and 5, logic ids out of card
	// order: the devices come in logic-id order, which the runtime uses.
	{Name: "cards and logic ids", Env: []string{"FAKE_DCMI_CARDS=2", "FAKE_DCMI_PER_CARD=2", "FAKE_DCMI_LOGIC_IDS=2,3,0,1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 4, r.Total)
			require.Len(t, r.Devices, 4)
			assert.Equal(t, npuAt(0, 0, 2), r.Devices[0], "logic 0 is the second card's first NPU")
			assert.Equal(t, npuAt(3, 3, 1), r.Devices[3])
			assert.Equal(t, "DCMI sees 4 devices", r.Reason)
		}},
	// Out of order: the runtime sees no device at all, and says why.
	{Name: "visible out of order", Env: []string{"FAKE_DCMI_CARDS=4", "ASCEND_RT_VISIBLE_DEVICES=3,1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.False(t, r.Available())
		assert.Contains(t, r.Reason, `"3,1" is not in ascending order: the runtime sees no device`)
		assert.Contains(t, presencetest.Notes(r), "ASCEND_RT_VISIBLE_DEVICES: ")
	}},
	// 310P (no HBM): its DDR; a name that holds its type already.
	{Name: "ddr and names", Env: []string{"FAKE_DCMI_HBM_RESULT=-8255", "FAKE_DCMI_CARDS=2", "FAKE_DCMI_CHIP_NAMES=310P3,Ascend910"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, "Ascend310P3", r.Devices[0].Name)
			assert.Equal(t, "Ascend910", r.Devices[1].Name, "a 910_93 board's chip_name has its type")
			assert.Equal(t, [2]uint64{24576 << 20, 20480 << 20}, [2]uint64{r.Devices[0].TotalMemory, r.Devices[0].FreeMemory})
			assert.Empty(t, r.Notes, "a chip without HBM is no failure")
		}},
	{Name: "memory unknown", Env: []string{"FAKE_DCMI_HBM_RESULT=-8255", "FAKE_DCMI_DDR_RESULT=-8005"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 1)
			assert.Zero(t, r.Devices[0].TotalMemory)
			assert.Contains(t, presencetest.Notes(r), "card 1 device 0: memory unknown: DCMI: dcmi_get_device_hbm_info returned DCMI_ERR_CODE_NOT_SUPPORT (-8255); DCMI: dcmi_get_device_memory_info_v3 returned DCMI_ERR_CODE_INNER_ERR (-8005)")
		}},
	// 2^62 MB: its bytes do not fit in 64 bits (once 0, silently). HBM's
	// is refused and DDR answers; both refused leave the memory unknown.
	{Name: "HBM whose bytes overflow", Env: []string{"FAKE_DCMI_HBM_MB=4611686018427387904"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.NotEmpty(t, r.Devices)
			assert.Equal(t, uint64(24576)<<20, r.Devices[0].TotalMemory, "DDR answers")
		}},
	{Name: "memory whose bytes overflow", Env: []string{"FAKE_DCMI_HBM_MB=4611686018427387904", "FAKE_DCMI_DDR_MB=4611686018427387904"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.NotEmpty(t, r.Devices)
			assert.Zero(t, r.Devices[0].TotalMemory)
			assert.Zero(t, r.Devices[0].FreeMemory)
			assert.Contains(t, presencetest.Notes(r), "memory_size is 4611686018427387904 MB, more bytes than 64 bits hold")
		}},
	{Name: "in a container", Env: []string{"FAKE_DCMI_INIT_RESULT=-8013"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER (-8013)")
		assert.Contains(t, r.Reason, "device nodes answer instead")
	}},
	{Name: "older card list", Defines: []string{"-DFAKE_NO_CARD_LIST"}, Env: []string{"FAKE_DCMI_CARDS=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, 2)
			assert.Contains(t, calls, "dcmi_get_card_num_list")
		}},
	// Counts a broken driver might answer: refused before anything is
	// allocated for them, and no NPU is asked for.
	{Name: "per-card count 2^32-1", Env: []string{"FAKE_DCMI_PER_CARD_RAW=4294967295"}, Run: dcmiSmall, Check: dcmiTooMany(1<<32 - 1)},
	{Name: "per-card count 3000000", Env: []string{"FAKE_DCMI_PER_CARD_RAW=3000000"}, Run: dcmiSmall, Check: dcmiTooMany(3000000)},
	// Two cards of 4096 NPUs each: each count is allowed, their sum is not.
	{Name: "sum of counts", Env: []string{"FAKE_DCMI_CARDS=2", "FAKE_DCMI_PER_CARD_RAW=4096"}, Run: dcmiSmall, Check: dcmiTooMany(8192)},
	{Name: "count 4096", Env: []string{"FAKE_DCMI_PER_CARD_RAW=4096"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
		assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no NPU 1")
		assert.Contains(t, r.Reason, "dcmi_get_device_logic_id(card 1, device 1)")
	}},
	// The structs as gcc lays them out are the binding's.
	{Name: "layout", Run: func(t *testing.T) presence.Report {
		lib, err := purego.Dlopen(os.Getenv(DCMIEnvVar), purego.RTLD_NOW|purego.RTLD_LOCAL)
		require.NoError(t, err)
		var layout func(int32) uint64
		purego.RegisterLibFunc(&layout, lib, "fake_dcmi_layout")
		var (
			ci dcmiChipInfo
			h  dcmiHBMInfo
			m  dcmiMemoryInfo
			p  dcmiPCIeInfoAll
		)
		want := []uintptr{
			unsafe.Sizeof(ci), unsafe.Offsetof(ci.chipName), unsafe.Offsetof(ci.aicoreCnt),
			unsafe.Sizeof(h), unsafe.Offsetof(h.memoryUsage), unsafe.Offsetof(h.temp),
			unsafe.Sizeof(m), unsafe.Offsetof(m.memoryAvailable), unsafe.Offsetof(m.hugepageSize), unsafe.Offsetof(m.utiliza),
			unsafe.Sizeof(p), unsafe.Offsetof(p.domain), unsafe.Offsetof(p.bdfFuncID),
		}
		for i, w := range want {
			assert.EqualValues(t, w, layout(int32(i)), "layout entry %d", i)
		}
		assert.Equal(t, []uintptr{100, 32, 112, 64}, []uintptr{unsafe.Sizeof(ci), unsafe.Sizeof(h), unsafe.Sizeof(m), unsafe.Sizeof(p)})
		return presence.Report{}
	}, Check: func(*testing.T, presence.Report, []string) {}},
}

// dcmiSmall is DCMI on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func dcmiSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = DCMI(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "DCMI allocated %d bytes", n)
	return r
}

// dcmiTooMany checks the answer to a count of n NPUs, above the bound.
func dcmiTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "DCMI: dcmi_get_")
		for _, c := range calls {
			assert.NotContains(t, []string{"dcmi_get_device_logic_id", "dcmi_get_device_chip_info", "dcmi_get_device_hbm_info"}, c, "no NPU is asked for")
		}
	}
}

func TestChipName(t *testing.T) {
	for _, c := range [][3]string{
		{"Ascend", "910B3", "Ascend910B3"},
		{"Ascend", "Ascend910", "Ascend910"},
		{"Ascend", "", ""},
		{"", "310P3", "310P3"},
	} {
		assert.Equal(t, c[2], chipName(c[0], c[1]), "%q %q", c[0], c[1])
	}
}

// dcmiV2Cases: an Ascend 950 board, as DRV's DCMI answers one: dcmi_init
// refuses with -8255 and the dcmiv2_* functions answer, by logic id.
var dcmiV2Cases = []presencetest.Case{
	{Name: "950 board", Env: []string{"FAKE_DCMI_950=1", "FAKE_DCMI_CARDS=2", "FAKE_DCMI_LOGIC_IDS=1,0"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err, r.Reason)
			assert.Equal(t, "25.5.0", r.DriverVersion)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, presence.Device{Index: 0, SourceIndex: 0, Name: "Ascend950PR", PCIBusID: "0000:19:00.0",
				TotalMemory: 131072 << 20, FreeMemory: (131072 - 2048) << 20}, r.Devices[0], "logic id 0 is the second NPU")
			assert.Equal(t, 1, r.Devices[1].SourceIndex)
			assert.Equal(t, []string{"dcmi_init", "dcmiv2_init", "dcmiv2_get_driver_version", "dcmiv2_get_device_list"}, calls[:4])
			assert.NotContains(t, calls, "dcmi_get_card_list", "the first API is not asked again")
			assert.Empty(t, r.Notes)
		}},
	{Name: "950 board, visible", Env: []string{"FAKE_DCMI_950=1", "FAKE_DCMI_CARDS=3", "ASCEND_RT_VISIBLE_DEVICES=1,2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{1, 2}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		}},
	{Name: "950 board, old libdcmi", Defines: []string{"-DFAKE_NO_DCMIV2"}, Env: []string{"FAKE_DCMI_950=1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrInit)
			assert.Contains(t, r.Reason, "DCMI_ERR_CODE_NOT_SUPPORT (-8255)")
			assert.Contains(t, r.Reason, "dcmiv2_*")
		}},
	{Name: "other boards refuse the second API", Env: []string{"FAKE_DCMI_CARDS=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, 2)
			assert.NotContains(t, calls, "dcmiv2_init", "dcmi_init answered: the first API")
		}},
	{Name: "chip_info_v2 layout", Run: func(t *testing.T) presence.Report {
		lib, err := purego.Dlopen(os.Getenv(DCMIEnvVar), purego.RTLD_NOW|purego.RTLD_LOCAL)
		require.NoError(t, err)
		var layout func(int32) uint64
		purego.RegisterLibFunc(&layout, lib, "fake_dcmi_layout_v2")
		var ci dcmiChipInfoV2
		assert.EqualValues(t, unsafe.Sizeof(ci), layout(0))
		assert.EqualValues(t, unsafe.Offsetof(ci.npuName), layout(1))
		assert.EqualValues(t, 132, unsafe.Sizeof(ci))
		return presence.Report{}
	}, Check: func(*testing.T, presence.Report, []string) {}},
}
