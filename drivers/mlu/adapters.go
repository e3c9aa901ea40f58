package mlu

import (
	"strings"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// Adapters call the CNDrv functions whose C shape differs from CUDA's. Each
// gets CUDA's arguments (driver.Op gives them) and returns the CNresult;
// the prototypes are cn_api.h's (CNDrv 2.15.5).
var Adapters = map[driver.Op]driver.Adapter{
	driver.OpDriverVersion:     driverVersion,
	driver.OpErrorName:         errorName,
	driver.OpMemHostAlloc:      mallocHost,
	driver.OpModuleLoadData:    moduleLoadFatBinary,
	driver.OpModuleGetFunction: moduleGetKernel,
	driver.OpModuleGetGlobal:   moduleGetSymbol,
	driver.OpStreamWaitEvent:   queueWaitNotifier,
	driver.OpDeviceUUID:        deviceUUID,
}

// cnOpsNotSupported is CN_OPS_ERROR_NOT_SUPPORTED, which reads as
// device.ErrNotSupported: the device has no UUID flagshim can tell.
const cnOpsNotSupported = 100050

// deviceUUID: CNresult cnDeviceGetUuidStr(char *uuid_str, int len, CNdev
// dev), "Returns a 36-byte UUID string" (cn_api.h, CNDrv 2.15.5), which
// cnDeviceGetByUuidStr takes back as the string "obtained through
// ::cnDeviceGetUuidStr() or CNDEV APIs": the UUID CNDev gives, so the exact
// tier and the presence tier name an MLU alike (letter case aside: UUIDs
// are written in lower case). Its 32 hex digits become CUDA's 16 bytes; a
// string of another shape is no UUID. Where the library has only
// cnDeviceGetUuid (CNuuid, char uuid[16]) it is called as CUDA's.
func deviceUUID(fn *clib.Func, args ...uintptr) int {
	if fn.Name() != "cnDeviceGetUuidStr" {
		return fn.CallCode(args...)
	}
	var buf [40]byte // 36 characters and the NUL, as torch_mlu passes 40
	if r := fn.CallCode(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), args[1]); r != 0 {
		return r
	}
	u, ok := parseUUID(clib.CString(buf[:]))
	if !ok {
		return cnOpsNotSupported
	}
	copy((*[16]byte)(clib.Ptr(args[0]))[:], u[:])
	return 0
}

// parseUUID reads "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex, any case).
func parseUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	hex := s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	for i := range u {
		hi, lo := unhex(hex[2*i]), unhex(hex[2*i+1])
		if hi < 0 || lo < 0 {
			return u, false
		}
		u[i] = byte(hi<<4 | lo)
	}
	return u, true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// cnInvalidValue is CN_ERROR_INVALID_VALUE, what an adapter answers for
// arguments CNDrv cannot take.
const cnInvalidValue = 100006

// driverVersion: CNresult cnDriverGetVersion(int *major, int *minor, int
// *patch), "the latest CNDrv version supported by MLU driver", composed
// into CUDA's one number with cn_api.h's CN_VERSION formula: major*100000 +
// minor*1000 + patch (2.15.5 is 215005). CUDA: (int *version).
func driverVersion(fn *clib.Func, args ...uintptr) int {
	var major, minor, patch int32
	r := fn.CallCode(uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)), uintptr(unsafe.Pointer(&patch)))
	if r == 0 {
		*(*int32)(clib.Ptr(args[0])) = major*versionBase + minor*1000 + patch
	}
	return r
}

// errorName: CNresult cnGetErrorName(CNresult error, const char **pStr),
// CUDA's shape, except that for a code it does not know it succeeds with
// the sentence "This error code is not in the scope of the CNresult
// enumeration" (cn_api.h): that is no name, so the adapter answers
// CN_ERROR_INVALID_VALUE and the core names the code from its table or
// CN_ERROR_UNKNOWN_CODE_<n>.
func errorName(fn *clib.Func, args ...uintptr) int {
	if r := fn.CallCode(args...); r != 0 {
		return r
	}
	name := clib.GoString(*(*uintptr)(clib.Ptr(args[1])), 128)
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return cnInvalidValue
	}
	return 0
}

// mallocHost: CNresult cnMallocHost(void **paddr, cn_uint64_t bytes) has no
// flags; CUDA's cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
// gets 0 from the core (portable to the allocating context), so only flags
// other than 0 are refused.
func mallocHost(fn *clib.Func, args ...uintptr) int {
	if args[2] != 0 {
		return cnInvalidValue
	}
	return fn.CallCode(args[0], args[1])
}

// moduleLoadFatBinary: CNresult cnModuleLoadFatBinary(const void *fatBin,
// CNmodule *phmod), the image first; CUDA: cuModuleLoadData(CUmodule *m,
// const void *image).
func moduleLoadFatBinary(fn *clib.Func, args ...uintptr) int {
	return fn.CallCode(args[1], args[0])
}

// moduleGetKernel: CNresult cnModuleGetKernel(CNmodule hmod, const char
// *name, CNkernel *phkernel), the output last; CUDA:
// cuModuleGetFunction(CUfunction *f, CUmodule, const char *name).
func moduleGetKernel(fn *clib.Func, args ...uintptr) int {
	return fn.CallCode(args[1], args[2], args[0])
}

// moduleGetSymbol: CNresult cnModuleGetSymbol(CNmodule hmod, const char
// *name, CNaddr *pdptr, cn_uint64_t *pbytes), the outputs last; CUDA:
// cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule, const char
// *name).
func moduleGetSymbol(fn *clib.Func, args ...uintptr) int {
	return fn.CallCode(args[2], args[3], args[0], args[1])
}

// queueWaitNotifier: cnQueueWaitNotifierWithFlags(CNqueue, CNnotifier,
// unsigned int flags) is CUDA's cuStreamWaitEvent; a library without it
// has only CNresult cnQueueWaitNotifier(CNqueue hqueue, CNnotifier
// hnotifier), which takes no flags (the core passes 0: CN_NOTIFIER_WAIT_DEFAULT).
func queueWaitNotifier(fn *clib.Func, args ...uintptr) int {
	if fn.Name() != "cnQueueWaitNotifier" {
		return fn.CallCode(args...)
	}
	if args[2] != 0 {
		return cnInvalidValue
	}
	return fn.CallCode(args[0], args[1])
}
