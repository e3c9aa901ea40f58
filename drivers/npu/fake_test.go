package npu

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// fakeCodes is the fake's translation of fake_common.h's codes (CUDA's
// numbers) into aclError's: acl() in testdata/fake_libascendcl.c.
var fakeCodes = map[int]int{
	1:   100000, // ACL_ERROR_INVALID_PARAM
	2:   207001, // ACL_ERROR_RT_MEMORY_ALLOCATION
	3:   100001, // ACL_ERROR_UNINITIALIZE
	34:  100039, // ACL_ERROR_COMPILING_STUB_MODE
	100: 207004, // ACL_ERROR_RT_NO_DEVICE
	101: 107001, // ACL_ERROR_RT_INVALID_DEVICEID
	201: 107002, // ACL_ERROR_RT_CONTEXT_NULL
	400: 107017, // ACL_ERROR_RT_INVALID_HANDLE
	600: 507006, // ACL_ERROR_RT_EVENT_NOT_COMPLETE
	700: 507015, // ACL_ERROR_RT_AICORE_EXCEPTION
	999: 500000, // ACL_ERROR_INTERNAL_ERROR
}

// suite runs the driver core's conformance cases against the fake
// libascendcl.so (testdata/fake_libascendcl.c), each in a child process.
// AscendCL names the SoC, not each device (SharedName); its PCI bus ids are
// "domain:bus:device.function" in lower-case hex.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	NewBackend: New,
	Presence:   dcmiPresence,
	Version:    [2]int{8, 5},
	PCIBusID:   "0000:%02x:00.0",
	Codes:      fakeCodes,
	SharedName: true,
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) { suite.Test(t) }

func TestVendor(t *testing.T) {
	v := Vendor()
	drivertest.CheckSymbols(t, v, `^acl(rt|sys)?[A-Z]`, 1) // one AscendCL function per operation
	assert.Equal(t, device.Type("npu"), v.Type, "torch_npu's device name")
	assert.Equal(t, driver.DeviceContext, v.Context, "aclrtSetDevice counts a reference per call: select once, switch contexts after")
	assert.Equal(t, "FLAGOS_LIBASCENDCL_PATH", v.Library.EnvVar)
	assert.Equal(t, []string{"libascendcl.so", "libacl_rt.so"}, v.Library.Sonames)
	assert.Equal(t, []string{VisibleDevicesEnv}, v.VisibleEnv)
	assert.Equal(t, 40, v.Auto)
	assert.Equal(t, []uint16{0x19e5, 0x20c6, 0x203f, 0x20e9}, v.PCIVendors)
	assert.Equal(t, []string{"FLAGOS_LIBASCENDCL_PATH", "FLAGOS_LIBDCMI_PATH", "ASCEND_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"},
		drivertest.VariableNames(v))
	for _, op := range []driver.Op{driver.OpDeviceGet, driver.OpErrorName, driver.OpErrorString, driver.OpPrimaryCtxRetain,
		driver.OpModuleLoadData, driver.OpModuleLoadDataEx, driver.OpModuleUnload, driver.OpModuleGetFunction,
		driver.OpModuleGetGlobal, driver.OpLaunchKernel, driver.OpFuncGetParamInfo, driver.OpGetDevice} {
		assert.NotContains(t, v.Symbols, op, "%s is not bound (doc.go says why)", op)
	}
	assert.Contains(t, v.Adapters, driver.OpDeviceGet, "devices are their ordinals: the adapter answers")
	// Every operation whose C shape differs from CUDA's has an adapter;
	// the ones that match CUDA's have none.
	for _, op := range []driver.Op{driver.OpInit, driver.OpDriverVersion, driver.OpDeviceCount, driver.OpDeviceName,
		driver.OpDeviceTotalMem, driver.OpDeviceAttribute, driver.OpDeviceUUID, driver.OpDevicePCIBusID, driver.OpCtxGetCurrent,
		driver.OpMemGetInfo, driver.OpMemAlloc, driver.OpMemcpyHtoD, driver.OpMemcpyDtoH, driver.OpMemHostAlloc,
		driver.OpStreamCreate, driver.OpStreamWaitEvent, driver.OpMemcpyHtoDAsync, driver.OpMemcpyDtoHAsync, driver.OpEventCreate} {
		assert.Contains(t, v.Adapters, op)
	}
	for _, op := range []driver.Op{driver.OpSetDevice, driver.OpCtxSetCurrent, driver.OpSynchronize, driver.OpMemFree,
		driver.OpMemFreeHost, driver.OpStreamSynchronize, driver.OpStreamDestroy, driver.OpEventRecord,
		driver.OpEventSynchronize, driver.OpEventElapsedTime, driver.OpEventDestroy} {
		assert.NotContains(t, v.Adapters, op, "%s has CUDA's shape", op)
	}
	for op := range v.Adapters {
		if op != driver.OpDeviceGet {
			assert.Contains(t, v.Symbols, op, "an adapter of a bound function")
		}
	}

	assert.Equal(t, 101, v.Attributes.MultiprocessorCount, "ACL_DEV_ATTR_AICORE_CORE_NUM")
	assert.Negative(t, v.Attributes.ComputeCapabilityMajor, "no compute capability")
	assert.Negative(t, v.Attributes.ComputeCapabilityMinor)
	drivertest.CheckVersions(t, v, [3]int{80500000, 8, 5}, [3]int{90100000, 9, 1}, [3]int{80501000, 8, 5}, [3]int{100000000, 10, 0})
}

func TestResults(t *testing.T) {
	drivertest.CheckResults(t, Vendor(), `^ACL_ERROR_[A-Z0-9_]+$`, map[int][]error{
		100000: {device.ErrInvalidValue},
		100001: {driver.ErrNotInitialized},
		100002: nil, // aclInit's repeat: success through the adapter
		100029: {device.ErrNotFound},
		100039: {driver.ErrStubLibrary, device.ErrNotAvailable},
		107000: {device.ErrInvalidValue},
		107001: {device.ErrInvalidIndex},
		107002: {driver.ErrInvalidContext},
		107017: {device.ErrInvalidValue},
		200000: {device.ErrOutOfMemory},
		200001: {device.ErrNotSupported},
		200002: {device.ErrInvalidIndex},
		200006: {device.ErrNotSupported},
		207000: {device.ErrNotSupported},
		207001: {device.ErrOutOfMemory},
		207004: {driver.ErrNoDevice, device.ErrNotAvailable},
		207018: {device.ErrOutOfMemory},
		500000: nil,
		507004: {device.ErrNotReady},
		507006: {device.ErrNotReady},
		507008: {device.ErrInvalidImage},
		507015: {device.ErrLaunchFailed},
		507027: {device.ErrNotFound},
		507035: {device.ErrLaunchFailed},
	})
	names := map[string]int{}
	for code, r := range Results {
		assert.Positive(t, code, "ACL_SUCCESS is 0, not a result")
		if c, dup := names[r.Name]; dup {
			t.Errorf("%s names %d and %d", r.Name, c, code)
		}
		names[r.Name] = code
	}
	assert.Len(t, Results, 199, "every code of acl_base_rt.h and rt_error_codes.h (CANN 8.5.0)")
	assert.Equal(t, "ACL_ERROR_RT_MEMORY_ALLOCATION", Vendor().ResultName(207001))
	assert.Equal(t, "ACL_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054))
	// The fake's translation lands on the codes the kit expects.
	for cuda, acl := range fakeCodes {
		_, ok := Results[acl]
		assert.True(t, ok, "CUDA's %d is %d, which the table names", cuda, acl)
	}
}

// TestAdapterCopyCString: the name adapter cuts and terminates like
// cuDeviceGetName.
func TestAdapterCopyCString(t *testing.T) {
	buf := make([]byte, 8)
	copy(buf, "xxxxxxxx")
	copyCString(uintptrOf(buf), 4, "Ascend910B3")
	assert.Equal(t, "Asc\x00xxxx", string(buf))
	copyCString(uintptrOf(buf), len(buf), "910")
	assert.Equal(t, "910\x00", string(buf[:4]))
	copyCString(uintptrOf(buf), 0, "x")
	assert.True(t, strings.HasPrefix(string(buf), "910\x00"), "a zero-length buffer is left alone")
	runtime.KeepAlive(buf)
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
