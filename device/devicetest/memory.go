package devicetest

import (
	"fmt"
	"sort"
	"sync"

	"github.com/flagos-ai/flagshim/device"
)

// memory is one device's memory: allocations at addresses of their own
// (device i's start at (i+1) << 40), with their bytes.
type memory struct {
	mu      sync.Mutex
	total   uint64
	used    uint64
	next    uint64
	allocs  map[uint64][]byte // by base address
	bases   []uint64          // sorted
	streams []*Stream         // live streams, for a device synchronize
	ipc     map[uint64]int    // open IPC mappings, by base
}

func newMemory(index int, total uint64) memory {
	return memory{total: total, next: uint64(index+1) << 40, allocs: map[uint64][]byte{}}
}

// alloc reserves n bytes; mu held.
func (m *memory) alloc(n uint64) (device.Ptr, error) {
	if n == 0 {
		return 0, fmt.Errorf("%w: an allocation of 0 bytes", device.ErrInvalidValue)
	}
	if n > m.total-m.used {
		return 0, fmt.Errorf("%w: %d bytes asked, %d free of %d", device.ErrOutOfMemory, n, m.total-m.used, m.total)
	}
	base := m.next
	m.next += (n + 255) &^ 255
	m.used += n
	m.allocs[base] = make([]byte, n)
	i := sort.Search(len(m.bases), func(i int) bool { return m.bases[i] >= base })
	m.bases = append(m.bases, 0)
	copy(m.bases[i+1:], m.bases[i:])
	m.bases[i] = base
	return device.Ptr(base), nil
}

// free releases the allocation at p; mu held.
func (m *memory) free(p device.Ptr) error {
	b, ok := m.allocs[uint64(p)]
	if !ok {
		return fmt.Errorf("%w: %#x is not an allocation's start", device.ErrInvalidValue, uint64(p))
	}
	m.used -= uint64(len(b))
	delete(m.allocs, uint64(p))
	i := sort.Search(len(m.bases), func(i int) bool { return m.bases[i] >= uint64(p) })
	m.bases = append(m.bases[:i], m.bases[i+1:]...)
	return nil
}

// span is the device memory [p, p+n), or an error when it does not lie in
// one allocation; mu held.
func (m *memory) span(p device.Ptr, n int) ([]byte, error) {
	i := sort.Search(len(m.bases), func(i int) bool { return m.bases[i] > uint64(p) }) - 1
	if i >= 0 {
		base := m.bases[i]
		b := m.allocs[base]
		off := uint64(p) - base
		if off <= uint64(len(b)) && uint64(n) <= uint64(len(b))-off {
			return b[off : off+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("%w: [%#x, +%d) is not device memory of one allocation", device.ErrInvalidValue, uint64(p), n)
}

// flushAll runs the queued work of every stream of the device.
func (m *memory) flushAll() error {
	m.mu.Lock()
	streams := append([]*Stream(nil), m.streams...)
	m.mu.Unlock()
	var first error
	for _, s := range streams {
		if err := s.flush(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// MemInfo is the device's free and total memory.
func (b *Backend) MemInfo(index int) (free, total uint64, err error) {
	d, err := b.device(index)
	if err != nil {
		return 0, 0, err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return d.mem.total - d.mem.used, d.mem.total, nil
}

// Alloc allocates size bytes of device memory.
func (b *Backend) Alloc(index int, size uint64) (device.Ptr, error) {
	d, err := b.device(index)
	if err != nil {
		return 0, err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	p, err := d.mem.alloc(size)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: Alloc: %w", b.typ, d.index, err)
	}
	return p, nil
}

// Free releases memory Alloc returned.
func (b *Backend) Free(index int, p device.Ptr) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	if err := d.mem.free(p); err != nil {
		return fmt.Errorf("%s:%d: Free: %w", b.typ, d.index, err)
	}
	return nil
}

// CopyHtoD copies src into device memory at dst.
func (b *Backend) CopyHtoD(index int, dst device.Ptr, src []byte) error {
	return b.copyOn(index, "CopyHtoD", dst, len(src), func(dev []byte) { copy(dev, src) })
}

// CopyDtoH copies device memory at src into dst, after the device's queued
// work (as a copy on the default stream waits for it).
func (b *Backend) CopyDtoH(index int, dst []byte, src device.Ptr) error {
	return b.copyOn(index, "CopyDtoH", src, len(dst), func(dev []byte) { copy(dst, dev) })
}

func (b *Backend) copyOn(index int, op string, p device.Ptr, n int, f func(dev []byte)) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := d.mem.flushAll(); err != nil {
		return err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	dev, err := d.mem.span(p, n)
	if err != nil {
		return fmt.Errorf("%s:%d: %s: %w", b.typ, d.index, op, err)
	}
	f(dev)
	return nil
}
