package npu

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeDCMI is testdata/fake_dcmi.c, a libdcmi.so driven by FAKE_DCMI_*.
var fakeDCMI = presencetest.Lib{
	Src:      testdata("fake_dcmi.c"),
	Soname:   "libdcmi.so",
	Override: DCMIEnvVar,
	LogEnv:   "FAKE_DCMI_LOG",
}

// TestDCMIFakes runs each case against the fake DCMI in a child process (a
// loaded soname stays loaded for the life of a process).
func TestDCMIFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeDCMI, Source: DCMI, Cases: dcmiCases}).Test(t)
}

// npuAt is the fake's NPU k as DCMI describes it, numbered index.
func npuAt(index, logic, k int) presence.Device {
	return presence.Device{Index: index, SourceIndex: logic, Name: "Ascend910B3", PCIBusID: fmt.Sprintf("0000:%02x:00.0", 0x18+k),
		TotalMemory: 65536 << 20, FreeMemory: (65536 - 1024) << 20}
}

var dcmiCases = []presencetest.Case{
	{Name: "one npu", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceDCMI, r.Source)
		assert.Equal(t, os.Getenv(DCMIEnvVar), r.Library)
		assert.Equal(t, "24.1.rc2", r.DriverVersion)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, npuAt(0, 0, 0), r.Devices[0])
		assert.Equal(t, "DCMI sees 1 device", r.Reason)
		assert.Empty(t, r.Notes)
		assert.Equal(t, "dcmi_init", calls[0])
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
	{Name: "visible", Env: []string{"FAKE_DCMI_CARDS=4", "ASCEND_RT_VISIBLE_DEVICES=1,3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{1, 3}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "ASCEND_RT_VISIBLE_DEVICES=1,3", r.Visibility)
		assert.Equal(t, "DCMI sees 4 devices, 2 visible through ASCEND_RT_VISIBLE_DEVICES=1,3", r.Reason)
	}},
	// Out of order: the runtime sees no device at all, and says why.
	{Name: "visible out of order", Env: []string{"FAKE_DCMI_CARDS=4", "ASCEND_RT_VISIBLE_DEVICES=3,1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Empty(t, r.Devices)
		assert.False(t, r.Available())
		assert.Contains(t, r.Reason, `"3,1" is not in ascending order: the runtime sees no device`)
		assert.Contains(t, presencetest.Notes(r), "ASCEND_RT_VISIBLE_DEVICES: ")
	}},
	// The container runtime's variable and CUDA's are not the runtime's.
	{Name: "other variables ignored", Env: []string{"FAKE_DCMI_CARDS=2", "ASCEND_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, 2)
			assert.Empty(t, r.Visibility)
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
	{Name: "init fails", Env: []string{"FAKE_DCMI_INIT_RESULT=-8002"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "DCMI", Func: "dcmi_init", Code: -8002, Name: "DCMI_ERR_CODE_OPER_NOT_PERMITTED"}, e)
		assert.Contains(t, r.Reason, "no permission")
		assert.Equal(t, []string{"dcmi_init"}, calls, "nothing else is asked")
	}},
	{Name: "in a container", Env: []string{"FAKE_DCMI_INIT_RESULT=-8013"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER (-8013)")
		assert.Contains(t, r.Reason, "device nodes answer instead")
	}},
	{Name: "list fails", Env: []string{"FAKE_DCMI_LIST_RESULT=-8005"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Equal(t, "DCMI: dcmi_get_card_list returned DCMI_ERR_CODE_INNER_ERR (-8005)", r.Reason)
	}},
	{Name: "older card list", Defines: []string{"-DFAKE_NO_CARD_LIST"}, Env: []string{"FAKE_DCMI_CARDS=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, 2)
			assert.Contains(t, calls, "dcmi_get_card_num_list")
		}},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_OPTIONAL"}, Env: []string{"FAKE_DCMI_CARDS=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, presence.Device{Index: 1, SourceIndex: 1}, r.Devices[1], "the count and the logic ids alone")
			assert.Empty(t, r.DriverVersion)
			assert.Empty(t, r.Notes)
		}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_LOGIC_ID"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "dcmi_get_device_logic_id")
		assert.Contains(t, r.Reason, DCMIEnvVar)
		assert.Empty(t, calls)
	}},
	// Counts a broken driver might answer: refused before anything is
	// allocated for them, and no NPU is asked for.
	{Name: "card count 2^32-1", Env: []string{"FAKE_DCMI_CARDS_RAW=4294967295"}, Run: dcmiSmall, Check: dcmiTooMany(1<<32 - 1)},
	{Name: "card count 3000000", Env: []string{"FAKE_DCMI_CARDS_RAW=3000000"}, Run: dcmiSmall, Check: dcmiTooMany(3000000)},
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
	// No source of the presence tier loads a driver: DCMI and the nodes,
	// with a tripwire libcuda first on LD_LIBRARY_PATH.
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := DCMI(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 1)
			presencetest.NoDriverLoaded(t)
		}},
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

func TestDCMINotFound(t *testing.T) {
	r := DCMI(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libdcmi-presence-absent.so"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceDCMI, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libdcmi.so not found (tried libdcmi-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBDCMI_PATH=/abs/path/to/libdcmi.so")
}

func TestDCMIRelativeOverride(t *testing.T) {
	r := DCMI(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(DCMIEnvVar, "libdcmi.so"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBDCMI_PATH="libdcmi.so" cannot be used: the path must be absolute`)
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
