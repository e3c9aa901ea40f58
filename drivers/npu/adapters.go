package npu

import (
	"math"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// The adapters: each calls an AscendCL function whose C shape differs from
// the CUDA shape driver.Op documents, given CUDA's arguments (args). The
// prototype is RT85's (vendor.go names the sources) beside each.

// AscendCL's numbers the adapters pass (RT85).
const (
	aclErrorRepeatInitialize = 100002 // ACL_ERROR_REPEAT_INITIALIZE, acl_base_rt.h:65
	aclErrorFailure          = 500001 // ACL_ERROR_FAILURE, acl_base_rt.h:130
	aclErrorRtContextNull    = 107002 // ACL_ERROR_RT_CONTEXT_NULL, error_codes/rt_error_codes.h
	aclHBMMem                = 1      // ACL_HBM_MEM, the second aclrtMemAttr (acl_rt.h:179-181)
	aclMemMallocHugeFirst    = 0      // ACL_MEM_MALLOC_HUGE_FIRST, the first aclrtMemMallocPolicy (acl_rt.h:131-132)
	aclMemcpyHostToDevice    = 1      // ACL_MEMCPY_HOST_TO_DEVICE, aclrtMemcpyKind (acl_rt.h:120-122)
	aclMemcpyDeviceToHost    = 2      // ACL_MEMCPY_DEVICE_TO_HOST, the next one
)

// versionPackage is aclsysGetVersionNum's pkgName: the runtime package,
// whose version.info is ${ASCEND_HOME_PATH}/share/info/runtime/version.info
// (RTSRC src/acl/aclrt_impl/acl.cpp: kMapToPkgName maps ACL_PKG_NAME_CANN
// and ACL_PKG_NAME_RUNTIME to "runtime"; GetVersionByPkgName). A global, so
// the C function reads memory that never moves.
var versionPackage = [...]byte{'r', 'u', 'n', 't', 'i', 'm', 'e', 0}

// Adapters are AscendCL's shapes, by operation.
var Adapters = map[driver.Op]driver.Adapter{
	// aclError aclInit(const char *configPath) (794): NULL is an empty JSON
	// configuration (RTSRC acl_rt_impl_base.cpp GetStrFromConfigPath). A
	// process that initialized AscendCL already (torch_npu, say) gets
	// ACL_ERROR_REPEAT_INITIALIZE, which counts a reference and is success
	// ("您可以忽略该错误", docs/zh/api_ref/02_initialization_and_deinitialization.md;
	// acl.cpp aclInitImpl).
	driver.OpInit: func(fn *clib.Func, _ ...uintptr) int {
		if r := fn.CallCode(0); r != aclErrorRepeatInitialize {
			return r
		}
		return 0
	},

	// aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) (865,
	// CANN 8.5+): major*10000000 + minor*100000 + patch*1000, less 300, 200
	// or 100 for an alpha, beta or rc, plus its number (acl.cpp
	// CalculateVersionNum): 8.5.0 is 80500000 and 8.5.0-rc1 80499901. A
	// pre-release is rounded up to its patch's thousand (80500000) so that
	// major and minor decode right. Old-style strings ("8.1.RC1") are an
	// error: the version is then unknown.
	driver.OpDriverVersion: func(fn *clib.Func, args ...uintptr) int {
		var v int32
		if r := fn.CallCode(uintptr(unsafe.Pointer(&versionPackage[0])), uintptr(unsafe.Pointer(&v))); r != 0 {
			return r
		}
		if v > 0 && v%1000 != 0 && v <= math.MaxInt32-1000 {
			v = (v/1000 + 1) * 1000
		}
		*(*int32)(clib.Ptr(args[0])) = v
		return 0
	},

	// aclError aclrtGetDeviceCount(uint32_t *count) (1325): unsigned; a count
	// past 2^31-1 is clamped there so that the core refuses it as too many
	// instead of reading it as negative.
	driver.OpDeviceCount: func(fn *clib.Func, args ...uintptr) int {
		var n uint32
		r := fn.CallCode(uintptr(unsafe.Pointer(&n)))
		*(*int32)(clib.Ptr(args[0])) = int32(min(n, math.MaxInt32))
		return r
	},

	// No function: AscendCL's calls take the device's ordinal (int32_t
	// deviceId: the user device id, after ASCEND_RT_VISIBLE_DEVICES), so
	// the handle is the ordinal.
	driver.OpDeviceGet: func(_ *clib.Func, args ...uintptr) int {
		*(*int32)(clib.Ptr(args[0])) = int32(args[1])
		return 0
	},

	// const char *aclrtGetSocName() (acl_base_rt.h:363): the process's SoC
	// name, for every device (AscendCL has no per-device name); NULL is a
	// failure, answered as ACL_ERROR_FAILURE.
	driver.OpDeviceName: func(fn *clib.Func, args ...uintptr) int {
		p := fn.Call()
		if p == 0 {
			return aclErrorFailure
		}
		copyCString(args[0], int(args[1]), clib.GoString(p, clib.MaxCString))
		return 0
	},

	// aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr,
	// int64_t *value) (3272, 8.5+) with ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
	// in bytes.
	driver.OpDeviceTotalMem: func(fn *clib.Func, args ...uintptr) int {
		var v int64
		r := fn.CallCode(args[1], aclDevAttrTotalGlobalMemSize, uintptr(unsafe.Pointer(&v)))
		if r == 0 {
			*(*uint64)(clib.Ptr(args[0])) = uint64(max(v, 0))
		}
		return r
	},

	// aclrtGetDeviceInfo again: device first, a 64-bit value last; the
	// value is clamped to CUDA's int.
	driver.OpDeviceAttribute: func(fn *clib.Func, args ...uintptr) int {
		var v int64
		r := fn.CallCode(args[2], args[1], uintptr(unsafe.Pointer(&v)))
		if r == 0 {
			*(*int32)(clib.Ptr(args[0])) = int32(min(max(v, math.MinInt32), math.MaxInt32))
		}
		return r
	},

	// aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid) (3305,
	// 8.5+; aclrtUuid is char bytes[16], 679-681): device first.
	driver.OpDeviceUUID: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[1], args[0])
	},

	// aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId,
	// int32_t len) (RTHEAD 4018): device first.
	driver.OpDevicePCIBusID: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[2], args[0], args[1])
	},

	// aclError aclrtGetCurrentContext(aclrtContext *context) (1110): a thread
	// with no context gets ACL_ERROR_RT_CONTEXT_NULL (rtCtxGetCurrent's
	// "special state", RTSRC src/runtime/api/api_c.cc); CUDA's
	// cuCtxGetCurrent answers success and NULL there, and so does this.
	driver.OpCtxGetCurrent: func(fn *clib.Func, args ...uintptr) int {
		r := fn.CallCode(args[0])
		if r == aclErrorRtContextNull {
			*(*uintptr)(clib.Ptr(args[0])) = 0
			return 0
		}
		return r
	},

	// aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t
	// *total) (2454) of the current context's device, with ACL_HBM_MEM
	// (which falls back to DDR on chips without HBM:
	// docs/zh/api_ref/11-01_device_memory_malloc_and_free.md).
	driver.OpMemGetInfo: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(aclHBMMem, args[0], args[1])
	},

	// aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy
	// policy) (1524): huge pages first, as torch_npu's allocator asks
	// (TNPU torch_npu/csrc/core/npu/NPUCachingAllocator.cpp).
	driver.OpMemAlloc: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1], aclMemMallocHugeFirst)
	},

	// aclError aclrtMemcpy(void *dst, size_t destMax, const void *src,
	// size_t count, aclrtMemcpyKind kind) (1839), synchronous.
	driver.OpMemcpyHtoD: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[2], args[1], args[2], aclMemcpyHostToDevice)
	},
	driver.OpMemcpyDtoH: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[2], args[1], args[2], aclMemcpyDeviceToHost)
	},

	// aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
	// size_t count, aclrtMemcpyKind kind, aclrtStream stream) (1889).
	driver.OpMemcpyHtoDAsync: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[2], args[1], args[2], aclMemcpyHostToDevice, args[3])
	},
	driver.OpMemcpyDtoHAsync: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[2], args[1], args[2], aclMemcpyDeviceToHost, args[3])
	},

	// aclError aclrtMallocHost(void **hostPtr, size_t size) (1776): no flags.
	driver.OpMemHostAlloc: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1])
	},

	// aclError aclrtCreateStream(aclrtStream *stream) (2150): no flags.
	driver.OpStreamCreate: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0])
	},

	// aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
	// (2290): no flags.
	driver.OpStreamWaitEvent: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1])
	},

	// aclError aclrtCreateEvent(aclrtEvent *event) (1336): no flags; the
	// event records time (docs/zh/api_ref/07_event_management.md).
	driver.OpEventCreate: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0])
	},
}

// copyCString writes s into the n-byte C buffer at dst, cut to fit and
// NUL-terminated, as cuDeviceGetName fills its buffer.
func copyCString(dst uintptr, n int, s string) {
	if n <= 0 {
		return
	}
	b := unsafe.Slice((*byte)(clib.Ptr(dst)), n)
	k := copy(b[:n-1], s)
	b[k] = 0
}
