package gcu

import (
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// Adapters call the TOPS functions whose C shape differs from CUDA's.
var Adapters = map[driver.Op]driver.Adapter{
	driver.OpDeviceAttribute: computeCapability,
}

// topsErrorNotSupported is topsError_t's topsErrorNotSupported (801).
const topsErrorNotSupported = 801

// computeCapability answers OpDeviceAttribute (cuDeviceGetAttribute(int *v,
// int attr, CUdevice)) for the two compute-capability attributes through
// topsError_t topsDeviceComputeCapability(int *major, int *minor,
// topsDevice_t device) (tops_runtime_api.h line 1244), which names no
// attribute number; any other attribute is topsErrorNotSupported.
func computeCapability(fn *clib.Func, args ...uintptr) int {
	attr := int(args[1])
	if attr != attrComputeCapabilityMajor && attr != attrComputeCapabilityMinor {
		return topsErrorNotSupported
	}
	var major, minor int32
	r := fn.CallCode(uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor)), args[2])
	if r == 0 {
		v := major
		if attr == attrComputeCapabilityMinor {
			v = minor
		}
		*(*int32)(clib.Ptr(args[0])) = v
	}
	return r
}
