package main

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// FlagCX's memory fields: deviceMemcpy, deviceMemset (its device and
// managed kinds: the C side sets host memory itself), deviceMalloc and
// deviceFree, hostGetDevicePointer, gdrMemAlloc and gdrMemFree. dev is the
// calling thread's device (setDevice's, kept per thread by the C side as
// the CUDA runtime keeps cudaSetDevice's).

// The kinds FlagCX passes (flagcx.h's flagcxMemcpyType_t and
// flagcxMemType_t).
const (
	memcpyHtoD = 0
	memcpyDtoH = 1
	memcpyDtoD = 2

	memHost    = 0
	memDevice  = 1
	memManaged = 2
)

// hostBuffers are deviceMalloc's pinned host allocations, by address, for
// deviceFree and hostGetDevicePointer.
var hostBuffers sync.Map // uintptr -> *driver.HostBuffer

// cBytes is n bytes of C memory at p as a Go slice (never Go memory).
func cBytes(p uintptr, n uint64) []byte { return unsafe.Slice((*byte)(clib.Ptr(p)), n) }

func deviceMemcpy(dev int, dst, src uintptr, size uint64, kind int, stream uintptr) result {
	const fn = "deviceMemcpy"
	if size == 0 {
		return resSuccess
	}
	if dst == 0 || src == 0 {
		return bad(fn, fmt.Sprintf("dst %#x, src %#x: a NULL pointer for %d bytes", dst, src, size))
	}
	if kind < memcpyHtoD || kind > memcpyDtoD {
		return bad(fn, fmt.Sprintf("unknown copy kind %d (0 host to device, 1 device to host, 2 device to device)", kind))
	}
	if stream != 0 {
		st, r := streamArg(fn, stream)
		if r != resSuccess {
			return r
		}
		var err error
		switch kind {
		case memcpyHtoD:
			err = st.CopyHtoDAddr(device.Ptr(dst), src, size)
		case memcpyDtoH:
			err = st.CopyDtoHAddr(dst, device.Ptr(src), size)
		default:
			err = st.CopyDtoD(device.Ptr(dst), device.Ptr(src), size)
		}
		if err != nil {
			return fail(fn, err)
		}
		return resSuccess
	}
	return call(fn, func(b *driver.Backend) error {
		switch kind {
		case memcpyHtoD:
			return b.CopyHtoD(dev, device.Ptr(dst), cBytes(src, size))
		case memcpyDtoH:
			return b.CopyDtoH(dev, cBytes(dst, size), device.Ptr(src))
		}
		return b.CopyDtoD(dev, device.Ptr(dst), device.Ptr(src), size)
	})
}

// deviceMemset sets device or managed memory (value's low byte, as
// cudaMemset); the C side sets host memory itself.
func deviceMemset(dev int, ptr uintptr, value int, size uint64, kind int, stream uintptr) result {
	const fn = "deviceMemset"
	if kind != memDevice && kind != memManaged {
		return bad(fn, fmt.Sprintf("unknown memory type %d (0 host, 1 device, 2 managed)", kind))
	}
	if size == 0 {
		return resSuccess
	}
	if ptr == 0 {
		return bad(fn, "a NULL pointer")
	}
	v := uint32(byte(value))
	if stream != 0 {
		st, r := streamArg(fn, stream)
		if r != resSuccess {
			return r
		}
		if err := st.Memset(device.Ptr(ptr), v, 1, size); err != nil {
			return fail(fn, err)
		}
		return resSuccess
	}
	return call(fn, func(b *driver.Backend) error { return b.Memset(dev, device.Ptr(ptr), v, 1, size) })
}

// deviceMalloc allocates pinned, mapped host memory (cudaHostAlloc's
// cudaHostAllocMapped), managed memory, or device memory (on a stream: in
// stream order). 0 bytes give NULL, as cudaMalloc.
func deviceMalloc(dev int, out uintptr, size uint64, kind int, stream uintptr) result {
	const fn = "deviceMalloc"
	if out == 0 {
		return bad(fn, "ptr is NULL")
	}
	ptr := (*uintptr)(clib.Ptr(out))
	*ptr = 0
	if kind < memHost || kind > memManaged {
		return bad(fn, fmt.Sprintf("unknown memory type %d (0 host, 1 device, 2 managed)", kind))
	}
	if size == 0 {
		return resSuccess
	}
	var st *driver.Stream
	if stream != 0 && kind == memDevice {
		var r result
		if st, r = streamArg(fn, stream); r != resSuccess {
			return r
		}
	}
	r := call(fn, func(b *driver.Backend) error {
		switch kind {
		case memHost:
			hb, err := b.AllocHostMapped(dev, size)
			if err != nil {
				return err
			}
			hostBuffers.Store(hb.Addr(), hb)
			*ptr = hb.Addr()
			return nil
		case memManaged:
			p, err := b.AllocManaged(dev, size)
			*ptr = uintptr(p)
			return err
		}
		var p device.Ptr
		var err error
		if st != nil {
			p, err = st.Alloc(size)
		} else {
			p, err = b.Alloc(dev, size)
		}
		*ptr = uintptr(p)
		return err
	})
	if r == resSuccess && kind == memDevice {
		publish(dev) // the next allocations on dev are direct calls
	}
	return r
}

// deviceFree frees what deviceMalloc allocated; NULL is nothing to free.
func deviceFree(dev int, p uintptr, kind int, stream uintptr) result {
	const fn = "deviceFree"
	if kind < memHost || kind > memManaged {
		return bad(fn, fmt.Sprintf("unknown memory type %d (0 host, 1 device, 2 managed)", kind))
	}
	if p == 0 {
		return resSuccess
	}
	if kind == memHost {
		v, ok := hostBuffers.LoadAndDelete(p)
		if !ok {
			return bad(fn, fmt.Sprintf("%#x is not host memory deviceMalloc allocated", p))
		}
		if err := v.(*driver.HostBuffer).Free(); err != nil {
			return fail(fn, err)
		}
		return resSuccess
	}
	if stream != 0 && kind == memDevice {
		st, r := streamArg(fn, stream)
		if r != resSuccess {
			return r
		}
		if err := st.Free(device.Ptr(p)); err != nil {
			return fail(fn, err)
		}
		return resSuccess
	}
	return call(fn, func(b *driver.Backend) error { return b.Free(dev, device.Ptr(p)) })
}

func hostGetDevicePointer(dev int, out, host uintptr) result {
	const fn = "hostGetDevicePointer"
	if out == 0 || host == 0 {
		return bad(fn, "a NULL pointer")
	}
	return call(fn, func(b *driver.Backend) error {
		p, err := b.HostDevicePointer(dev, host)
		if err == nil {
			*(*uintptr)(clib.Ptr(out)) = uintptr(p)
		}
		return err
	})
}

// gdrMemAlloc allocates device memory for GPUDirect RDMA: plain device
// memory (the built-in's path without FlagCX's VMM, FLAGCX_VMM_ENABLE=0);
// memHandle is not used.
func gdrMemAlloc(dev int, out uintptr, size uint64) result {
	const fn = "gdrMemAlloc"
	if out == 0 {
		return bad(fn, "ptr is NULL")
	}
	return call(fn, func(b *driver.Backend) error {
		p, err := b.Alloc(dev, size)
		*(*uintptr)(clib.Ptr(out)) = uintptr(p)
		return err
	})
}

func gdrMemFree(dev int, p uintptr) result {
	if p == 0 {
		return resSuccess
	}
	return call("gdrMemFree", func(b *driver.Backend) error { return b.Free(dev, device.Ptr(p)) })
}
