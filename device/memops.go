package device

import "fmt"

// More of what a device does, as optional interfaces in the manner of
// database/sql/driver's: a backend (or a stream) that offers an operation
// implements the interface, and a caller asks with the XxxOf helpers, which
// name the backend when it does not. Every vendor's backend (package
// driver's) implements every one (an operation its vendor does not bind, or
// its loaded library lacks, is an error matching ErrNotSupported that names
// what is missing); flagos forwards each to the backend it routes to;
// devicetest's fake machine implements them all. docs/flagcx.md has the
// table of which vendor binds which.

// MemoryOps are device-memory operations beyond Memory's. Every index is a
// device index as in Backend (-1: the current device).
type MemoryOps interface {
	// Memset sets count elements of width bytes (1, 2 or 4) from p to value
	// (its low width bytes), after the work queued before it on the
	// device's default stream. A width other than 1, 2, 4, or a value that
	// does not fit it, is an error matching ErrInvalidValue.
	Memset(index int, p Ptr, value uint32, width int, count uint64) error
	// CopyDtoD copies size bytes of device memory from src to dst.
	CopyDtoD(index int, dst, src Ptr, size uint64) error
	// AllocManaged allocates size bytes of managed (unified) memory,
	// reachable from the host and every device at the same address;
	// Memory.Free releases it.
	AllocManaged(index int, size uint64) (Ptr, error)
	// HostDevicePointer is the device address of pinned host memory at
	// host (an address of a Streams.AllocHost buffer, or of C memory the
	// driver pinned), for kernels and copies that read it in place.
	HostDevicePointer(index int, host uintptr) (Ptr, error)
}

// IPCHandleSize is the size of an IPC memory handle (CUipcMemHandle,
// hipIpcMemHandle_t: 64 bytes).
const IPCHandleSize = 64

// IPCHandle names device memory for another process: flat bytes, no
// pointers, to be sent as they are.
type IPCHandle [IPCHandleSize]byte

// IPC shares device memory between processes.
type IPC interface {
	// IPCHandle is the handle of the allocation that holds p (memory from
	// Memory.Alloc).
	IPCHandle(index int, p Ptr) (IPCHandle, error)
	// OpenIPCHandle maps memory another process named by h into this one,
	// on device index; CloseIPCHandle unmaps it. A handle that names
	// nothing (garbage, a freed allocation) is an error.
	OpenIPCHandle(index int, h IPCHandle) (Ptr, error)
	CloseIPCHandle(index int, p Ptr) error
}

// PCIDevices finds devices by their PCI bus id.
type PCIDevices interface {
	// PCIBusID is device index's PCI bus id as its driver writes it
	// ("00000000:18:00.0" for CUDA, "0000:18:00.0" for HIP).
	PCIBusID(index int) (string, error)
	// DeviceByPCIBusID is the index of the device at busID (any form the
	// driver accepts: "domain:bus:device.function", "bus:device.function");
	// a bus id of no device here is an error matching ErrNotFound or
	// ErrInvalidValue.
	DeviceByPCIBusID(busID string) (int, error)
}

// DMABuf exports device memory as Linux dma-buf file descriptors, for
// RDMA NICs that import them.
type DMABuf interface {
	// DMABufSupported reports whether device index can export dma-bufs
	// (false, nil where the driver says no).
	DMABufSupported(index int) (bool, error)
	// DMABufFD is a new dma-buf descriptor of [p, p+size) of device memory;
	// the caller closes it.
	DMABufFD(index int, p Ptr, size uint64) (fd int, err error)
}

// StreamOps are a Stream's operations beyond Stream's own. A stream of a
// vendor's backend (and so of flagos) or of devicetest implements it.
type StreamOps interface {
	// Query is nil when all the work queued on the stream is done and an
	// error matching ErrNotReady while some is pending; it never waits.
	Query() error
	// Memset queues MemoryOps.Memset's work on the stream.
	Memset(p Ptr, value uint32, width int, count uint64) error
	// CopyDtoD queues a device-to-device copy.
	CopyDtoD(dst, src Ptr, size uint64) error
	// Alloc allocates size bytes in stream order: the memory may be used by
	// work queued on the stream after the call; Free returns it in stream
	// order (after the work queued before the Free).
	Alloc(size uint64) (Ptr, error)
	Free(p Ptr) error
	// WaitValue64 makes later work on the stream wait until the 64-bit
	// value at addr (device memory, or mapped host memory's device
	// address) is at least value; WriteValue64 queues a write of value to
	// addr. Together they order streams, and host and device, without
	// events.
	WaitValue64(addr Ptr, value uint64) error
	WriteValue64(addr Ptr, value uint64) error
	// LaunchHostFunc queues f, to run on a thread of the driver once the
	// work queued before it is done; later work waits for f to return. f
	// must not call the device's API (the drivers forbid it) and must not
	// block for long.
	LaunchHostFunc(f func()) error
}

// EventQuerier is an Event that says whether it has been reached.
type EventQuerier interface {
	// Query is nil when the work before the event's last record is done,
	// an error matching ErrNotReady while it is pending.
	Query() error
}

// MemoryOpsOf returns b's MemoryOps, or an error matching ErrNotSupported
// that names the backend.
func MemoryOpsOf(b Backend) (MemoryOps, error) {
	if m, ok := b.(MemoryOps); ok {
		return m, nil
	}
	return nil, lacks(b, "memset, device-to-device copies, managed and mapped memory (device.MemoryOps)")
}

// IPCOf returns b's IPC, or an error matching ErrNotSupported.
func IPCOf(b Backend) (IPC, error) {
	if m, ok := b.(IPC); ok {
		return m, nil
	}
	return nil, lacks(b, "IPC memory handles (device.IPC)")
}

// PCIDevicesOf returns b's PCIDevices, or an error matching ErrNotSupported.
func PCIDevicesOf(b Backend) (PCIDevices, error) {
	if m, ok := b.(PCIDevices); ok {
		return m, nil
	}
	return nil, lacks(b, "PCI bus id lookups (device.PCIDevices)")
}

// DMABufOf returns b's DMABuf, or an error matching ErrNotSupported.
func DMABufOf(b Backend) (DMABuf, error) {
	if m, ok := b.(DMABuf); ok {
		return m, nil
	}
	return nil, lacks(b, "dma-buf export (device.DMABuf)")
}

// StreamOpsOf returns s's StreamOps, or an error matching ErrNotSupported.
func StreamOpsOf(s Stream) (StreamOps, error) {
	if o, ok := s.(StreamOps); ok {
		return o, nil
	}
	if s == nil {
		return nil, fmt.Errorf("%w: no stream given", ErrNotSupported)
	}
	return nil, fmt.Errorf("%w: the stream (%T) has no query, memset, device-to-device copy, stream-ordered allocation, value wait or host function (device.StreamOps)", ErrNotSupported, s)
}

// EventQuerierOf returns e's EventQuerier, or an error matching
// ErrNotSupported.
func EventQuerierOf(e Event) (EventQuerier, error) {
	if q, ok := e.(EventQuerier); ok {
		return q, nil
	}
	return nil, fmt.Errorf("%w: the event (%T) cannot be queried (device.EventQuerier)", ErrNotSupported, e)
}

// CheckMemset checks Memset's width and value: the error matches
// ErrInvalidValue. Backends call it before asking the driver.
func CheckMemset(value uint32, width int) error {
	switch width {
	case 1, 2, 4:
	default:
		return fmt.Errorf("%w: memset of %d-byte elements: the width is 1, 2 or 4", ErrInvalidValue, width)
	}
	if width < 4 && value>>(8*width) != 0 {
		return fmt.Errorf("%w: memset value %#x does not fit %d byte(s)", ErrInvalidValue, value, width)
	}
	return nil
}
