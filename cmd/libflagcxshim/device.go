package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// FlagCX's device fields (synchronize, the device count and selection,
// the vendor, properties, PCI bus ids, dma-buf) and IPC memory handles.

func deviceSynchronize(dev int) result {
	return call("deviceSynchronize", func(b *driver.Backend) error { return b.Synchronize(dev) })
}

// setDevice makes dev's context current on the calling thread, as
// cudaSetDevice does (FlagCX's other libraries, NCCL, use it); the C side
// keeps dev as the thread's device for the plugin's own calls.
func setDevice(dev int) result {
	if dev < 0 {
		return bad("setDevice", fmt.Sprintf("device %d", dev))
	}
	r := call("setDevice", func(b *driver.Backend) error { return b.Select(dev) })
	if r == resSuccess {
		publish(dev)
	}
	return r
}

func getDeviceCount(out uintptr) result {
	const fn = "getDeviceCount"
	if out == 0 {
		return bad(fn, "count is NULL")
	}
	return call(fn, func(b *driver.Backend) error {
		n, err := b.DeviceCount()
		if err == nil {
			*(*int32)(clib.Ptr(out)) = int32(n)
		}
		return err
	})
}

// getVendor writes FlagCX's name of whose runtime answers (vendorOf) into
// FlagCX's 128-byte buffer.
func getVendor(out uintptr) result {
	const fn = "getVendor"
	if out == 0 {
		return bad(fn, "vendor is NULL")
	}
	return call(fn, func(b *driver.Backend) error {
		putC(out, 128, vendorOf(b))
		return nil
	})
}

// putC writes s and a NUL into the n bytes at out, cut to fit.
func putC(out uintptr, n int, s string) {
	if n <= 0 {
		return
	}
	buf := cBytes(out, uint64(n))
	k := copy(buf[:n-1], s)
	buf[k] = 0
}

// getDeviceProperties fills struct flagcxDevProps: name[256], then the
// PCI bus, device and domain numbers parsed from the driver's bus id.
func getDeviceProperties(out uintptr, dev int) result {
	const fn = "getDeviceProperties"
	if out == 0 || dev < 0 {
		return bad(fn, fmt.Sprintf("props %#x, device %d", out, dev))
	}
	return call(fn, func(b *driver.Backend) error {
		p, err := b.Properties(dev)
		if err != nil {
			return err
		}
		putC(out, 256, p.Name)
		ids := (*[3]int32)(clib.Ptr(out + 256))
		ids[0], ids[1], ids[2] = 0, 0, 0
		id, err := b.PCIBusID(dev)
		if err != nil {
			return nil // the name is known; the bus numbers stay 0 where the driver cannot say
		}
		domain, bus, devno, ok := parseBusID(id)
		if ok {
			ids[0], ids[1], ids[2] = int32(bus), int32(devno), int32(domain)
		}
		return nil
	})
}

// parseBusID splits "domain:bus:device.function" (hex).
func parseBusID(id string) (domain, bus, dev uint64, ok bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	df := strings.SplitN(parts[2], ".", 2)
	var err [3]error
	domain, err[0] = strconv.ParseUint(parts[0], 16, 32)
	bus, err[1] = strconv.ParseUint(parts[1], 16, 8)
	dev, err[2] = strconv.ParseUint(df[0], 16, 8)
	return domain, bus, dev, err[0] == nil && err[1] == nil && err[2] == nil
}

// getDevicePciBusId writes the driver's bus id, cut to len with its NUL,
// as cudaDeviceGetPCIBusId does.
func getDevicePciBusId(out uintptr, n, dev int) result {
	const fn = "getDevicePciBusId"
	if out == 0 || n <= 0 || dev < 0 {
		return bad(fn, fmt.Sprintf("buffer %#x of %d bytes, device %d", out, n, dev))
	}
	return call(fn, func(b *driver.Backend) error {
		id, err := b.PCIBusID(dev)
		if err == nil {
			putC(out, n, id)
		}
		return err
	})
}

// maxBusIDRead bounds the bus id FlagCX passes (a C string of at most 64
// bytes is read; "00000000:18:00.0" is 16).
const maxBusIDRead = 64

func getDeviceByPciBusId(out, id uintptr) result {
	const fn = "getDeviceByPciBusId"
	if out == 0 || id == 0 {
		return bad(fn, "a NULL argument")
	}
	s := clib.GoString(id, maxBusIDRead)
	return call(fn, func(b *driver.Backend) error {
		i, err := b.DeviceByPCIBusID(s)
		if err == nil {
			*(*int32)(clib.Ptr(out)) = int32(i)
		}
		return err
	})
}

// dmaSupport says whether the thread's device exports dma-bufs; a backend
// that cannot say answers false (logged at debug), never a failure.
func dmaSupport(dev int, out uintptr) result {
	const fn = "dmaSupport"
	if out == 0 {
		return bad(fn, "dmaBufferSupport is NULL")
	}
	*(*bool)(clib.Ptr(out)) = false
	return call(fn, func(b *driver.Backend) error {
		ok, err := b.DMABufSupported(dev)
		if err != nil {
			the.logger().Debug("dma-buf: not supported", zap.Error(err))
			return nil
		}
		*(*bool)(clib.Ptr(out)) = ok
		return nil
	})
}

// getHandleForAddressRange exports [buffer, buffer+size) as a dma-buf
// descriptor written to handleOut (an int *), with FlagCX's flags.
func getHandleForAddressRange(dev int, out, buffer uintptr, size, flags uint64) result {
	const fn = "getHandleForAddressRange"
	if out == 0 || buffer == 0 {
		return bad(fn, "a NULL argument")
	}
	return call(fn, func(b *driver.Backend) error {
		fd, err := b.DMABufFDWith(dev, device.Ptr(buffer), size, flags)
		if err == nil {
			*(*int32)(clib.Ptr(out)) = int32(fd)
		}
		return err
	})
}

// ---- IPC memory handles: flat 64-byte C blocks ----

// ipcHandles are the blocks ipcMemHandleCreate allocated, so that
// ipcMemHandleFree frees nothing else.
var ipcHandles sync.Map // address -> struct{}

func ipcMemHandleCreate(out, size uintptr) result {
	const fn = "ipcMemHandleCreate"
	if out == 0 {
		return bad(fn, "handle is NULL")
	}
	p := cAlloc(device.IPCHandleSize)
	if p == 0 {
		return fail(fn, fmt.Errorf("calloc of %d bytes failed", device.IPCHandleSize))
	}
	ipcHandles.Store(p, struct{}{})
	*(*uintptr)(clib.Ptr(out)) = p
	if size != 0 {
		*(*uint64)(clib.Ptr(size)) = device.IPCHandleSize
	}
	return resSuccess
}

func ipcMemHandleGet(dev int, h, p uintptr) result {
	const fn = "ipcMemHandleGet"
	if h == 0 || p == 0 {
		return bad(fn, "a NULL handle or pointer")
	}
	return call(fn, func(b *driver.Backend) error {
		got, err := b.IPCHandle(dev, device.Ptr(p))
		if err == nil {
			*(*device.IPCHandle)(clib.Ptr(h)) = got
		}
		return err
	})
}

// ipcMemHandleOpen opens the 64 bytes at h (received from another process:
// FlagCX passes a pointer to them); *out must be NULL, as the built-in
// requires.
func ipcMemHandleOpen(dev int, h, out uintptr) result {
	const fn = "ipcMemHandleOpen"
	if h == 0 || out == 0 {
		return bad(fn, "a NULL handle or devPtr")
	}
	if *(*uintptr)(clib.Ptr(out)) != 0 {
		return bad(fn, "*devPtr is not NULL")
	}
	handle := *(*device.IPCHandle)(clib.Ptr(h))
	return call(fn, func(b *driver.Backend) error {
		p, err := b.OpenIPCHandle(dev, handle)
		if err == nil {
			*(*uintptr)(clib.Ptr(out)) = uintptr(p)
		}
		return err
	})
}

func ipcMemHandleClose(dev int, p uintptr) result {
	if p == 0 {
		return bad("ipcMemHandleClose", "devPtr is NULL")
	}
	return call("ipcMemHandleClose", func(b *driver.Backend) error { return b.CloseIPCHandle(dev, device.Ptr(p)) })
}

func ipcMemHandleFree(h uintptr) result {
	if h == 0 {
		return resSuccess
	}
	if _, ok := ipcHandles.LoadAndDelete(h); !ok {
		return bad("ipcMemHandleFree", fmt.Sprintf("%#x is not a handle ipcMemHandleCreate made", h))
	}
	cFree(h)
	return resSuccess
}
