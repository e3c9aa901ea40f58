package drivertest

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// GraphBackend is what GraphReplay needs of a backend: the vendor's, or
// flagos (or the cuda alias) routing to it.
type GraphBackend interface {
	device.Memory
	device.Streams
	device.Graphs
}

// GraphReplay captures launches launches of m's inc kernel (inc(p, n): one
// thread adds 1 to each of n 32-bit counters) on a new stream of device dev,
// checks that the capture ran nothing, instantiates the graph, destroys the
// graph (its instance lives on), replays the instance replays times on the
// stream and once on the default stream, and checks that every counter is
// launches*(replays+1), exactly. Then it destroys the instance twice (the
// second does nothing) and checks that both handles answer ErrReleased.
// The GPU tests use it too, with a PTX inc of the same parameters.
func GraphReplay(t *testing.T, c GraphBackend, m device.LoadedModule, dev, n, launches, replays int) {
	t.Helper()
	inc, err := m.Function("inc")
	require.NoError(t, err)
	p, err := c.Alloc(dev, uint64(4*n)) // before the capture: allocations are not recorded
	require.NoError(t, err)
	defer c.Free(dev, p)
	require.NoError(t, c.CopyHtoD(dev, p, make([]byte, 4*n)))
	st, err := c.NewStream(dev)
	require.NoError(t, err)
	defer st.Destroy()

	block := uint32(256)
	grid := (uint32(n) + block - 1) / block
	require.NoError(t, c.BeginCapture(st))
	for range launches {
		require.NoError(t, st.Launch(inc, [3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, p, uint32(n)))
	}
	g, err := c.EndCapture(st)
	require.NoError(t, err)
	assert.Equal(t, dev, g.Device())
	got := make([]byte, 4*n)
	require.NoError(t, c.CopyDtoH(dev, got, p))
	checkCounters(t, got, 0, "after the capture: captured launches are recorded, not run")

	exec, err := g.Instantiate()
	require.NoError(t, err)
	assert.Equal(t, dev, exec.Device())
	require.NoError(t, g.Destroy())
	for range replays {
		require.NoError(t, exec.Launch(st))
	}
	require.NoError(t, st.Synchronize())
	require.NoError(t, c.CopyDtoH(dev, got, p))
	checkCounters(t, got, uint32(launches*replays), "after the replays on the stream")
	require.NoError(t, exec.Launch(nil), "the default stream")
	require.NoError(t, c.CopyDtoH(dev, got, p))
	checkCounters(t, got, uint32(launches*(replays+1)), "after one more replay on the default stream")

	require.NoError(t, exec.Destroy())
	require.NoError(t, exec.Destroy(), "a second Destroy does nothing")
	require.NoError(t, g.Destroy(), "a second Destroy does nothing")
	assert.ErrorIs(t, exec.Launch(st), device.ErrReleased)
	_, err = g.Instantiate()
	assert.ErrorIs(t, err, device.ErrReleased)
}

// checkCounters checks that every 32-bit counter of got is want.
func checkCounters(t *testing.T, got []byte, want uint32, when string) {
	t.Helper()
	for i := 0; i+4 <= len(got); i += 4 {
		if v := binary.LittleEndian.Uint32(got[i:]); v != want {
			t.Fatalf("%s: counter %d = %d, want %d", when, i/4, v, want)
		}
	}
}

// rawCall calls an exported function of the fake the child loaded with
// value arguments and returns its result code.
func rawCall(t *testing.T, name string, args ...uintptr) int {
	t.Helper()
	lib, err := purego.Dlopen(os.Getenv(libEnv), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	sym, err := purego.Dlsym(lib, name)
	require.NoError(t, err)
	r, _, _ := purego.SyscallN(sym, args...)
	return int(int32(uint32(r)))
}

func graphs(t *testing.T, s *Suite, b *driver.Backend) {
	liveGraphs, liveExecs, mode := counter(t, "fake_live_graphs"), counter(t, "fake_live_execs"), counter(t, "fake_capture_mode")
	require.True(t, b.Available().Available)
	assert.NotContains(t, b.Describe().Extra, "missing.graphs")
	g, err := device.GraphsOf(b)
	require.NoError(t, err)
	lm, err := b.LoadModule(1, []byte(AddImage), "graphs")
	require.NoError(t, err)
	defer lm.Unload()

	GraphReplay(t, b, lm, 1, 1000, 100, 7)
	assert.Equal(t, 2, mode(), "captured in relaxed mode (CU_STREAM_CAPTURE_MODE_RELAXED)")
	assert.Zero(t, liveGraphs())
	assert.Zero(t, liveExecs())

	// The default stream cannot be captured: the fake refuses the NULL and
	// legacy streams as CUDA and HIP do (900), and the backend says so
	// before the driver is asked.
	assert.Equal(t, 900, rawCall(t, s.sym(driver.OpStreamBeginCapture), 0, 2))
	assert.Equal(t, 900, rawCall(t, s.sym(driver.OpStreamBeginCapture), 1, 2))
	err = g.BeginCapture(nil)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "default stream cannot be captured")
	_, err = g.EndCapture(nil)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorIs(t, g.BeginCapture((*driver.Stream)(nil)), device.ErrInvalidValue)

	inc, err := lm.Function("inc")
	require.NoError(t, err)
	p, err := b.Alloc(1, 4*64)
	require.NoError(t, err)
	defer b.Free(1, p)
	require.NoError(t, b.CopyHtoD(1, p, make([]byte, 4*64)))
	grid, block := [3]uint32{1, 1, 1}, [3]uint32{64, 1, 1}
	st, err := b.NewStream(1)
	require.NoError(t, err)

	// Misuse: end without a begin, begin twice, destroy while capturing.
	_, err = g.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "not capturing")
	require.NoError(t, g.BeginCapture(st))
	err = g.BeginCapture(st)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "capturing already")
	assert.ErrorIs(t, st.Destroy(), device.ErrInvalidValue, "a capturing stream is not destroyed")
	empty, err := g.EndCapture(st)
	require.NoError(t, err, "an empty capture is an empty graph")
	ex, err := empty.Instantiate()
	require.NoError(t, err)
	require.NoError(t, ex.Launch(st))
	require.NoError(t, ex.Destroy())
	require.NoError(t, empty.Destroy())

	// A synchronize during the capture is refused and ruins it: the end
	// reports it, gives no graph, and the stream works again.
	require.NoError(t, g.BeginCapture(st))
	require.NoError(t, st.Launch(inc, grid, block, 0, p, uint32(64)))
	err = st.Synchronize()
	assert.ErrorIs(t, err, device.ErrNotSupported, "STREAM_CAPTURE_UNSUPPORTED")
	var ce *clib.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 900, ce.Code)
	ruined, err := g.EndCapture(st)
	assert.Nil(t, ruined)
	assert.ErrorIs(t, err, device.ErrInvalidValue, "STREAM_CAPTURE_INVALIDATED")
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 901, ce.Code)
	assert.Equal(t, s.Vendor.ResultName(901), ce.Name)
	assert.Zero(t, liveGraphs())

	// Copies and event records are captured too, and happen at each replay.
	hb, err := b.AllocHost(1, 4*64)
	require.NoError(t, err)
	defer hb.Free()
	ev, err := b.NewEvent(1)
	require.NoError(t, err)
	defer ev.Destroy()
	require.NoError(t, g.BeginCapture(st))
	require.NoError(t, st.Launch(inc, grid, block, 0, p, uint32(64)))
	require.NoError(t, st.Launch(inc, grid, block, 0, p, uint32(64)))
	require.NoError(t, st.CopyDtoH(hb.Bytes(), p))
	require.NoError(t, st.Record(ev))
	gr, err := g.EndCapture(st)
	require.NoError(t, err)
	exec, err := gr.Instantiate()
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		require.NoError(t, exec.Launch(st))
		require.NoError(t, ev.Synchronize(), "the event recorded by replay %d", i)
		checkCounters(t, hb.Bytes(), uint32(2*i), "the copy replayed after the launches")
	}

	// An instance launches on streams of its own device only, and allocates
	// nothing to do it.
	st0, err := b.NewStream(0)
	require.NoError(t, err)
	err = exec.Launch(st0)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "graph of device 1 on a stream of device 0")
	require.NoError(t, st0.Destroy())
	assert.ErrorIs(t, exec.Launch(st0), device.ErrReleased)
	if !raceEnabled {
		allocs := testing.AllocsPerRun(200, func() { _ = exec.Launch(st) })
		assert.Zero(t, allocs, "GraphExec.Launch must not allocate")
	}
	require.NoError(t, st.Synchronize())

	// An instance launched into a capture is recorded with its work.
	before := binary.LittleEndian.Uint32(hb.Bytes())
	require.NoError(t, g.BeginCapture(st))
	require.NoError(t, exec.Launch(st))
	outer, err := g.EndCapture(st)
	require.NoError(t, err)
	oexec, err := outer.Instantiate()
	require.NoError(t, err)
	require.NoError(t, oexec.Launch(st))
	require.NoError(t, ev.Synchronize())
	checkCounters(t, hb.Bytes(), before+2, "a replay of a graph that launched an instance")
	require.NoError(t, oexec.Destroy())
	require.NoError(t, outer.Destroy())

	// A graph whose kernels' module is unloaded neither instantiates nor
	// launches.
	other, err := b.LoadModule(1, []byte(AddImage), "other")
	require.NoError(t, err)
	inc2, err := other.Function("inc")
	require.NoError(t, err)
	require.NoError(t, g.BeginCapture(st))
	require.NoError(t, st.Launch(inc2, grid, block, 0, p, uint32(64)))
	g2, err := g.EndCapture(st)
	require.NoError(t, err)
	exec2, err := g2.Instantiate()
	require.NoError(t, err)
	require.NoError(t, other.Unload())
	err = exec2.Launch(st)
	assert.ErrorIs(t, err, device.ErrReleased)
	assert.ErrorContains(t, err, `module "other"`)
	_, err = g2.Instantiate()
	assert.ErrorIs(t, err, device.ErrReleased)

	for _, x := range []interface{ Destroy() error }{exec, exec2, gr, g2, st} {
		require.NoError(t, x.Destroy())
	}
	assert.Zero(t, liveGraphs())
	assert.Zero(t, liveExecs())
	assert.ErrorIs(t, g.BeginCapture(st), device.ErrReleased)
}

func noGraphs(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, b.Available().Available)
	g, err := device.GraphsOf(b)
	require.NoError(t, err, "the backend has the capability; its library lacks the functions")
	st, err := b.NewStream(0)
	require.NoError(t, err)
	defer st.Destroy()
	err = g.BeginCapture(st)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, s.sym(driver.OpStreamBeginCapture))
	assert.ErrorContains(t, err, "needed for graphs")
	_, err = g.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.Contains(t, b.Describe().Extra, "missing.graphs")
	// The rest still works, streams included.
	lm, err := b.LoadModule(0, []byte(AddImage), "x")
	require.NoError(t, err)
	s.roundTrip(t, b, lm, 0, 10)
	require.NoError(t, lm.Unload())
	require.NoError(t, st.Synchronize())
}

// bareCaptureSkip: the case is about a CUDA-shaped API, whose capture has a
// versioned name.
func bareCaptureSkip(s *Suite) string {
	if !strings.HasSuffix(s.sym(driver.OpStreamBeginCapture), "_v2") {
		return "the vendor's capture has one name: no versioned export to do without"
	}
	return ""
}

// bareCapture runs on a fake without *StreamBeginCapture_v2 whose bare name
// takes the mode. CUDA's bare name is the one-argument CUDA 10.0 ABI, so a
// vendor that lists only the _v2 name has no graphs there (never the bare
// one); MUSA lists the bare name as its fallback and captures through it.
func bareCapture(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, b.Available().Available)
	st, err := b.NewStream(0)
	require.NoError(t, err)
	defer st.Destroy()
	bare := strings.TrimSuffix(s.sym(driver.OpStreamBeginCapture), "_v2")
	if !contains(s.syms(driver.OpStreamBeginCapture), bare) {
		err := b.BeginCapture(st)
		assert.ErrorIs(t, err, device.ErrNotSupported)
		assert.ErrorContains(t, err, s.sym(driver.OpStreamBeginCapture))
		return
	}
	lm, err := b.LoadModule(0, []byte(AddImage), "bare")
	require.NoError(t, err)
	defer lm.Unload()
	GraphReplay(t, b, lm, 0, 10, 5, 2)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
