package device

// Graphs is implemented by backends that record the work queued on a stream
// once and replay it with one call: CUDA Graphs (cuStreamBeginCapture_v2,
// cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch) on cuda,
// and MUSA's and HIP's equivalents on musa and hip; the flagos device
// forwards to the backend it routes to. Use [GraphsOf] to get it; a backend
// whose driver lacks graphs answers every call with an error matching
// ErrNotSupported that names what is missing.
//
// Replaying a graph of N kernels costs one launch call instead of N, which
// is the point of it for short kernels whose launch costs more than their
// run:
//
//	g, _ := device.GraphsOf(b)
//	st, _ := streams.NewStream(0)
//	p, _ := mem.Alloc(0, n)          // allocate first: allocations are not recorded
//	_ = g.BeginCapture(st)
//	for range 100 {
//		_ = st.Launch(fn, grid, block, 0, p, uint32(n)) // recorded, not run
//	}
//	graph, err := g.EndCapture(st)
//	exec, err := graph.Instantiate()
//	for range steps {
//		_ = exec.Launch(st)          // the 100 kernels, one call
//	}
//	_ = st.Synchronize()
//
// # What is recorded
//
// Between BeginCapture and EndCapture, the work queued on the capturing
// stream (its Launch, CopyHtoD and CopyDtoH; Record and Wait as the driver's
// capture rules allow) is recorded instead of run, with its arguments as
// they were when it was queued. Nothing else is: Memory's Alloc, Free and synchronous copies and Compute.Launch act
// at once and are not part of the graph. Allocate, load modules and fill
// buffers before BeginCapture; the buffers and the modules whose kernels a
// graph launches must stay alive as long as the graph and its instances do
// (a GraphExec whose kernels' module was unloaded refuses to launch, with
// an error matching ErrReleased).
//
// During a capture, do not synchronize the capturing stream, the device
// (Backend.Synchronize) or an event recorded on it, and do not queue work
// on the device's default stream (Memory's copies, Compute.Launch): the
// drivers refuse such calls (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900,
// _IMPLICIT 906) and the capture is then invalidated, so EndCapture fails
// (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901, matching ErrInvalidValue) and
// returns no graph. The stream itself leaves capture mode either way and can
// be used, or captured again, after EndCapture.
//
// # The capture mode
//
// Captures run in the drivers' relaxed mode (CU_STREAM_CAPTURE_MODE_RELAXED,
// hipStreamCaptureModeRelaxed). The two other modes suit a C program whose
// capturing thread is its own, and not Go: goroutines move between OS
// threads, so a capture begun on one thread is usually ended on another
// (the global and thread-local modes refuse that with
// CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD 908), and other goroutines, or
// libraries, that allocate or synchronize on whatever thread they run would
// fail, and invalidate the capture, while any capture is active (global
// mode) or when they happen to run on the capturing thread (thread-local
// mode). Relaxed mode forbids nothing outside the capture itself; the rules
// above are what the program keeps to instead.
type Graphs interface {
	// BeginCapture starts recording the work queued on s, which must be a
	// stream of this backend from Streams.NewStream and not capturing
	// already. The device's default stream cannot be captured (the drivers
	// refuse it): a nil s is an error matching ErrInvalidValue.
	BeginCapture(s Stream) error
	// EndCapture ends the capture BeginCapture started on s and returns
	// the recorded graph, on s's device. A capture the driver invalidated
	// (see above) gives an error and no graph; s has left capture mode
	// either way.
	EndCapture(s Stream) (Graph, error)
}

// Graph is recorded work (CUgraph, MUgraph, hipGraph_t). It can be
// instantiated any number of times. Its methods are safe for concurrent use;
// after Destroy they fail with an error matching ErrReleased.
type Graph interface {
	// Device is the index of the device whose stream was captured.
	Device() int
	// Instantiate makes an executable instance of the graph, which can be
	// launched any number of times; the graph can be destroyed afterwards
	// without touching its instances.
	Instantiate() (GraphExec, error)
	// Destroy releases the graph. A second call does nothing.
	Destroy() error
}

// GraphExec is an instantiated graph (CUgraphExec, MUgraphExec,
// hipGraphExec_t). Launch is a hot path: it allocates nothing. Its methods
// are safe for concurrent use; after Destroy they fail with an error
// matching ErrReleased.
type GraphExec interface {
	// Device is the index of the graph's device.
	Device() int
	// Launch queues the whole graph on s, a stream of the graph's device
	// (nil: the device's default stream), and returns without waiting. On
	// a stream that is capturing, the replay is recorded too (a child
	// graph). CUDA runs the launches of one instance one after another,
	// in the order they were queued, whatever their streams.
	Launch(s Stream) error
	// Destroy releases the instance once its queued launches are done. A
	// second call does nothing.
	Destroy() error
}

// GraphsOf returns b's Graphs, or an error matching ErrNotSupported that
// names the backend when it has none.
func GraphsOf(b Backend) (Graphs, error) {
	if g, ok := b.(Graphs); ok {
		return g, nil
	}
	return nil, lacks(b, "graphs (device.Graphs)")
}
