package gpudrv

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/internal/dl"
)

// Device attributes (CUdevice_attribute; MUdevice_attribute has the same
// numbers).
const (
	AttrMultiprocessorCount    = 16
	AttrComputeCapabilityMajor = 75
	AttrComputeCapabilityMinor = 76
)

// Driver is the checked layer: one method per C function, each turning the
// result code into an *Error. Methods that need a context assume the caller
// has locked its OS thread and made one current.
type Driver struct {
	v   *Vendor
	lib *dl.Library
	s   syms
}

// OpenDriver resolves every symbol of lib.
func OpenDriver(v *Vendor, lib *dl.Library) (*Driver, error) {
	d := &Driver{v: v, lib: lib}
	if err := d.s.resolve(v, lib); err != nil {
		return nil, err
	}
	return d, nil
}

// Library is the opened library.
func (d *Driver) Library() *dl.Library { return d.lib }

// Symbol is the name found for a symbol with versions ("DeviceTotalMem" ->
// "cuDeviceTotalMem_v2"); "" when absent.
func (d *Driver) Symbol(base string) string { return d.s.found[base] }

// result truncates a return register to the C enum's 32 bits: the upper half
// of the register is not defined by the ABI.
func result(r uintptr) int { return int(int32(uint32(r))) }

// check turns a result code into an error. It allocates only on failure.
func (d *Driver) check(r uintptr) error {
	code := result(r)
	if code == resultSuccess {
		return nil
	}
	return d.Err(code)
}

// Err builds the *Error of code, asking the driver for its name and message
// (falling back on the table when the driver cannot say).
func (d *Driver) Err(code int) *Error {
	e := &Error{Code: code, v: d.v}
	if d.s.getErrorName != 0 {
		var p uintptr
		if r, _, _ := purego.SyscallN(d.s.getErrorName, uintptr(code), uintptr(unsafe.Pointer(&p))); result(r) == 0 && p != 0 {
			e.Name = goString(p)
		}
	}
	if e.Name == "" {
		e.Name = d.v.ResultName(code)
	}
	if d.s.getErrorString != 0 {
		var p uintptr
		if r, _, _ := purego.SyscallN(d.s.getErrorString, uintptr(code), uintptr(unsafe.Pointer(&p))); result(r) == 0 && p != 0 {
			e.Message = goString(p)
		}
	}
	return e
}

// call0 calls a function of no arguments; it allocates nothing.
func call0(fn uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn)
	return r
}

// call1 calls a function of one argument. The variadic list escapes, so it
// costs one small allocation: hot paths use prebuilt lists instead.
func call1(fn uintptr, a uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, a)
	return r
}

// Init is cuInit(flags).
func (d *Driver) Init(flags uint32) error { return d.check(call1(d.s.init, uintptr(flags))) }

// DriverGetVersion is cuDriverGetVersion.
func (d *Driver) DriverGetVersion() (int, error) {
	var v int32
	r, _, _ := purego.SyscallN(d.s.driverGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), d.check(r)
}

// DeviceGetCount is cuDeviceGetCount.
func (d *Driver) DeviceGetCount() (int, error) {
	var n int32
	r, _, _ := purego.SyscallN(d.s.deviceGetCount, uintptr(unsafe.Pointer(&n)))
	return int(n), d.check(r)
}

// DeviceGet is cuDeviceGet: the handle of the ordinal-th device.
func (d *Driver) DeviceGet(ordinal int) (int32, error) {
	var dev int32
	r, _, _ := purego.SyscallN(d.s.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal))
	return dev, d.check(r)
}

// DeviceGetName is cuDeviceGetName.
func (d *Driver) DeviceGetName(dev int32) (string, error) {
	var buf [256]byte
	r, _, _ := purego.SyscallN(d.s.deviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev))
	if err := d.check(r); err != nil {
		return "", err
	}
	return cString(buf[:]), nil
}

// DeviceTotalMem is cuDeviceTotalMem_v2, or the 32-bit cuDeviceTotalMem of
// old drivers. The result goes to a zeroed 64-bit variable either way: a
// 32-bit writer fills its low half (little-endian), and a library whose
// unversioned symbol is 64-bit cannot write past it.
func (d *Driver) DeviceTotalMem(dev int32) (uint64, error) {
	var n uint64
	r, _, _ := purego.SyscallN(d.s.deviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(dev))
	if !d.v2("DeviceTotalMem") {
		n &= 0xffffffff
	}
	return n, d.check(r)
}

// v2 reports whether the symbol with versions base was found under its _v2
// name (64-bit sizes) rather than the legacy one.
func (d *Driver) v2(base string) bool { return strings.HasSuffix(d.s.found[base], "_v2") }

// DeviceGetAttribute is cuDeviceGetAttribute.
func (d *Driver) DeviceGetAttribute(attr int, dev int32) (int, error) {
	var v int32
	r, _, _ := purego.SyscallN(d.s.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(dev))
	return int(v), d.check(r)
}

// DeviceGetUuid is cuDeviceGetUuid_v2 (or cuDeviceGetUuid); ok is false
// when the library has neither.
func (d *Driver) DeviceGetUuid(dev int32) (uuid [16]byte, ok bool, err error) {
	if d.s.deviceGetUuid == 0 {
		return uuid, false, nil
	}
	r, _, _ := purego.SyscallN(d.s.deviceGetUuid, uintptr(unsafe.Pointer(&uuid[0])), uintptr(dev))
	return uuid, true, d.check(r)
}

// DeviceGetPCIBusId is cuDeviceGetPCIBusId; ok is false when the library
// lacks it.
func (d *Driver) DeviceGetPCIBusId(dev int32) (id string, ok bool, err error) {
	if d.s.deviceGetPCIBusId == 0 {
		return "", false, nil
	}
	var buf [64]byte
	r, _, _ := purego.SyscallN(d.s.deviceGetPCIBusId, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev))
	if err := d.check(r); err != nil {
		return "", true, err
	}
	return cString(buf[:]), true, nil
}

// DevicePrimaryCtxRetain is cuDevicePrimaryCtxRetain.
func (d *Driver) DevicePrimaryCtxRetain(dev int32) (uintptr, error) {
	var ctx uintptr
	r, _, _ := purego.SyscallN(d.s.primaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(dev))
	return ctx, d.check(r)
}

// CtxSetCurrent is cuCtxSetCurrent on the calling thread.
func (d *Driver) CtxSetCurrent(ctx uintptr) error { return d.check(call1(d.s.ctxSetCurrent, ctx)) }

// CtxSynchronize is cuCtxSynchronize of the calling thread's context.
// Allocation-free when it succeeds.
func (d *Driver) CtxSynchronize() error {
	r, _, _ := purego.SyscallN(d.s.ctxSynchronize)
	return d.check(r)
}

// CtxGetCurrent is cuCtxGetCurrent; ok is false when the library lacks it.
func (d *Driver) CtxGetCurrent() (ctx uintptr, ok bool, err error) {
	if d.s.ctxGetCurrent == 0 {
		return 0, false, nil
	}
	r, _, _ := purego.SyscallN(d.s.ctxGetCurrent, uintptr(unsafe.Pointer(&ctx)))
	return ctx, true, d.check(r)
}

// MemGetInfo is cuMemGetInfo_v2 in the current context; ok is false when the
// library lacks it.
func (d *Driver) MemGetInfo() (free, total uint64, ok bool, err error) {
	if d.s.memGetInfo == 0 {
		return 0, 0, false, nil
	}
	r, _, _ := purego.SyscallN(d.s.memGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	if !d.v2("MemGetInfo") {
		free, total = free&0xffffffff, total&0xffffffff
	}
	return free, total, true, d.check(r)
}

// cString is the text of a NUL-terminated buffer (all of it when there is no
// NUL).
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// FormatUUID writes 16 bytes the way nvidia-smi does, with prefix:
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
func FormatUUID(prefix string, u [16]byte) string {
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// ptr turns an address owned by C into a pointer without tripping go vet's
// unsafeptr check; the memory is not managed by Go.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// goString copies the NUL-terminated C string at p (static strings of the
// driver, such as cuGetErrorName's).
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	base := ptr(p)
	n := 0
	for n < 4096 && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}
