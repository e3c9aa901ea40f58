package devicetest

import (
	"fmt"
	"slices"
	"sync"

	"github.com/flagos-ai/flagshim/device"
)

// Graphs, recorded and replayed in Go: while a stream captures, the work
// queued on it (launches with their arguments copied, copies, event
// records) is kept as steps instead of queued; a graph is those steps, an
// instance a copy of them, and a launch of the instance queues them all on
// a stream, in order, as one call. The rules are a driver's: the default
// stream cannot be captured (nil is an error matching
// device.ErrInvalidValue), synchronizing a capturing stream fails and ruins
// the capture (EndCapture then fails with device.ErrInvalidValue), a
// capturing stream is not destroyed, and graphs and instances answer
// device.ErrReleased after Destroy.

// step is one piece of recorded or queued work: run does it; queued, when
// set, runs as it is queued on a stream (an event record marks its event
// pending there); mod is the module of a launch's kernel.
type step struct {
	run    func() error
	queued func(on *Stream)
	mod    *LoadedModule
}

// capture is what a capturing stream has recorded.
type capture struct {
	steps  []step
	ruined bool
}

// Graph is a fake graph: the steps a capture recorded.
type Graph struct {
	b     *Backend
	d     *dev
	steps []step
	mu    sync.Mutex
	gone  bool
}

// GraphExec is a fake instance of a graph.
type GraphExec struct {
	b     *Backend
	d     *dev
	steps []step
	mu    sync.Mutex
	gone  bool
}

var (
	_ device.Graphs    = (*Backend)(nil)
	_ device.Graph     = (*Graph)(nil)
	_ device.GraphExec = (*GraphExec)(nil)
)

func (b *Backend) captureStream(op string, st device.Stream) (*Stream, error) {
	s, ok := st.(*Stream)
	switch {
	case st == nil || (ok && s == nil):
		return nil, fmt.Errorf("%w: %s: %s needs a stream from NewStream: the device's default stream cannot be captured", device.ErrInvalidValue, b.typ, op)
	case !ok || s.b != b:
		return nil, fmt.Errorf("%w: %s: %s: not a stream of this backend: %T", device.ErrInvalidValue, b.typ, op, st)
	}
	return s, nil
}

// BeginCapture starts recording the work queued on st.
func (b *Backend) BeginCapture(st device.Stream) error {
	s, err := b.captureStream("BeginCapture", st)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.gone:
		return fmt.Errorf("%w: %s: BeginCapture on a destroyed stream", device.ErrReleased, b.typ)
	case s.capt != nil:
		return fmt.Errorf("%w: %s: BeginCapture on a stream that is capturing already", device.ErrInvalidValue, b.typ)
	}
	s.capt = &capture{}
	return nil
}

// EndCapture ends st's capture and returns the graph.
func (b *Backend) EndCapture(st device.Stream) (device.Graph, error) {
	s, err := b.captureStream("EndCapture", st)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.capt
	switch {
	case s.gone:
		return nil, fmt.Errorf("%w: %s: EndCapture on a destroyed stream", device.ErrReleased, b.typ)
	case c == nil:
		return nil, fmt.Errorf("%w: %s: EndCapture on a stream that is not capturing (BeginCapture first)", device.ErrInvalidValue, b.typ)
	}
	s.capt = nil
	if c.ruined {
		return nil, fmt.Errorf("%w: %s: the capture was invalidated (the stream was synchronized while it captured)", device.ErrInvalidValue, b.typ)
	}
	return &Graph{b: b, d: s.d, steps: c.steps}, nil
}

// Device is the graph's device.
func (g *Graph) Device() int { return g.d.index }

// Instantiate makes an instance of the graph.
func (g *Graph) Instantiate() (device.GraphExec, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return nil, fmt.Errorf("%w: %s: Instantiate of a destroyed graph", device.ErrReleased, g.b.typ)
	}
	if err := unloaded(g.b, g.steps); err != nil {
		return nil, err
	}
	return &GraphExec{b: g.b, d: g.d, steps: slices.Clone(g.steps)}, nil
}

// Destroy releases the graph; a second call does nothing.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gone, g.steps = true, nil
	return nil
}

// Device is the instance's device.
func (e *GraphExec) Device() int { return e.d.index }

// Launch queues the graph's work on st, in order; nil runs it at once after
// the device's queued stream work (the default stream).
func (e *GraphExec) Launch(st device.Stream) error {
	var s *Stream
	if st != nil {
		var ok bool
		s, ok = st.(*Stream)
		switch {
		case !ok || s == nil || s.b != e.b:
			return fmt.Errorf("%w: %s: GraphExec.Launch: not a stream of this backend: %T", device.ErrInvalidValue, e.b.typ, st)
		case s.d != e.d:
			return fmt.Errorf("%w: %s: GraphExec.Launch of a graph of device %d on a stream of device %d", device.ErrInvalidValue, e.b.typ, e.d.index, s.d.index)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return fmt.Errorf("%w: %s: Launch of a destroyed graph instance", device.ErrReleased, e.b.typ)
	}
	if err := unloaded(e.b, e.steps); err != nil {
		return err
	}
	if s == nil {
		if err := e.d.mem.flushAll(); err != nil {
			return err
		}
		now := &Stream{b: e.b, d: e.d}
		for _, st := range e.steps {
			now.queueLocked(st)
		}
		return now.flush()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return fmt.Errorf("%w: %s: GraphExec.Launch on a destroyed stream", device.ErrReleased, e.b.typ)
	}
	for _, st := range e.steps {
		if s.capt != nil { // a graph launched into a capture is recorded too
			s.capt.steps = append(s.capt.steps, st)
		} else {
			s.queueLocked(st)
		}
	}
	return nil
}

// Destroy releases the instance; a second call does nothing.
func (e *GraphExec) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone, e.steps = true, nil
	return nil
}

// unloaded is the error of recorded launches whose module is gone.
func unloaded(b *Backend, steps []step) error {
	for _, st := range steps {
		if st.mod == nil {
			continue
		}
		st.mod.mu.Lock()
		gone := st.mod.gone
		st.mod.mu.Unlock()
		if gone {
			return fmt.Errorf("%w: %s: the graph launches kernels of module %q, which was unloaded", device.ErrReleased, b.typ, st.mod.label)
		}
	}
	return nil
}
