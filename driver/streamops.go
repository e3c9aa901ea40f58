package driver

import (
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// A stream's and an event's operations beyond device.Stream's
// (device.StreamOps, device.EventQuerier), the streams and events of
// chosen flags, streams of another owner, and copies with C host addresses
// for hosts that are not Go (the FlagCX plugin). The calls that a hot loop
// makes (a query, a record, a synchronize, an asynchronous copy or memset)
// select the device and call in one transition to C (api.selectThen).

var (
	_ device.StreamOps    = (*Stream)(nil)
	_ device.EventQuerier = (*Event)(nil)
)

// errPending is Query's answer while work is pending: a fixed error, so a
// polling loop allocates nothing.
var errPending = fmt.Errorf("%w: work is pending", device.ErrNotReady)

// callOn runs op with device d current, in one transition to C: with list
// as its arguments where list is not nil (a handle's own list, prebuilt on
// the heap), else with args (values or addresses of C memory), which stays
// on its caller's stack (api.selectThenArgs): no call allocates. A failed
// selection is err, already saying which device; op's own failure is
// opErr, the checked *clib.Error, for the caller to say what it was doing.
// On success nothing runs after the call but one compare.
func (s *state) callOn(d *devState, op Op, list, args []uintptr) (opErr, err error) {
	sel := d.sel.Load()
	if sel == nil {
		if sel, err = s.firstSelector(d); err != nil {
			return nil, err
		}
	}
	a := s.api
	var selected, r int
	if list != nil {
		selected, r = a.selectThen(sel.args[:], op, list)
	} else if selected, r, err = a.selectThenArgs(sel.args[:], op, args); err != nil {
		return nil, err
	}
	if selected|r == 0 {
		return nil, nil
	}
	if selected != 0 {
		return nil, s.opErr(a.sel, d, a.failed(a.sel, selected))
	}
	return a.failed(op, r), nil
}

// runOn runs op with args (values) with device d current, in one
// transition to C, and says which call failed.
func (s *state) runOn(d *devState, op Op, args []uintptr) error {
	opErr, err := s.callOn(d, op, nil, args)
	if opErr != nil {
		return s.opErr(op, d, opErr)
	}
	return err
}

// runList is runOn with a handle's own prebuilt list (no copy).
func (s *state) runList(d *devState, op Op, list []uintptr) error {
	opErr, err := s.callOn(d, op, list, nil)
	if opErr != nil {
		return s.opErr(op, d, opErr)
	}
	return err
}

// run is runOn for the stream's device.
func (st *Stream) run(op Op, args []uintptr) error { return st.s.runOn(st.dev, op, args) }

// ready checks the stream is alive and its library has ops.
func (st *Stream) ready(op, what string, ops ...Op) error {
	if st.gone.Load() {
		return st.released(op)
	}
	if !st.s.api.has(ops...) {
		return st.s.lacks(what, ops...)
	}
	return nil
}

// NewStreamWith creates a stream on device index; nonBlocking makes it one
// that does not wait for the legacy default stream (CU_STREAM_NON_BLOCKING),
// as the CUDA runtime's cudaStreamNonBlocking streams do, where the vendor
// gives the flag's number (Vendor.NonBlockingStream; else a default
// stream).
func (b *Backend) NewStreamWith(index int, nonBlocking bool) (*Stream, error) {
	if _, err := b.ready("streams", streamOps...); err != nil {
		return nil, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	var flags uint32
	if nonBlocking {
		flags = b.v.NonBlockingStream
	}
	h, err := s.api.streamCreateFlags(flags)
	leave()
	if err != nil {
		return nil, s.opErr(OpStreamCreate, d, err)
	}
	return newStream(b, s, d, h, false), nil
}

// NewEventWith creates an event on device index; timing false creates one
// without timing (CU_EVENT_DISABLE_TIMING), cheaper to record and wait for,
// where the vendor gives the flag's number (Vendor.EventNoTiming; else an
// event with timing).
func (b *Backend) NewEventWith(index int, timing bool) (*Event, error) {
	if _, err := b.ready("events", eventOps...); err != nil {
		return nil, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	var flags uint32
	if !timing {
		flags = b.v.EventNoTiming
	}
	h, err := s.api.eventCreateFlags(flags)
	leave()
	if err != nil {
		return nil, s.opErr(OpEventCreate, d, err)
	}
	return newEvent(s, d, h), nil
}

// ForeignStream wraps the stream handle h of device index that another
// owner created (a framework's CUstream, the CUDA runtime's cudaStream_t; 0
// is the device's legacy default stream), so flagshim's stream calls can
// queue work on it. The owner keeps it: Destroy releases the wrapper only.
func (b *Backend) ForeignStream(index int, h uintptr) (*Stream, error) {
	if _, err := b.ready("streams", streamOps...); err != nil {
		return nil, err
	}
	s, d, err := b.device(index)
	if err != nil {
		return nil, err
	}
	return newStream(b, s, d, h, true), nil
}

// Select makes device index's context current on the calling OS thread and
// leaves it there, as the CUDA runtime's cudaSetDevice does: for a C host
// whose other libraries (the CUDA runtime, NCCL) use the thread's current
// context. Every other call of the backend makes its own device current
// itself and needs no Select.
func (b *Backend) Select(index int) error {
	_, _, err := b.enter(index)
	if err != nil {
		return err
	}
	leave()
	return nil
}

// hostMapped are the flags of AllocHostMapped: CU_MEMHOSTALLOC_PORTABLE |
// CU_MEMHOSTALLOC_DEVICEMAP (hipHostMallocPortable | hipHostMallocMapped).
const hostMapped = 1 | 2

// AllocHostMapped allocates size bytes of pinned host memory that every
// context may use and that is mapped into the devices' address space
// (HostDevicePointer), as cudaHostAlloc(cudaHostAllocMapped |
// cudaHostAllocPortable) does.
func (b *Backend) AllocHostMapped(index int, size uint64) (*HostBuffer, error) {
	if _, err := b.ready("pinned host memory", hostOps...); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s: AllocHostMapped of 0 bytes", device.ErrInvalidValue, b.v.Type)
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	p, err := s.api.memHostAllocFlags(size, hostMapped)
	leave()
	if err != nil {
		return nil, fmt.Errorf("%s(device %d, %d bytes, mapped): %w", s.api.sym(OpMemHostAlloc), d.ordinal, size, err)
	}
	b.pinned.add(p, size)
	return &HostBuffer{b: b, s: s, dev: d, p: p, n: size}, nil
}

// Addr is the buffer's address (C memory), 0 after Free.
func (hb *HostBuffer) Addr() uintptr {
	if hb.gone.Load() {
		return 0
	}
	return hb.p
}

// Foreign reports whether the stream's handle is another owner's.
func (st *Stream) Foreign() bool { return st.foreign }

// Query is nil when the stream's work is done, an error matching
// device.ErrNotReady while some is pending (cuStreamQuery). It never waits
// and allocates nothing either way.
func (st *Stream) Query() error {
	if err := st.ready("Query", "stream queries", OpStreamQuery); err != nil {
		return err
	}
	return st.s.query(st.dev, OpStreamQuery, st.h[:])
}

// query runs a query operation and maps the vendor's not-ready code to
// errPending.
func (s *state) query(d *devState, op Op, h []uintptr) error {
	sel, err := s.selector(d)
	if err != nil {
		return err
	}
	selected, r := s.api.selectThen(sel.args[:], op, h)
	switch {
	case selected != 0:
		return s.opErr(s.api.selectOp(), d, s.api.check(s.api.selectOp(), selected))
	case r == 0:
		return nil
	case r == s.api.notReady:
		return errPending
	}
	return s.opErr(op, d, s.api.check(op, r))
}

// Memset queues a memset of count width-byte elements (cuMemsetD8Async,
// D16, D32).
func (st *Stream) Memset(p device.Ptr, value uint32, width int, count uint64) error {
	if err := device.CheckMemset(value, width); err != nil {
		return fmt.Errorf("%s: %w", st.s.v.Type, err)
	}
	op := memsetOp(width, true)
	if err := st.ready("Memset", "asynchronous memset", op); err != nil {
		return err
	}
	if err := st.s.sizeErr(op, count); err != nil || count == 0 {
		return err
	}
	return st.run(op, []uintptr{uintptr(p), uintptr(value), uintptr(count), st.h[0]})
}

// CopyDtoD queues a device-to-device copy (cuMemcpyDtoDAsync_v2).
func (st *Stream) CopyDtoD(dst, src device.Ptr, size uint64) error {
	if err := st.ready("CopyDtoD", "asynchronous device-to-device copies", OpMemcpyDtoDAsync); err != nil {
		return err
	}
	if err := st.s.sizeErr(OpMemcpyDtoDAsync, size); err != nil || size == 0 {
		return err
	}
	return st.run(OpMemcpyDtoDAsync, []uintptr{uintptr(dst), uintptr(src), uintptr(size), st.h[0]})
}

// CopyHtoDAddr queues a copy of n bytes at src, an address of C memory
// (pinned for a copy that overlaps the host; the driver stages pageable
// memory), to device memory at dst. The caller keeps src valid until the
// copy is done. Go memory must not be passed: use CopyHtoD and AllocHost.
func (st *Stream) CopyHtoDAddr(dst device.Ptr, src uintptr, n uint64) error {
	if err := st.ready("CopyHtoDAddr", "asynchronous copies", OpMemcpyHtoDAsync); err != nil {
		return err
	}
	if err := st.s.sizeErr(OpMemcpyHtoDAsync, n); err != nil || n == 0 {
		return err
	}
	return st.run(OpMemcpyHtoDAsync, []uintptr{uintptr(dst), src, uintptr(n), st.h[0]})
}

// CopyDtoHAddr queues a copy of n bytes of device memory at src to dst, an
// address of C memory (see CopyHtoDAddr).
func (st *Stream) CopyDtoHAddr(dst uintptr, src device.Ptr, n uint64) error {
	if err := st.ready("CopyDtoHAddr", "asynchronous copies", OpMemcpyDtoHAsync); err != nil {
		return err
	}
	if err := st.s.sizeErr(OpMemcpyDtoHAsync, n); err != nil || n == 0 {
		return err
	}
	return st.run(OpMemcpyDtoHAsync, []uintptr{dst, uintptr(src), uintptr(n), st.h[0]})
}

// Alloc allocates size bytes in stream order (cuMemAllocAsync).
func (st *Stream) Alloc(size uint64) (device.Ptr, error) {
	if err := st.ready("Alloc", "stream-ordered allocation", OpMemAllocAsync, OpMemFreeAsync); err != nil {
		return 0, err
	}
	var p uint64
	err := st.do("Alloc", func(a *api) error {
		var err error
		if p, err = a.memAllocAsync(size, st.h[0]); err != nil {
			return fmt.Errorf("%s(device %d, %d bytes): %w", a.sym(OpMemAllocAsync), st.dev.ordinal, size, err)
		}
		return nil
	})
	return device.Ptr(p), err
}

// Free frees memory in stream order (cuMemFreeAsync): after the work
// queued before it.
func (st *Stream) Free(p device.Ptr) error {
	if err := st.ready("Free", "stream-ordered allocation", OpMemAllocAsync, OpMemFreeAsync); err != nil {
		return err
	}
	return st.run(OpMemFreeAsync, []uintptr{uintptr(p), st.h[0]})
}

// WaitValue64 makes later work wait until the 64-bit value at addr is at
// least value (cuStreamWaitValue64_v2, CU_STREAM_WAIT_VALUE_GEQ).
func (st *Stream) WaitValue64(addr device.Ptr, value uint64) error {
	if err := st.ready("WaitValue64", "stream memory operations", OpStreamWaitValue64); err != nil {
		return err
	}
	return st.run(OpStreamWaitValue64, []uintptr{st.h[0], uintptr(addr), uintptr(value), streamWaitGEQ})
}

// WriteValue64 queues a write of value to the 64-bit word at addr
// (cuStreamWriteValue64_v2).
func (st *Stream) WriteValue64(addr device.Ptr, value uint64) error {
	if err := st.ready("WriteValue64", "stream memory operations", OpStreamWriteValue64); err != nil {
		return err
	}
	return st.run(OpStreamWriteValue64, []uintptr{st.h[0], uintptr(addr), uintptr(value), 0})
}

// LaunchHostFunc queues f (cuLaunchHostFunc) through clib's one fixed
// trampoline; f runs once, on a thread of the driver.
func (st *Stream) LaunchHostFunc(f func()) error {
	if f == nil {
		return fmt.Errorf("%w: %s: LaunchHostFunc of a nil func", device.ErrInvalidValue, st.s.v.Type)
	}
	if err := st.ready("LaunchHostFunc", "host functions", OpLaunchHostFunc); err != nil {
		return err
	}
	fn, data, cancel := clib.HostFunc(f)
	if err := st.LaunchHostFuncC(fn, data); err != nil {
		cancel()
		return err
	}
	return nil
}

// LaunchHostFuncC queues the C function fn(userData) (cuLaunchHostFunc):
// for C hosts that hand flagshim a function of their own.
func (st *Stream) LaunchHostFuncC(fn, userData uintptr) error {
	if fn == 0 {
		return fmt.Errorf("%w: %s: LaunchHostFunc of a NULL function", device.ErrInvalidValue, st.s.v.Type)
	}
	if err := st.ready("LaunchHostFunc", "host functions", OpLaunchHostFunc); err != nil {
		return err
	}
	return st.run(OpLaunchHostFunc, []uintptr{st.h[0], fn, userData})
}

// Query is nil when the work before the event's last record is done, an
// error matching device.ErrNotReady while it is pending (cuEventQuery).
func (e *Event) Query() error {
	if e.gone.Load() {
		return e.released("Query")
	}
	if !e.s.api.has(OpEventQuery) {
		return e.s.lacks("event queries", OpEventQuery)
	}
	return e.s.query(e.dev, OpEventQuery, e.h[:])
}

// IsPending reports whether err is Query's (or another call's) "not
// ready" answer.
func IsPending(err error) bool { return err == errPending || errors.Is(err, device.ErrNotReady) }
