package devicetest

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/flagos-ai/flagshim/device"
)

// Stream is a fake stream: work queued on it runs, in order, when it is
// synchronized (Synchronize, an event recorded on it, the device).
type Stream struct {
	b *Backend
	d *dev

	mu    sync.Mutex // guards queue, err, gone, capt; held while the queue runs
	queue []func() error
	err   error // the first failure, sticky
	gone  bool
	capt  *capture // between BeginCapture and EndCapture: where queued work goes (graph.go)
}

// Event is a fake event: a timestamp taken when the work before its record
// has run.
type Event struct {
	b *Backend
	d *dev

	mu       sync.Mutex
	on       *Stream // the stream of its last record, until it runs
	at       time.Time
	recorded bool
	gone     bool
}

// HostBuffer is a fake pinned buffer (Go memory the fake tracks).
type HostBuffer struct {
	b      *Backend
	buf    []byte
	mu     sync.Mutex
	gone   bool
	mapped map[*dev]device.Ptr // HostDevicePointer's mappings
}

var (
	_ device.Stream     = (*Stream)(nil)
	_ device.Event      = (*Event)(nil)
	_ device.HostBuffer = (*HostBuffer)(nil)
)

// NewStream creates a stream on device index.
func (b *Backend) NewStream(index int) (device.Stream, error) {
	d, err := b.device(index)
	if err != nil {
		return nil, err
	}
	s := &Stream{b: b, d: d}
	d.mem.mu.Lock()
	d.mem.streams = append(d.mem.streams, s)
	d.mem.mu.Unlock()
	return s, nil
}

// NewEvent creates an event on device index.
func (b *Backend) NewEvent(index int) (device.Event, error) {
	d, err := b.device(index)
	if err != nil {
		return nil, err
	}
	return &Event{b: b, d: d}, nil
}

// AllocHost allocates a tracked host buffer.
func (b *Backend) AllocHost(index int, size uint64) (device.HostBuffer, error) {
	if _, err := b.device(index); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s: AllocHost of 0 bytes", device.ErrInvalidValue, b.typ)
	}
	h := &HostBuffer{b: b, buf: make([]byte, size)}
	b.mu.Lock()
	b.host = append(b.host, h)
	b.mu.Unlock()
	return h, nil
}

// Bytes is the buffer, nil after Free.
func (h *HostBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		return nil
	}
	return h.buf
}

// Free forgets the buffer; a second call does nothing.
func (h *HostBuffer) Free() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		return nil
	}
	h.gone = true
	for d, base := range h.mapped {
		d.mem.mu.Lock()
		delete(d.mem.allocs, uint64(base))
		for i, x := range d.mem.bases {
			if x == uint64(base) {
				d.mem.bases = append(d.mem.bases[:i], d.mem.bases[i+1:]...)
				break
			}
		}
		d.mem.mu.Unlock()
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	for i, x := range h.b.host {
		if x == h {
			h.b.host = append(h.b.host[:i], h.b.host[i+1:]...)
			break
		}
	}
	return nil
}

// pinned reports whether p lies inside one live host buffer.
func (b *Backend) pinned(p []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	end := start + uintptr(len(p))
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.host {
		hs := uintptr(unsafe.Pointer(unsafe.SliceData(h.buf)))
		if start >= hs && end <= hs+uintptr(len(h.buf)) {
			return true
		}
	}
	return false
}

// Device is the stream's device.
func (s *Stream) Device() int { return s.d.index }

func (s *Stream) push(op string, f func() error) error { return s.enqueue(op, step{run: f}) }

// enqueue queues st on the stream, or records it while the stream
// captures.
func (s *Stream) enqueue(op string, st step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return fmt.Errorf("%w: %s: %s on a destroyed stream", device.ErrReleased, s.b.typ, op)
	}
	if s.capt != nil {
		s.capt.steps = append(s.capt.steps, st)
		return nil
	}
	s.queueLocked(st)
	return nil
}

// queueLocked puts st on the queue; mu held.
func (s *Stream) queueLocked(st step) {
	if st.queued != nil {
		st.queued(s)
	}
	s.queue = append(s.queue, st.run)
}

// flush runs the queued work; the first error sticks. A value wait that
// is not met holds it: the device's other streams run meanwhile (a write
// there may release it), then it polls (memops.go's drain).
func (s *Stream) flush() error { return s.drain(true) }

// runLocked runs the queued work until the queue is empty or a step
// answers errHeld (left at the head); it reports whether it was held. mu
// held.
func (s *Stream) runLocked() (held bool) {
	for len(s.queue) > 0 {
		f := s.queue[0]
		err := f()
		if err == errHeld {
			return true
		}
		s.queue = s.queue[1:]
		if err != nil && s.err == nil {
			s.err = err
		}
	}
	return false
}

// Launch queues fn on the stream.
func (s *Stream) Launch(fn device.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	f, err := s.b.kernel(fn, s.d)
	if err != nil {
		return err
	}
	args = append([]any(nil), args...)
	return s.enqueue("Launch", step{run: func() error { return s.b.run(f, s.d, grid, block, sharedMem, args) }, mod: f.mod})
}

// CopyHtoD queues a copy from a host buffer to device memory.
func (s *Stream) CopyHtoD(dst device.Ptr, src []byte) error {
	return s.copy("CopyHtoD", dst, src, func(dev []byte) { copy(dev, src) })
}

// CopyDtoH queues a copy from device memory to a host buffer.
func (s *Stream) CopyDtoH(dst []byte, src device.Ptr) error {
	return s.copy("CopyDtoH", src, dst, func(dev []byte) { copy(dst, dev) })
}

func (s *Stream) copy(op string, p device.Ptr, host []byte, f func(dev []byte)) error {
	if len(host) == 0 {
		return nil
	}
	if !s.b.pinned(host) {
		return fmt.Errorf("%w: %s: Stream.%s: the host memory is not a buffer from AllocHost", device.ErrInvalidValue, s.b.typ, op)
	}
	return s.push(op, func() error {
		s.d.mem.mu.Lock()
		defer s.d.mem.mu.Unlock()
		dev, err := s.d.mem.span(p, len(host))
		if err != nil {
			return fmt.Errorf("%s: Stream.%s: %w", s.b.typ, op, err)
		}
		f(dev)
		return nil
	})
}

func (s *Stream) event(e device.Event) (*Event, error) {
	ev, ok := e.(*Event)
	if !ok || ev == nil || ev.b != s.b {
		return nil, fmt.Errorf("%w: %s: not an event of this backend: %T", device.ErrInvalidValue, s.b.typ, e)
	}
	return ev, nil
}

// Record queues e's timestamp.
func (s *Stream) Record(e device.Event) error {
	ev, err := s.event(e)
	if err != nil {
		return err
	}
	ev.mu.Lock()
	gone := ev.gone
	ev.mu.Unlock()
	if gone {
		return fmt.Errorf("%w: %s: Record of a destroyed event", device.ErrReleased, s.b.typ)
	}
	return s.enqueue("Record", step{
		queued: func(on *Stream) { // when the record is queued (each replay's, for a captured one)
			ev.mu.Lock()
			ev.on, ev.recorded = on, false
			ev.mu.Unlock()
		},
		run: func() error {
			ev.mu.Lock()
			ev.at, ev.recorded, ev.on = time.Now(), true, nil
			ev.mu.Unlock()
			return nil
		},
	})
}

// Wait runs e's stream up to it now (the fake has no concurrency to order).
func (s *Stream) Wait(e device.Event) error {
	ev, err := s.event(e)
	if err != nil {
		return err
	}
	return ev.Synchronize()
}

// Synchronize runs the queued work. On a capturing stream it fails, as a
// driver's does, and ruins the capture (EndCapture then fails).
func (s *Stream) Synchronize() error {
	s.mu.Lock()
	gone, capt := s.gone, s.capt
	if capt != nil {
		capt.ruined = true
	}
	s.mu.Unlock()
	if gone {
		return fmt.Errorf("%w: %s: Synchronize on a destroyed stream", device.ErrReleased, s.b.typ)
	}
	if capt != nil {
		return fmt.Errorf("%w: %s: Synchronize on a capturing stream; the capture is invalidated", device.ErrNotSupported, s.b.typ)
	}
	return s.flush()
}

// Destroy runs the queued work and releases the stream; a capturing stream
// is refused (EndCapture first).
func (s *Stream) Destroy() error {
	s.mu.Lock()
	capt := s.capt != nil
	s.mu.Unlock()
	if capt {
		return fmt.Errorf("%w: %s: Destroy of a capturing stream: EndCapture first", device.ErrInvalidValue, s.b.typ)
	}
	err := s.flush()
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return nil
	}
	s.gone = true
	s.mu.Unlock()
	s.d.mem.mu.Lock()
	for i, x := range s.d.mem.streams {
		if x == s {
			s.d.mem.streams = append(s.d.mem.streams[:i], s.d.mem.streams[i+1:]...)
			break
		}
	}
	s.d.mem.mu.Unlock()
	return err
}

// Device is the event's device.
func (e *Event) Device() int { return e.d.index }

// Synchronize runs the work before the event's record.
func (e *Event) Synchronize() error {
	e.mu.Lock()
	on, gone := e.on, e.gone
	e.mu.Unlock()
	if gone {
		return fmt.Errorf("%w: %s: Synchronize on a destroyed event", device.ErrReleased, e.b.typ)
	}
	if on != nil {
		return on.flush()
	}
	return nil
}

// Since is the time between start's record and e's; ErrNotReady until both
// have run.
func (e *Event) Since(start device.Event) (time.Duration, error) {
	st, ok := start.(*Event)
	if !ok || st == nil || st.b != e.b {
		return 0, fmt.Errorf("%w: %s: not an event of this backend: %T", device.ErrInvalidValue, e.b.typ, start)
	}
	at := func(x *Event) (time.Time, error) {
		x.mu.Lock()
		defer x.mu.Unlock()
		switch {
		case x.gone:
			return time.Time{}, fmt.Errorf("%w: %s: Since with a destroyed event", device.ErrReleased, e.b.typ)
		case x.on != nil:
			return time.Time{}, fmt.Errorf("%w: %s: the event has not been reached", device.ErrNotReady, e.b.typ)
		case !x.recorded:
			return time.Time{}, fmt.Errorf("%w: %s: the event was never recorded", device.ErrInvalidValue, e.b.typ)
		}
		return x.at, nil
	}
	t0, err := at(st)
	if err != nil {
		return 0, err
	}
	t1, err := at(e)
	if err != nil {
		return 0, err
	}
	return t1.Sub(t0), nil
}

// Destroy releases the event; a second call does nothing.
func (e *Event) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	return nil
}
