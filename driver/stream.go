package driver

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// Stream is a stream of one device (CUstream, hipStream_t): a
// device.Stream.
type Stream struct {
	gone atomic.Bool
	// hot are the stream's synchronize and records, prepared at its
	// creation (not OK: calls go the general way, runList and runOn).
	hot struct{ sync, record clib.Prepared }
	// launches serialises the stream's launches: goroutines that launch
	// on one stream take turns here, in Go, instead of in the driver,
	// which queues one launch at a time on a stream anyway. On an H100,
	// 64 goroutines on one stream made 1.3-1.5x the launches a second
	// this way that they made waiting in the driver, 16 about 1.1x (C's
	// threads wait there too); one goroutine pays an uncontended lock
	// (docs/benchmarks.md). Beside the fields a launch reads.
	launches sync.Mutex
	b        *Backend
	s        *state
	dev      *devState
	h        [1]uintptr              // the handle, as a prebuilt argument list
	mu       sync.Mutex              // serialises Destroy
	capt     atomic.Pointer[capture] // set between BeginCapture and EndCapture (graph.go)
	// foreign: the handle is another owner's (ForeignStream); Destroy
	// releases the wrapper only.
	foreign bool
}

// Event is an event of one device (CUevent, hipEvent_t): a device.Event.
type Event struct {
	gone atomic.Bool
	sync clib.Prepared // its synchronize, prepared at its creation (see Stream.hot)
	s    *state
	dev  *devState
	h    [1]uintptr
	mu   sync.Mutex
}

// newStream is the stream of handle h on device d, its hot calls
// prepared where d's selector is known (always, but for a foreign stream
// of a device not yet used).
func newStream(b *Backend, s *state, d *devState, h uintptr, foreign bool) *Stream {
	st := &Stream{b: b, s: s, dev: d, h: [1]uintptr{h}, foreign: foreign}
	if sel := d.sel.Load(); sel != nil {
		st.hot.sync = s.api.prepare(sel, OpStreamSynchronize, h)
		st.hot.record = s.api.prepare(sel, OpEventRecord, 0, h)
	}
	return st
}

// newEvent is the event of handle h on device d (see newStream).
func newEvent(s *state, d *devState, h uintptr) *Event {
	e := &Event{s: s, dev: d, h: [1]uintptr{h}}
	if sel := d.sel.Load(); sel != nil {
		e.sync = s.api.prepare(sel, OpEventSynchronize, h)
	}
	return e
}

// hotErr is the error of a prepared call that failed: the selection's
// (selected) or op's (r), as runOn says it.
func (s *state) hotErr(d *devState, op Op, selected, r int) error {
	if selected != 0 {
		return s.opErr(s.api.sel, d, s.api.failed(s.api.sel, selected))
	}
	return s.opErr(op, d, s.api.failed(op, r))
}

// HostBuffer is pinned host memory from AllocHost: a device.HostBuffer.
type HostBuffer struct {
	b    *Backend
	s    *state
	dev  *devState
	p    uintptr
	n    uint64
	mu   sync.Mutex
	gone atomic.Bool
}

var (
	_ device.Stream     = (*Stream)(nil)
	_ device.Event      = (*Event)(nil)
	_ device.HostBuffer = (*HostBuffer)(nil)
)

var (
	streamOps = []Op{OpStreamCreate, OpStreamSynchronize, OpStreamDestroy}
	eventOps  = []Op{OpEventCreate, OpEventRecord, OpEventSynchronize, OpEventDestroy} // timing (OpEventElapsedTime) is Since's alone
	hostOps   = []Op{OpMemHostAlloc, OpMemFreeHost}
)

// NewStream creates a stream on device index (-1: the current device)
// (cuStreamCreate with the default flags: it synchronizes with the legacy
// default stream, as the CUDA runtime's streams do).
func (b *Backend) NewStream(index int) (device.Stream, error) {
	if _, err := b.ready("streams", streamOps...); err != nil {
		return nil, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	h, err := s.api.streamCreate()
	leave()
	if err != nil {
		return nil, s.opErr(OpStreamCreate, d, err)
	}
	return newStream(b, s, d, h, false), nil
}

// NewEvent creates an event on device index, with timing enabled
// (cuEventCreate with the default flags).
func (b *Backend) NewEvent(index int) (device.Event, error) {
	if _, err := b.ready("events", eventOps...); err != nil {
		return nil, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	h, err := s.api.eventCreate()
	leave()
	if err != nil {
		return nil, s.opErr(OpEventCreate, d, err)
	}
	return newEvent(s, d, h), nil
}

// AllocHost allocates size bytes of pinned host memory for device index's
// asynchronous copies (cuMemHostAlloc).
func (b *Backend) AllocHost(index int, size uint64) (device.HostBuffer, error) {
	if _, err := b.ready("pinned host memory", hostOps...); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s: AllocHost of 0 bytes", device.ErrInvalidValue, b.v.Type)
	}
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	p, err := s.api.memHostAlloc(size)
	leave()
	if err != nil {
		return nil, fmt.Errorf("%s(device %d, %d bytes): %w", s.api.sym(OpMemHostAlloc), d.ordinal, size, err)
	}
	hb := &HostBuffer{b: b, s: s, dev: d, p: p, n: size}
	b.pinned.add(p, size)
	return hb, nil
}

// Device is the index of the stream's device.
func (st *Stream) Device() int { return st.dev.ordinal }

// Handle is the driver's stream handle.
func (st *Stream) Handle() uintptr { return st.h[0] }

func (st *Stream) released(op string) error {
	return fmt.Errorf("%w: %s: %s on a destroyed stream (device %d)", device.ErrReleased, st.s.v.Type, op, st.dev.ordinal)
}

// do runs f with the stream's device current, unless the stream is gone.
func (st *Stream) do(op string, f func(a *api) error) error {
	if st.gone.Load() {
		return st.released(op)
	}
	if err := st.s.enterDev(st.dev); err != nil {
		return err
	}
	err := f(st.s.api)
	leave()
	return err
}

// Launch queues fn on the stream (see Backend.Launch for args).
func (st *Stream) Launch(fn device.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	// The common case first, as Backend.Launch's: a live function of
	// this stream's device, as many arguments as it takes, its launch
	// prepared.
	if f, ok := fn.(*Function); ok && f != nil && f.m.dev == st.dev && len(args) == f.nparams && f.direct() &&
		!st.gone.Load() && f.m.b == st.b && !f.m.gone.Load() {
		if err := f.launchDirect(&st.launches, st.h[0], grid, block, sharedMem, args); err != nil {
			return err
		}
		st.captured(f.m)
		return nil
	}
	if st.gone.Load() {
		return st.released("Launch")
	}
	if f, ok := fn.(*Function); !ok || f == nil || !f.call.OK() { // a prepared launch: the library has it
		if !st.s.api.has(OpLaunchKernel) {
			return st.s.lacks("launches", OpLaunchKernel)
		}
	}
	f, err := st.backend().function(fn)
	if err != nil {
		return err
	}
	if f.m.dev != st.dev {
		return fmt.Errorf("%w: %s: function %q of module %q (device %d) launched on a stream of device %d",
			device.ErrInvalidValue, st.s.v.Type, f.name, f.m.label, f.m.dev.ordinal, st.dev.ordinal)
	}
	if err := st.s.launch(&st.launches, f, st.h[0], grid, block, sharedMem, args); err != nil {
		return err
	}
	st.captured(f.m)
	return nil
}

// captured notes m's launch in the stream's capture, where one is under
// way (graph.go).
func (st *Stream) captured(m *Module) {
	if c := st.capt.Load(); c != nil {
		c.note(m)
	}
}

func (st *Stream) backend() *Backend { return st.b }

// CopyHtoD queues a copy of src, which must lie in a HostBuffer of this
// backend, to device memory at dst.
func (st *Stream) CopyHtoD(dst device.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := st.pinnedArg("CopyHtoD", OpMemcpyHtoDAsync, src); err != nil {
		return err
	}
	if st.gone.Load() {
		return st.released("CopyHtoD")
	}
	// src is C memory (pinnedArg): every argument is a value.
	opErr, err := st.s.callOn(st.dev, OpMemcpyHtoDAsync, nil, []uintptr{uintptr(dst), hostAddr(src), uintptr(len(src)), st.h[0]})
	if opErr != nil {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", st.s.api.sym(OpMemcpyHtoDAsync), st.dev.ordinal, uint64(dst), len(src), opErr)
	}
	return err
}

// CopyDtoH queues a copy of len(dst) bytes at src into dst, which must lie
// in a HostBuffer of this backend.
func (st *Stream) CopyDtoH(dst []byte, src device.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	if err := st.pinnedArg("CopyDtoH", OpMemcpyDtoHAsync, dst); err != nil {
		return err
	}
	if st.gone.Load() {
		return st.released("CopyDtoH")
	}
	// dst is C memory (pinnedArg): every argument is a value.
	opErr, err := st.s.callOn(st.dev, OpMemcpyDtoHAsync, nil, []uintptr{hostAddr(dst), uintptr(src), uintptr(len(dst)), st.h[0]})
	if opErr != nil {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", st.s.api.sym(OpMemcpyDtoHAsync), st.dev.ordinal, uint64(src), len(dst), opErr)
	}
	return err
}

func (st *Stream) pinnedArg(op string, need Op, buf []byte) error {
	if !st.s.api.has(need) {
		return st.s.lacks("asynchronous copies", need)
	}
	if !st.backend().pinned.contains(hostAddr(buf), uint64(len(buf))) {
		return fmt.Errorf("%w: %s: Stream.%s: the %d-byte host buffer is not pinned memory from AllocHost; an asynchronous copy of Go memory could outlive it (use Memory's synchronous copies for Go memory)",
			device.ErrInvalidValue, st.s.v.Type, op, len(buf))
	}
	return nil
}

// event checks that e is a live event of the stream's device.
func (st *Stream) event(e device.Event) (*Event, error) {
	ev, ok := e.(*Event)
	switch {
	case !ok || ev == nil:
		return nil, fmt.Errorf("%w: %s: not an event of this backend: %T", device.ErrInvalidValue, st.s.v.Type, e)
	case ev.s != st.s:
		return nil, fmt.Errorf("%w: %s: the event belongs to another backend", device.ErrInvalidValue, st.s.v.Type)
	case ev.gone.Load():
		return nil, ev.released("use")
	}
	return ev, nil
}

// Record records e at the current end of the stream (cuEventRecord).
func (st *Stream) Record(e device.Event) error {
	ev, err := st.event(e)
	if err != nil {
		return err
	}
	if st.gone.Load() {
		return st.released("Record")
	}
	if st.hot.record.OK() {
		if r0, r1 := st.hot.record.CallWith(ev.h[0]); clib.Code(r0)|clib.Code(r1) != 0 {
			return st.s.hotErr(st.dev, OpEventRecord, clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
	return st.run(OpEventRecord, []uintptr{ev.h[0], st.h[0]})
}

// Wait makes later work on the stream wait for e (cuStreamWaitEvent).
func (st *Stream) Wait(e device.Event) error {
	ev, err := st.event(e)
	if err != nil {
		return err
	}
	if !st.s.api.has(OpStreamWaitEvent) {
		return st.s.lacks("stream waits", OpStreamWaitEvent)
	}
	if st.gone.Load() {
		return st.released("Wait")
	}
	return st.run(OpStreamWaitEvent, []uintptr{st.h[0], ev.h[0], 0})
}

// Synchronize waits for the work queued on the stream (cuStreamSynchronize).
func (st *Stream) Synchronize() error {
	if st.gone.Load() {
		return st.released("Synchronize")
	}
	if st.hot.sync.OK() {
		if r0, r1 := st.hot.sync.Call(); clib.Code(r0)|clib.Code(r1) != 0 {
			return st.s.hotErr(st.dev, OpStreamSynchronize, clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
	return st.s.runList(st.dev, OpStreamSynchronize, st.h[:])
}

// Destroy releases the stream (cuStreamDestroy_v2); queued work still
// completes. A second call does nothing. A stream that is capturing is
// refused: EndCapture first. A ForeignStream's handle stays its owner's:
// Destroy releases the wrapper only.
func (st *Stream) Destroy() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gone.Load() {
		return nil
	}
	if st.capt.Load() != nil {
		return fmt.Errorf("%w: %s: Destroy of a stream of device %d that is capturing: EndCapture first", device.ErrInvalidValue, st.s.v.Type, st.dev.ordinal)
	}
	if st.foreign {
		st.gone.Store(true)
		return nil
	}
	err := st.do("Destroy", func(a *api) error { return a.handleOp(OpStreamDestroy, st.h[:]) })
	if err != nil {
		return st.s.opErr(OpStreamDestroy, st.dev, err)
	}
	st.gone.Store(true)
	return nil
}

// Device is the index of the event's device.
func (e *Event) Device() int { return e.dev.ordinal }

// Handle is the driver's event handle.
func (e *Event) Handle() uintptr { return e.h[0] }

func (e *Event) released(op string) error {
	return fmt.Errorf("%w: %s: %s on a destroyed event (device %d)", device.ErrReleased, e.s.v.Type, op, e.dev.ordinal)
}

func (e *Event) do(op string, f func(a *api) error) error {
	if e.gone.Load() {
		return e.released(op)
	}
	if err := e.s.enterDev(e.dev); err != nil {
		return err
	}
	err := f(e.s.api)
	leave()
	return err
}

// Synchronize waits until the work before the event's last record is done
// (cuEventSynchronize).
func (e *Event) Synchronize() error {
	if e.gone.Load() {
		return e.released("Synchronize")
	}
	if e.sync.OK() {
		if r0, r1 := e.sync.Call(); clib.Code(r0)|clib.Code(r1) != 0 {
			return e.s.hotErr(e.dev, OpEventSynchronize, clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
	return e.s.runList(e.dev, OpEventSynchronize, e.h[:])
}

// Since is the device time from start's record to this event's
// (cuEventElapsedTime, about half a microsecond of resolution). An event not
// yet reached gives an error matching device.ErrNotReady; a library without
// event timing (its events record, wait and synchronize only), one matching
// device.ErrNotSupported.
func (e *Event) Since(start device.Event) (time.Duration, error) {
	st, ok := start.(*Event)
	switch {
	case !e.s.api.has(OpEventElapsedTime):
		return 0, e.s.lacks("event timing", OpEventElapsedTime)
	case !ok || st == nil:
		return 0, fmt.Errorf("%w: %s: not an event of this backend: %T", device.ErrInvalidValue, e.s.v.Type, start)
	case st.s != e.s:
		return 0, fmt.Errorf("%w: %s: the start event belongs to another backend", device.ErrInvalidValue, e.s.v.Type)
	case st.gone.Load():
		return 0, st.released("Since")
	}
	var ms float32
	err := e.do("Since", func(a *api) error {
		var err error
		if ms, err = a.eventElapsed(st.h[0], e.h[0]); err != nil {
			return e.s.opErr(OpEventElapsedTime, e.dev, err)
		}
		return nil
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Destroy releases the event (cuEventDestroy_v2). A second call does
// nothing.
func (e *Event) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone.Load() {
		return nil
	}
	if err := e.do("Destroy", func(a *api) error { return a.handleOp(OpEventDestroy, e.h[:]) }); err != nil {
		return e.s.opErr(OpEventDestroy, e.dev, err)
	}
	e.gone.Store(true)
	return nil
}

// Bytes is the buffer's memory, valid until Free (nil after it).
func (hb *HostBuffer) Bytes() []byte {
	if hb.gone.Load() {
		return nil
	}
	return hostSlice(hb.p, hb.n)
}

// Free releases the memory (cuMemFreeHost). A second call does nothing.
func (hb *HostBuffer) Free() error {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.gone.Load() {
		return nil
	}
	hb.b.pinned.remove(hb.p)
	hb.gone.Store(true)
	if err := hb.s.enterDev(hb.dev); err != nil {
		return err
	}
	err := hb.s.api.memFreeHost(hb.p)
	leave()
	if err != nil {
		return hb.s.opErr(OpMemFreeHost, hb.dev, err)
	}
	return nil
}

// pinnedSet is the set of live pinned host ranges of a backend, sorted by
// start, so Stream's copies can refuse memory that is not pinned.
type pinnedSet struct {
	mu     sync.RWMutex
	ranges []pinnedRange
}

type pinnedRange struct{ start, end uintptr }

func (ps *pinnedSet) add(p uintptr, n uint64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	r := pinnedRange{p, p + uintptr(n)}
	i, _ := slices.BinarySearchFunc(ps.ranges, p, func(x pinnedRange, p uintptr) int { return cmpPtr(x.start, p) })
	ps.ranges = slices.Insert(ps.ranges, i, r)
}

func (ps *pinnedSet) remove(p uintptr) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(ps.ranges, p, func(x pinnedRange, p uintptr) int { return cmpPtr(x.start, p) }); ok {
		ps.ranges = slices.Delete(ps.ranges, i, i+1)
	}
}

// contains reports whether [p, p+n) lies inside one live range.
func (ps *pinnedSet) contains(p uintptr, n uint64) bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	i, found := slices.BinarySearchFunc(ps.ranges, p, func(x pinnedRange, p uintptr) int { return cmpPtr(x.start, p) })
	if !found {
		i-- // the range starting before p, if any
	}
	if i < 0 || i >= len(ps.ranges) {
		return false
	}
	r := ps.ranges[i]
	end := p + uintptr(n)
	return p >= r.start && end <= r.end && end >= p
}

func cmpPtr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
