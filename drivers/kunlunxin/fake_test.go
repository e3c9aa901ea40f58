package kunlunxin

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libxpurt.so.1 (testdata/fake_libxpurt.c), each in a child process. The
// fake is an R300 (XPUATTR_MODEL 3: generation 2) whose clusters are the
// multiprocessors; fake_common.h's CUDA codes come back as XPUError_t.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	NewBackend: New,
	Presence:   xpumlPresence,
	Version:    [2]int{4, 33},
	DeviceName: "R300",
	Capability: &[3]int{2, 0, 132},
	Codes: map[int]int{
		1: 707, 2: 705, 700: 714, 719: 714, // as the fake translates fake_common.h's
		35: 704, 803: 704, 804: 704, 100: 703, 999: 800, // the init cases' meanings: XPUERR_VERSION, XPUERR_NODEV, XPUERR_UNEXPECT
	},
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) { suite.Test(t) }

// TestNegativeCodes: a failure answered negated (as the XRE API reference
// says XRE answers) is read as its positive code.
func TestNegativeCodes(t *testing.T) {
	suite.InChild(t, nil, []string{"FAKE_XPU_INIT_RESULT=703", "FAKE_XPU_NEGATIVE=1"}, func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		require.False(t, r.Available)
		assert.Contains(t, r.Reason, "kunlunxin: xpu_device_count(0) failed: XPUERR_NODEV (-703)")
		_, err := b.Current()
		assert.ErrorIs(t, err, driver.ErrNoDevice)
		assert.ErrorIs(t, err, device.ErrNotAvailable)
	})
}

// TestNegativeCallCodes: a failing call answered negated keeps its
// sentinel (out of memory).
func TestNegativeCallCodes(t *testing.T) {
	suite.InChild(t, nil, []string{"FAKE_XPU_NEGATIVE=1", "FAKE_XPU_TOTAL_MEM=1073741824"}, func(t *testing.T, b *driver.Backend) {
		require.True(t, b.Available().Available, b.Available().Reason)
		_, err := b.Alloc(0, 1<<40)
		assert.ErrorIs(t, err, device.ErrOutOfMemory)
		assert.ErrorContains(t, err, "XPUERR_NOMEM (-705)")
	})
}

func TestVendor(t *testing.T) {
	v := Vendor()
	require.NoError(t, v.Validate())
	assert.Equal(t, device.Type("kunlunxin"), v.Type)
	assert.Equal(t, driver.CurrentDevice, v.Context)
	assert.Equal(t, []string{"libxpurt.so.1", "libxpurt.so"}, v.Library.Sonames)
	assert.Equal(t, []string{"/dev/xpuctrl"}, v.Library.Nodes)
	assert.Equal(t, []uint16{0x1d22}, v.PCIVendors)
	assert.Equal(t, 70, v.Auto)
	assert.Equal(t, []string{"XPULINK_VISIBLE_DEVICES", "XPU_VISIBLE_DEVICES"}, v.VisibleEnv)
	for _, op := range []driver.Op{driver.OpDeviceTotalMem, driver.OpMemGetInfo, driver.OpDeviceUUID, driver.OpErrorName, driver.OpErrorString,
		driver.OpModuleLoadDataEx, driver.OpModuleLoadData, driver.OpModuleUnload, driver.OpModuleGetFunction, driver.OpModuleGetGlobal,
		driver.OpLaunchKernel, driver.OpFuncGetParamInfo, driver.OpMemcpyHtoDAsync, driver.OpMemcpyDtoHAsync, driver.OpEventElapsedTime,
		driver.OpPrimaryCtxRetain, driver.OpCtxSetCurrent, driver.OpCtxGetCurrent} {
		assert.NotContains(t, v.Symbols, op, "%s: XRE 4 lacks it, or its shape is not public", op)
	}
	drivertest.CheckSymbols(t, v, `^xpu_[a-z_]+$`, 1)
	assert.ElementsMatch(t, append([]string{"memory info", "modules", "launches", "event timing", "asynchronous copies", "graphs", "UUIDs"},
		// the driver core's second group: XRE's are not bound
		"memset", "asynchronous memset", "device-to-device copies", "asynchronous device-to-device copies", "managed memory",
		"stream-ordered allocation", "mapped host memory", "stream queries", "event queries", "stream memory operations",
		"host functions", "IPC memory handles", "PCI bus id lookup", "DMA-buf"), v.Unbound())
	drivertest.CheckVersions(t, v, [3]int{40000 + 3300, 4, 33}, [3]int{50000 + 1900, 5, 19})
	assert.ElementsMatch(t, []string{EnvVar, XPUMLEnvVar, deviceOrderEnv, LinkVisibleDevicesEnv, VisibleDevicesEnv}, drivertest.VariableNames(v))
}

func TestResults(t *testing.T) {
	for code, want := range map[int][]error{
		701: {device.ErrInvalidIndex},
		702: {driver.ErrNotInitialized},
		703: {driver.ErrNoDevice, device.ErrNotAvailable},
		704: {driver.ErrDriverMismatch, device.ErrNotAvailable},
		705: {device.ErrOutOfMemory},
		706: {device.ErrOutOfMemory},
		707: {device.ErrInvalidValue},
		708: {device.ErrNotFound},
		712: {device.ErrNotSupported},
		714: {device.ErrLaunchFailed},
	} {
		for _, c := range []int{code, -code} {
			r, ok := Results[c]
			require.True(t, ok, "code %d", c)
			assert.ElementsMatch(t, want, r.Is, "%s (%d)", r.Name, c)
		}
	}
	assert.Len(t, Results, 2*38+1, "XPUError_t's 38 codes under both signs, and success")
	for code, r := range Results {
		assert.Regexp(t, `^XPU(_SUCCESS|ERR_[A-Z0-9_]+)$`, r.Name, code)
		assert.Equal(t, r.Name, Results[-code].Name, "%d: one name under both signs", code)
	}
	assert.Equal(t, "XPUERR_NODEV", Vendor().ResultName(-703))
	assert.Equal(t, "XPU_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054))
}

func TestModels(t *testing.T) {
	assert.Equal(t, "R300", ModelName(3))
	assert.Equal(t, "RG800-PRO-VF-10G", ModelName(223))
	assert.Equal(t, "KL3", ModelName(300))
	assert.Equal(t, "Kunlunxin model 301", ModelName(301))
	for _, c := range []struct {
		model uint64
		gen   int
		ok    bool
	}{{0, 1, true}, {1, 1, true}, {2, 2, true}, {223, 2, true}, {299, 2, true}, {300, 3, true}, {599, 3, true}, {600, 0, false}, {1 << 40, 0, false}} {
		g, ok := generation(c.model)
		assert.Equal(t, [2]any{c.gen, c.ok}, [2]any{g, ok}, "model %d", c.model)
	}
}

// TestAdapters: what the adapters do without a library: the device is its
// ordinal, flags XRE cannot express are refused, the minor attribute is
// unknown.
func TestAdapters(t *testing.T) {
	var h int32 = -1
	assert.Equal(t, 0, Adapters[driver.OpDeviceGet](nil, uintptr(unsafe.Pointer(&h)), 3))
	assert.Equal(t, int32(3), h)
	assert.Equal(t, xpuInvalidParam, Adapters[driver.OpStreamCreate](nil, 0, 1))
	assert.Equal(t, xpuInvalidParam, Adapters[driver.OpEventCreate](nil, 0, 1))
	assert.Equal(t, xpuInvalidParam, Adapters[driver.OpStreamWaitEvent](nil, 1, 2, 1))
	var v int32
	none := attrNone // as the core passes it: an int made a uintptr
	assert.Equal(t, xpuNoSupport, Adapters[driver.OpDeviceAttribute](nil, uintptr(unsafe.Pointer(&v)), uintptr(none), 0))
	buf := make([]byte, 4)
	assert.Equal(t, 0, putString(uintptr(unsafe.Pointer(&buf[0])), 4, "R200-8F"))
	assert.Equal(t, "R20\x00", string(buf), "cut to fit, NUL-terminated")
}
