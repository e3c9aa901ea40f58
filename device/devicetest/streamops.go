package devicetest

import (
	"encoding/binary"
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// ---- streams and events ----

// Query runs what can run and answers device.ErrNotReady while a value
// wait holds the stream.
func (s *Stream) Query() error {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone {
		return fmt.Errorf("%w: %s: Query on a destroyed stream", device.ErrReleased, s.b.typ)
	}
	if err := s.drain(false); err == errHeld {
		return errPending
	} else if err != nil {
		return err
	}
	return nil
}

func (s *Stream) onDevice(op string, f func(m *memory) error) error {
	return s.push(op, func() error {
		s.d.mem.mu.Lock()
		defer s.d.mem.mu.Unlock()
		if err := f(&s.d.mem); err != nil {
			return fmt.Errorf("%s: Stream.%s: %w", s.b.typ, op, err)
		}
		return nil
	})
}

// Memset queues a memset.
func (s *Stream) Memset(p device.Ptr, value uint32, width int, count uint64) error {
	n, err := memsetSize(value, width, count)
	if err != nil {
		return fmt.Errorf("%s: %w", s.b.typ, err)
	}
	return s.onDevice("Memset", func(m *memory) error {
		dev, err := m.span(p, n)
		if err == nil {
			setter(value, width)(dev)
		}
		return err
	})
}

// CopyDtoD queues a device-to-device copy.
func (s *Stream) CopyDtoD(dst, src device.Ptr, size uint64) error {
	return s.onDevice("CopyDtoD", func(m *memory) error { return m.dtod(dst, src, size) })
}

// Alloc allocates now; the memory is the stream's work's from here on.
func (s *Stream) Alloc(size uint64) (device.Ptr, error) {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone {
		return 0, fmt.Errorf("%w: %s: Alloc on a destroyed stream", device.ErrReleased, s.b.typ)
	}
	return s.b.Alloc(s.d.index, size)
}

// Free queues the free.
func (s *Stream) Free(p device.Ptr) error {
	return s.onDevice("Free", func(m *memory) error { return m.free(p) })
}

// word is the 64-bit word at addr; mu held.
func (m *memory) word(addr device.Ptr) ([]byte, error) {
	if addr%8 != 0 {
		return nil, fmt.Errorf("%w: %#x is not 8-byte aligned", device.ErrInvalidValue, uint64(addr))
	}
	return m.span(addr, 8)
}

// WaitValue64 holds the stream's later work until the word at addr is at
// least value.
func (s *Stream) WaitValue64(addr device.Ptr, value uint64) error {
	s.d.mem.mu.Lock()
	_, err := s.d.mem.word(addr)
	s.d.mem.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: Stream.WaitValue64: %w", s.b.typ, err)
	}
	return s.push("WaitValue64", func() error {
		s.d.mem.mu.Lock()
		defer s.d.mem.mu.Unlock()
		w, err := s.d.mem.word(addr)
		if err != nil {
			return err
		}
		if binary.LittleEndian.Uint64(w) < value {
			return errHeld
		}
		return nil
	})
}

// WriteValue64 queues a write of the word at addr.
func (s *Stream) WriteValue64(addr device.Ptr, value uint64) error {
	return s.onDevice("WriteValue64", func(m *memory) error {
		w, err := m.word(addr)
		if err == nil {
			binary.LittleEndian.PutUint64(w, value)
		}
		return err
	})
}

// LaunchHostFunc queues f; it runs when the stream's work before it has
// run, on the goroutine that drains the stream. f must not use the stream.
func (s *Stream) LaunchHostFunc(f func()) error {
	if f == nil {
		return fmt.Errorf("%w: %s: LaunchHostFunc of a nil func", device.ErrInvalidValue, s.b.typ)
	}
	return s.push("LaunchHostFunc", func() error { f(); return nil })
}

// Query answers device.ErrNotReady while the work before the event's last
// record is held; it runs what can run.
func (e *Event) Query() error {
	e.mu.Lock()
	on, gone := e.on, e.gone
	e.mu.Unlock()
	if gone {
		return fmt.Errorf("%w: %s: Query on a destroyed event", device.ErrReleased, e.b.typ)
	}
	if on == nil {
		return nil
	}
	if err := on.drain(false); err != nil && err != errHeld {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.on != nil {
		return errPending
	}
	return nil
}
