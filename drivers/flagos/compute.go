package flagos

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// The optional capabilities, forwarded: flagos asks the backend it routes to
// the same question, as a database/sql wrapper asks its driver. A routed
// backend that lacks one gives an error matching device.ErrNotSupported.
// Modules, functions, streams, events, host buffers, graphs and their
// instances are the vendor's own values (a module loaded through flagos on
// musa is a musa module, and the vendor backend's module hooks apply to it;
// a graph captured through flagos is a musa graph, and replaying it costs
// what it costs on musa).

// memory returns the route and its Memory for a call on device index.
func (b *Backend) memory(index int) (*route, device.Memory, error) {
	r, err := b.check(index)
	if err != nil {
		return nil, nil, err
	}
	m, err := device.MemoryOf(r.to)
	if err != nil {
		return nil, nil, r.wrap("memory", index, err)
	}
	return r, m, nil
}

func (b *Backend) compute(index int) (*route, device.Compute, error) {
	r, err := b.check(index)
	if err != nil {
		return nil, nil, err
	}
	c, err := device.ComputeOf(r.to)
	if err != nil {
		return nil, nil, r.wrap("compute", index, err)
	}
	return r, c, nil
}

func (b *Backend) streams(index int) (*route, device.Streams, error) {
	r, err := b.check(index)
	if err != nil {
		return nil, nil, err
	}
	s, err := device.StreamsOf(r.to)
	if err != nil {
		return nil, nil, r.wrap("streams", index, err)
	}
	return r, s, nil
}

// graphs returns the route and its Graphs for a capture on st (a stream of
// the routed backend; nil routes by the current device, and the routed
// backend refuses it).
func (b *Backend) graphs(st device.Stream) (int, *route, device.Graphs, error) {
	index := -1
	if st != nil {
		index = st.Device()
	}
	r, err := b.check(index)
	if err != nil {
		return index, nil, nil, err
	}
	g, err := device.GraphsOf(r.to)
	if err != nil {
		return index, nil, nil, r.wrap("graphs", index, err)
	}
	return index, r, g, nil
}

// MemInfo is the routed device's free and total memory.
func (b *Backend) MemInfo(index int) (free, total uint64, err error) {
	r, m, err := b.memory(index)
	if err != nil {
		return 0, 0, err
	}
	if free, total, err = m.MemInfo(index); err != nil {
		return 0, 0, r.wrap("memory info", index, err)
	}
	return free, total, nil
}

// Alloc allocates on the routed device.
func (b *Backend) Alloc(index int, size uint64) (device.Ptr, error) {
	r, m, err := b.memory(index)
	if err != nil {
		return 0, err
	}
	p, err := m.Alloc(index, size)
	if err != nil {
		return 0, r.wrap(fmt.Sprintf("alloc %d bytes", size), index, err)
	}
	return p, nil
}

// Free frees memory of the routed device.
func (b *Backend) Free(index int, p device.Ptr) error {
	r, m, err := b.memory(index)
	if err != nil {
		return err
	}
	if err := m.Free(index, p); err != nil {
		return r.wrap("free", index, err)
	}
	return nil
}

// CopyHtoD copies to the routed device.
func (b *Backend) CopyHtoD(index int, dst device.Ptr, src []byte) error {
	r, m, err := b.memory(index)
	if err != nil {
		return err
	}
	if err := m.CopyHtoD(index, dst, src); err != nil {
		return r.wrap("copy to device", index, err)
	}
	return nil
}

// CopyDtoH copies from the routed device.
func (b *Backend) CopyDtoH(index int, dst []byte, src device.Ptr) error {
	r, m, err := b.memory(index)
	if err != nil {
		return err
	}
	if err := m.CopyDtoH(index, dst, src); err != nil {
		return r.wrap("copy to host", index, err)
	}
	return nil
}

// LoadModule loads a module on the routed device; the vendor backend applies
// its module hooks.
func (b *Backend) LoadModule(index int, image []byte, label string) (device.LoadedModule, error) {
	r, c, err := b.compute(index)
	if err != nil {
		return nil, err
	}
	m, err := c.LoadModule(index, image, label)
	if err != nil {
		return nil, r.wrap("load module", index, err)
	}
	return m, nil
}

// Launch launches a kernel of a module loaded through flagos (or the vendor)
// on the routed device.
func (b *Backend) Launch(index int, fn device.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	r, c, err := b.compute(index)
	if err != nil {
		return err
	}
	if err := c.Launch(index, fn, grid, block, sharedMem, args...); err != nil {
		return r.wrap("launch", index, err)
	}
	return nil
}

// NewStream creates a stream of the routed device.
func (b *Backend) NewStream(index int) (device.Stream, error) {
	r, s, err := b.streams(index)
	if err != nil {
		return nil, err
	}
	st, err := s.NewStream(index)
	if err != nil {
		return nil, r.wrap("new stream", index, err)
	}
	return st, nil
}

// NewEvent creates an event of the routed device.
func (b *Backend) NewEvent(index int) (device.Event, error) {
	r, s, err := b.streams(index)
	if err != nil {
		return nil, err
	}
	e, err := s.NewEvent(index)
	if err != nil {
		return nil, r.wrap("new event", index, err)
	}
	return e, nil
}

// AllocHost allocates pinned host memory for the routed device.
func (b *Backend) AllocHost(index int, size uint64) (device.HostBuffer, error) {
	r, s, err := b.streams(index)
	if err != nil {
		return nil, err
	}
	hb, err := s.AllocHost(index, size)
	if err != nil {
		return nil, r.wrap("alloc host", index, err)
	}
	return hb, nil
}

// BeginCapture starts recording st, a stream of the routed backend (from
// NewStream), through the routed backend's graphs.
func (b *Backend) BeginCapture(st device.Stream) error {
	index, r, g, err := b.graphs(st)
	if err != nil {
		return err
	}
	if err := g.BeginCapture(st); err != nil {
		return r.wrap("begin capture", index, err)
	}
	return nil
}

// EndCapture ends st's capture and returns the routed backend's graph; its
// instances launch on the routed backend's streams.
func (b *Backend) EndCapture(st device.Stream) (device.Graph, error) {
	index, r, g, err := b.graphs(st)
	if err != nil {
		return nil, err
	}
	gr, err := g.EndCapture(st)
	if err != nil {
		return nil, r.wrap("end capture", index, err)
	}
	return gr, nil
}
