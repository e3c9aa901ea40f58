package driver

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/device"
)

// Graphs: a stream's work captured (OpStreamBeginCapture in relaxed mode,
// OpStreamEndCapture), instantiated (OpGraphInstantiate) and replayed
// (OpGraphLaunch). Contexts are handled as for streams: each call locks its
// goroutine to its thread and makes the device current there, so a capture
// may begin on one OS thread and end on another, which relaxed mode allows
// (device.Graphs says why no other mode suits Go).

var graphOps = []Op{OpStreamBeginCapture, OpStreamEndCapture, OpGraphInstantiate, OpGraphLaunch, OpGraphExecDestroy, OpGraphDestroy}

// Graph is a captured graph of one device (CUgraph, hipGraph_t): a
// device.Graph.
type Graph struct {
	s    *state
	dev  *devState
	h    [1]uintptr
	mods []*Module // the modules whose kernels the capture launched
	mu   sync.Mutex
	gone atomic.Bool
}

// GraphExec is an instantiated graph (CUgraphExec, hipGraphExec_t): a
// device.GraphExec.
type GraphExec struct {
	s    *state
	dev  *devState
	h    uintptr
	mods []*Module
	// mu serialises Launch (which fills args) and Destroy. The driver
	// orders the launches of one instance anyway.
	mu   sync.Mutex
	args [2]uintptr // OpGraphLaunch's {exec, stream}, reused: no allocation
	gone atomic.Bool
}

var (
	_ device.Graph     = (*Graph)(nil)
	_ device.GraphExec = (*GraphExec)(nil)
)

// capture is what a stream's capture has recorded so far that the core
// must keep track of: the modules of the kernels it launched, so an
// instance refuses to launch once one of them is unloaded.
type capture struct {
	mu   sync.Mutex
	mods []*Module
}

func (c *capture) note(m *Module) {
	c.mu.Lock()
	if !slices.Contains(c.mods, m) {
		c.mods = append(c.mods, m)
	}
	c.mu.Unlock()
}

// captureStream checks that st is a live stream of this backend for
// BeginCapture or EndCapture.
func (b *Backend) captureStream(op string, st device.Stream) (*state, *Stream, error) {
	s, err := b.ready("graphs", graphOps...)
	if err != nil {
		return nil, nil, err
	}
	x, ok := st.(*Stream)
	switch {
	case st == nil || (ok && x == nil):
		return nil, nil, fmt.Errorf("%w: %s: %s needs a stream from NewStream: the device's default stream cannot be captured (the driver refuses it with STREAM_CAPTURE_UNSUPPORTED)",
			device.ErrInvalidValue, b.v.Type, op)
	case !ok:
		return nil, nil, fmt.Errorf("%w: %s: %s: not a stream of this backend: %T", device.ErrInvalidValue, b.v.Type, op, st)
	case x.s != s:
		return nil, nil, fmt.Errorf("%w: %s: %s: the stream belongs to another backend", device.ErrInvalidValue, b.v.Type, op)
	case x.gone.Load():
		return nil, nil, x.released(op)
	}
	return s, x, nil
}

// BeginCapture starts recording the work queued on st, in relaxed mode
// (cuStreamBeginCapture_v2(st, CU_STREAM_CAPTURE_MODE_RELAXED)).
func (b *Backend) BeginCapture(st device.Stream) error {
	s, x, err := b.captureStream("BeginCapture", st)
	if err != nil {
		return err
	}
	c := &capture{}
	if !x.capt.CompareAndSwap(nil, c) {
		return fmt.Errorf("%w: %s: BeginCapture on a stream of device %d that is capturing already", device.ErrInvalidValue, b.v.Type, x.dev.ordinal)
	}
	if err := s.enterDev(x.dev); err != nil {
		x.capt.Store(nil)
		return err
	}
	err = s.api.streamBeginCapture(x.h[0])
	leave()
	if err != nil {
		x.capt.Store(nil)
		return s.opErr(OpStreamBeginCapture, x.dev, err)
	}
	return nil
}

// EndCapture ends st's capture and returns the graph
// (cuStreamEndCapture). The stream leaves capture mode even when the
// driver reports an error (an invalidated capture).
func (b *Backend) EndCapture(st device.Stream) (device.Graph, error) {
	s, x, err := b.captureStream("EndCapture", st)
	if err != nil {
		return nil, err
	}
	c := x.capt.Load()
	if c == nil {
		return nil, fmt.Errorf("%w: %s: EndCapture on a stream of device %d that is not capturing (BeginCapture first)", device.ErrInvalidValue, b.v.Type, x.dev.ordinal)
	}
	if err := s.enterDev(x.dev); err != nil {
		return nil, err
	}
	g, err := s.api.streamEndCapture(x.h[0])
	if err != nil && g != 0 {
		_ = s.api.handleOp(OpGraphDestroy, []uintptr{g})
	}
	leave()
	x.capt.CompareAndSwap(c, nil)
	if err != nil {
		return nil, s.opErr(OpStreamEndCapture, x.dev, err)
	}
	if g == 0 {
		return nil, fmt.Errorf("%w: %s: %s(device %d) returned no graph", device.ErrInvalidValue, b.v.Type, s.api.sym(OpStreamEndCapture), x.dev.ordinal)
	}
	c.mu.Lock()
	mods := slices.Clone(c.mods)
	c.mu.Unlock()
	return &Graph{s: s, dev: x.dev, h: [1]uintptr{g}, mods: mods}, nil
}

// Device is the index of the graph's device.
func (g *Graph) Device() int { return g.dev.ordinal }

// Handle is the driver's graph handle.
func (g *Graph) Handle() uintptr { return g.h[0] }

func (g *Graph) released(op string) error {
	return fmt.Errorf("%w: %s: %s on a destroyed graph (device %d)", device.ErrReleased, g.s.v.Type, op, g.dev.ordinal)
}

// Instantiate makes an executable instance (cuGraphInstantiateWithFlags,
// flags 0).
func (g *Graph) Instantiate() (device.GraphExec, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone.Load() {
		return nil, g.released("Instantiate")
	}
	if err := unloaded(g.s, g.mods, "Graph.Instantiate"); err != nil {
		return nil, err
	}
	if err := g.s.enterDev(g.dev); err != nil {
		return nil, err
	}
	h, err := g.s.api.graphInstantiate(g.h[0])
	leave()
	if err != nil {
		return nil, g.s.opErr(OpGraphInstantiate, g.dev, err)
	}
	return &GraphExec{s: g.s, dev: g.dev, h: h, mods: g.mods}, nil
}

// Destroy releases the graph (cuGraphDestroy); its instances are not
// affected. A second call does nothing.
func (g *Graph) Destroy() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone.Load() {
		return nil
	}
	if err := g.s.enterDev(g.dev); err != nil {
		return err
	}
	err := g.s.api.handleOp(OpGraphDestroy, g.h[:])
	leave()
	if err != nil {
		return g.s.opErr(OpGraphDestroy, g.dev, err)
	}
	g.gone.Store(true)
	return nil
}

// Device is the index of the instance's device.
func (e *GraphExec) Device() int { return e.dev.ordinal }

// Handle is the driver's handle of the instance.
func (e *GraphExec) Handle() uintptr { return e.h }

func (e *GraphExec) released(op string) error {
	return fmt.Errorf("%w: %s: %s on a destroyed graph instance (device %d)", device.ErrReleased, e.s.v.Type, op, e.dev.ordinal)
}

// Launch queues the graph on st (nil: the device's default stream)
// (cuGraphLaunch). It allocates nothing.
func (e *GraphExec) Launch(st device.Stream) error {
	var sh uintptr
	if st != nil {
		x, ok := st.(*Stream)
		switch {
		case !ok || x == nil:
			return fmt.Errorf("%w: %s: GraphExec.Launch: not a stream of this backend: %T", device.ErrInvalidValue, e.s.v.Type, st)
		case x.s != e.s:
			return fmt.Errorf("%w: %s: GraphExec.Launch: the stream belongs to another backend", device.ErrInvalidValue, e.s.v.Type)
		case x.gone.Load():
			return x.released("GraphExec.Launch")
		case x.dev != e.dev:
			return fmt.Errorf("%w: %s: GraphExec.Launch of a graph of device %d on a stream of device %d", device.ErrInvalidValue, e.s.v.Type, e.dev.ordinal, x.dev.ordinal)
		}
		sh = x.h[0]
		if c := x.capt.Load(); c != nil { // launched into a capture: a child graph of it
			for _, m := range e.mods {
				c.note(m)
			}
		}
	}
	if err := unloaded(e.s, e.mods, "GraphExec.Launch"); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone.Load() {
		return e.released("Launch")
	}
	if err := e.s.enterDev(e.dev); err != nil {
		return err
	}
	e.args = [2]uintptr{e.h, sh}
	err := e.s.api.graphLaunch(e.args[:])
	leave()
	if err != nil {
		return e.s.opErr(OpGraphLaunch, e.dev, err)
	}
	return nil
}

// Destroy releases the instance (cuGraphExecDestroy); launches already
// queued still run. A second call does nothing.
func (e *GraphExec) Destroy() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone.Load() {
		return nil
	}
	if err := e.s.enterDev(e.dev); err != nil {
		return err
	}
	e.args = [2]uintptr{e.h}
	err := e.s.api.handleOp(OpGraphExecDestroy, e.args[:1])
	leave()
	if err != nil {
		return e.s.opErr(OpGraphExecDestroy, e.dev, err)
	}
	e.gone.Store(true)
	return nil
}

// unloaded is the error of a graph whose kernels' module is gone; nil when
// every one is loaded. It allocates nothing when all are.
func unloaded(s *state, mods []*Module, op string) error {
	for _, m := range mods {
		if m.gone.Load() {
			return fmt.Errorf("%w: %s: %s: the graph launches kernels of module %q, which was unloaded", device.ErrReleased, s.v.Type, op, m.label)
		}
	}
	return nil
}
