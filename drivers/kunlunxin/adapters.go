package kunlunxin

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// XRE 4.33's numbers (mobius/kunlun_k200 kunlun-driver/include/xpu/
// runtime.h and defs.h).
const (
	attrPCIAddress = 0 // XPUATTR_PCI_ADDRESS: bits [31:16] domain, [15:8] bus, [7:3] slot, [2:0] function
	attrModel      = 4 // XPUATTR_MODEL: a DeviceModel (defs.h)
	attrNumCluster = 7 // XPUATTR_NUM_CLUSTER

	deviceToHost = 0 // XPU_DEVICE_TO_HOST (XPUMemcpyKind: not CUDA's order)
	hostToDevice = 1 // XPU_HOST_TO_DEVICE

	memMain = 0 // XPU_MEM_MAIN (XPUMemoryKind), xpu_malloc's C++ default

	xpuSuccess      = 0   // XPU_SUCCESS
	xpuInvalidParam = 707 // XPUERR_INVALID_PARAM
	xpuNoSupport    = 712 // XPUERR_NOSUPPORT
)

// Attribute numbers that are not XPUDeviceAttr's, which the
// OpDeviceAttribute adapter answers itself. attrGeneration is beyond
// XPUDeviceAttr's range (0..7 in XRE 4.33) and non-negative, so that the
// core asks for it (a negative number is "no such attribute": never asked,
// unknown); attrNone is that negative number, answered XPUERR_NOSUPPORT
// should it ever be asked.
const (
	attrGeneration = 1 << 16 // XPUATTR_MODEL's generation (see generation)
	attrNone       = -1      // no counterpart: unknown
)

// Adapters call XRE's functions given CUDA's arguments (driver.Op gives
// them); each cites its prototype (xpu/runtime.h, XRE 4.33.0).
var Adapters = map[driver.Op]driver.Adapter{
	// int xpu_device_count(int* dev_count): XRE has no init; its first call
	// initializes it, so init is a count whose answer is dropped (the
	// flags, always 0, have no counterpart).
	driver.OpInit: func(fn *clib.Func, _ ...uintptr) int {
		var n int32
		return fn.CallCode(uintptr(unsafe.Pointer(&n)))
	},
	// int xpu_get_driver_version(uint32_t* major, uint32_t* minor), encoded
	// as major*10000 + minor*100 (VersionBase 10000). A minor above 99
	// cannot be: the version is then unknown (XPUERR_NOSUPPORT).
	driver.OpDriverVersion: func(fn *clib.Func, args ...uintptr) int {
		var major, minor uint32
		if c := fn.CallCode(uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); c != xpuSuccess {
			return c
		}
		if minor > 99 || major > math.MaxInt32/10000-1 {
			return xpuNoSupport
		}
		*(*int32)(clib.Ptr(args[0])) = int32(major*10000 + minor*100)
		return xpuSuccess
	},
	// The device is its ordinal: nothing is called.
	driver.OpDeviceGet: func(_ *clib.Func, args ...uintptr) int {
		*(*int32)(clib.Ptr(args[0])) = int32(args[1])
		return xpuSuccess
	},
	driver.OpDeviceAttribute: attribute,
	// The name of XPUATTR_MODEL's board (ModelName).
	driver.OpDeviceName: func(fn *clib.Func, args ...uintptr) int {
		var model uint64
		if c := fn.CallCode(uintptr(unsafe.Pointer(&model)), attrModel, args[2]); c != xpuSuccess {
			return c
		}
		return putString(args[0], args[1], ModelName(model))
	},
	// XPUATTR_PCI_ADDRESS, written as XPUML writes bus ids
	// (XPUML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.%01X", xpuml.h), so that
	// both tiers agree.
	driver.OpDevicePCIBusID: func(fn *clib.Func, args ...uintptr) int {
		var a uint64
		if c := fn.CallCode(uintptr(unsafe.Pointer(&a)), attrPCIAddress, args[2]); c != xpuSuccess {
			return c
		}
		return putString(args[0], args[1], fmt.Sprintf("%08X:%02X:%02X.%X", a>>16&0xffff, a>>8&0xff, a>>3&0x1f, a&7))
	},
	// int xpu_wait(XPUStream stream) with NULL: the default stream.
	driver.OpSynchronize: func(fn *clib.Func, _ ...uintptr) int { return clib.Code(fn.CallList(nullStream[:])) },
	// int xpu_malloc(void** pdevptr, uint64_t sz, XPUMemoryKind kind): the
	// kind is C++'s default argument, which C callers pass: XPU_MEM_MAIN.
	driver.OpMemAlloc: func(fn *clib.Func, args ...uintptr) int { return fn.CallCode(args[0], args[1], memMain) },
	// int xpu_memcpy(void* dst, const void* src, uint64_t sz, XPUMemcpyKind kind)
	driver.OpMemcpyHtoD: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1], args[2], hostToDevice)
	},
	driver.OpMemcpyDtoH: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1], args[2], deviceToHost)
	},
	// int xpu_stream_create(XPUStream* pstream), int
	// xpu_event_create(XPUEvent *pevent): no flags (the core's are always
	// 0, the default kind; others are refused).
	driver.OpStreamCreate: withoutFlags,
	driver.OpEventCreate:  withoutFlags,
	// int xpu_stream_wait_event(XPUStream stream, XPUEvent event): no flags.
	driver.OpStreamWaitEvent: func(fn *clib.Func, args ...uintptr) int {
		if args[2] != 0 {
			return xpuInvalidParam
		}
		return fn.CallCode(args[0], args[1])
	},
}

// nullStream is xpu_wait's one argument for the default stream, prebuilt
// so that Synchronize allocates nothing. Read-only.
var nullStream = [1]uintptr{0}

// attribute is OpDeviceAttribute on xpu_device_get_attr(uint64_t* v,
// XPUDeviceAttr attr, int devid): the uint64 read, then written as CUDA's
// int; Attributes' own numbers answered here.
func attribute(fn *clib.Func, args ...uintptr) int {
	out := (*int32)(clib.Ptr(args[0]))
	attr, dev := int(int64(args[1])), args[2]
	get := func(a int) (uint64, int) {
		var v uint64
		return v, fn.CallCode(uintptr(unsafe.Pointer(&v)), uintptr(a), dev)
	}
	switch attr {
	case attrNone:
		return xpuNoSupport
	case attrGeneration:
		model, c := get(attrModel)
		if c != xpuSuccess {
			return c
		}
		g, ok := generation(model)
		if !ok {
			return xpuNoSupport
		}
		*out = int32(g)
		return xpuSuccess
	}
	v, c := get(attr)
	if c != xpuSuccess {
		return c
	}
	if v > math.MaxInt32 {
		return xpuNoSupport
	}
	*out = int32(v)
	return xpuSuccess
}

// withoutFlags calls a one-argument create function given CUDA's (out,
// flags): flags 0 is the default kind, anything else XPUERR_INVALID_PARAM.
func withoutFlags(fn *clib.Func, args ...uintptr) int {
	if args[1] != 0 {
		return xpuInvalidParam
	}
	return fn.CallCode(args[0])
}

// putString writes s, NUL-terminated and cut to fit, into the n-byte C
// buffer at p (CUDA's name and bus-id buffers).
func putString(p, n uintptr, s string) int {
	if p == 0 || n == 0 {
		return xpuInvalidParam
	}
	buf := unsafe.Slice((*byte)(clib.Ptr(p)), n)
	k := copy(buf[:n-1], s)
	buf[k] = 0
	return xpuSuccess
}
