//go:build gpu

package cuda

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// TestGPUGraphReplay: 100 launches of gpu.ptx's inc over 2^20 counters
// captured into one CUDA graph, replayed 10 times on a stream and once on
// the legacy default stream: every counter must be exactly 1100, and 0
// right after the capture (captured launches are recorded, not run). The
// same check the fakes pass (drivertest.GraphReplay).
func TestGPUGraphReplay(t *testing.T) {
	b := gpuBackend(t)
	lm, err := b.LoadModule(0, []byte(gpuPTX), "gpu.ptx")
	require.NoError(t, err)
	defer lm.Unload()
	t0 := time.Now()
	drivertest.GraphReplay(t, b, lm, 0, 1<<20, 100, 10)
	t.Logf("capture of 100 launches, instantiate, 11 replays over 2^20 counters, checks: %v", time.Since(t0))
}

// TestGPUGraphRules: what the documentation of device.Graphs promises, on
// the real driver: relaxed mode lets an allocation happen during a capture
// (at once, unrecorded) and a capture end on another OS thread; a synchronize during a capture
// is refused (900) and ruins it (901); the default stream is refused before
// the driver is asked; replaying allocates nothing; an instance outlives
// its graph and refuses to launch once its kernels' module is unloaded.
func TestGPUGraphRules(t *testing.T) {
	b := gpuBackend(t)
	lm, err := b.LoadModule(0, []byte(gpuPTX), "gpu.ptx")
	require.NoError(t, err)
	defer lm.Unload()
	inc, err := lm.Function("inc")
	require.NoError(t, err)
	p, err := b.Alloc(0, 4*256)
	require.NoError(t, err)
	defer b.Free(0, p)
	require.NoError(t, b.CopyHtoD(0, p, make([]byte, 4*256)))
	st, err := b.NewStream(0)
	require.NoError(t, err)
	defer st.Destroy()
	grid, block := [3]uint32{1, 1, 1}, [3]uint32{256, 1, 1}

	err = b.BeginCapture(nil)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	t.Logf("default stream: %v", err)

	// Begun on one OS thread, allocated on and ended on another (relaxed
	// mode; the global and thread-local modes answer 908 and 900 there).
	began := make(chan error)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // held to the end: this thread is not the ender's
		began <- b.BeginCapture(st)
		<-release
	}()
	require.NoError(t, <-began)
	ended := make(chan error)
	var (
		g         device.Graph
		allocated device.Ptr
	)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := st.Launch(inc, grid, block, 0, p, uint32(256)); err != nil {
			ended <- err
			return
		}
		q, err := b.Alloc(0, 1<<20) // during the capture: at once, not recorded
		if err != nil {
			ended <- err
			return
		}
		allocated = q
		if err := st.Launch(inc, grid, block, 0, p, uint32(256)); err != nil {
			ended <- err
			return
		}
		g, err = b.EndCapture(st)
		ended <- err
	}()
	require.NoError(t, <-ended, "relaxed capture: alloc during it, end on another thread")
	close(release)
	require.NoError(t, b.Free(0, allocated))
	exec, err := g.Instantiate()
	require.NoError(t, err)
	require.NoError(t, g.Destroy(), "the instance outlives its graph")
	require.NoError(t, exec.Launch(st))
	require.NoError(t, st.Synchronize())
	got := make([]byte, 4*256)
	require.NoError(t, b.CopyDtoH(0, got, p))
	assert.Equal(t, uint32(2), binary.LittleEndian.Uint32(got[4*255:]), "two captured launches per replay")

	// The replay hot path allocates nothing.
	allocs := testing.AllocsPerRun(100, func() { _ = exec.Launch(st) })
	assert.Zero(t, allocs, "GraphExec.Launch allocations")
	require.NoError(t, st.Synchronize())
	require.NoError(t, b.CopyDtoH(0, got, p))
	assert.Equal(t, uint32(2*(1+101)), binary.LittleEndian.Uint32(got), "AllocsPerRun runs the function once more than asked")

	// A synchronize during a capture: refused, and the capture is ruined.
	require.NoError(t, b.BeginCapture(st))
	require.NoError(t, st.Launch(inc, grid, block, 0, p, uint32(256)))
	err = st.Synchronize()
	t.Logf("synchronize during a capture: %v", err)
	var ce *clib.Error
	if assert.ErrorAs(t, err, &ce) {
		assert.Equal(t, 900, ce.Code, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED")
	}
	assert.ErrorIs(t, err, device.ErrNotSupported)
	ruined, err := b.EndCapture(st)
	t.Logf("end of the ruined capture: %v", err)
	assert.Nil(t, ruined)
	if assert.ErrorAs(t, err, &ce) {
		assert.Equal(t, 901, ce.Code, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED")
	}
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	require.NoError(t, b.BeginCapture(st), "the stream captures again")
	empty, err := b.EndCapture(st)
	require.NoError(t, err, "an empty capture is an empty graph")
	require.NoError(t, empty.Destroy())

	// An instance whose kernels' module is unloaded is refused.
	other, err := b.LoadModule(0, []byte(gpuPTX), "other")
	require.NoError(t, err)
	inc2, err := other.Function("inc")
	require.NoError(t, err)
	require.NoError(t, b.BeginCapture(st))
	require.NoError(t, st.Launch(inc2, grid, block, 0, p, uint32(256)))
	g2, err := b.EndCapture(st)
	require.NoError(t, err)
	exec2, err := g2.Instantiate()
	require.NoError(t, err)
	require.NoError(t, other.Unload())
	assert.ErrorIs(t, exec2.Launch(st), device.ErrReleased)
	for _, x := range []interface{ Destroy() error }{exec2, g2, exec} {
		require.NoError(t, x.Destroy())
	}
	assert.ErrorIs(t, exec.Launch(st), device.ErrReleased)
}

// BenchmarkGPUGraphReplay100 measures the graphs goal against the C floor,
// paired as BenchmarkGPUPaired is (slices of each alternating in one
// process): one iteration is 100 launches of the nop3 kernel and a
// synchronize of their stream, and
//
//   - VsCLaunches: Go replays a graph of the 100 launches (one
//     GraphExec.Launch) against C calling cuLaunchKernel 100 times: the
//     goal, go/c <= 0.5 (CUDA.jl's published 80 kernels: 260 -> 70 us);
//   - VsCReplay: the same Go replay against C's own cuGraphLaunch of the
//     same graph: what the Go backend adds to a replay;
//   - GoLaunchesVsCLaunches: Go's 100 Stream.Launch calls against C's 100
//     cuLaunchKernel calls, what a graph saves Go code from.
//
// Each reports ns/op (Go, median slice), c-ns/op (C) and go/c (the median
// of the slices' ratios). scripts/bench-ratio.sh paired runs it with
// FLAGSHIM_CFLOOR_LIB set.
func BenchmarkGPUGraphReplay100(b *testing.B) {
	be := gpuBackend(b)
	slice := cfloor(b)
	if rc, _, _ := purego.SyscallN(cf.graphOpen); int32(rc) != 0 {
		b.Fatalf("cfloor_graph_open() = %d", int32(rc))
	}

	fn, p := benchKernel(b, "nop3")
	args := nop3Args(p)
	st, err := be.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Destroy()
	exec := captureNops(b, be, st, fn, args)
	defer exec.Destroy()

	replay := func() error {
		if err := exec.Launch(st); err != nil {
			return err
		}
		return st.Synchronize()
	}
	launches := func() error {
		for range 100 {
			if err := st.Launch(fn, one, one, 0, args...); err != nil {
				return err
			}
		}
		return st.Synchronize()
	}
	for _, c := range []struct {
		name string
		op   int
		call func() error
	}{
		{"VsCLaunches", opLaunch100, replay},
		{"VsCReplay", opGraph100, replay},
		{"GoLaunchesVsCLaunches", opLaunch100, launches},
	} {
		b.Run(c.name, func(b *testing.B) {
			pairedSlices(b, 20, c.call, func(n int) float64 {
				ns, _, _ := purego.SyscallN(slice, uintptr(c.op), uintptr(n))
				return float64(ns)
			})
		})
	}
}

// captureNops captures 100 launches of fn on st and instantiates them, then
// replays once (the first launch of an instance uploads it).
func captureNops(b *testing.B, be *driver.Backend, st device.Stream, fn device.Function, args []any) device.GraphExec {
	b.Helper()
	if err := be.BeginCapture(st); err != nil {
		b.Fatal(err)
	}
	for range 100 {
		if err := st.Launch(fn, one, one, 0, args...); err != nil {
			_, _ = be.EndCapture(st)
			b.Fatal(err)
		}
	}
	g, err := be.EndCapture(st)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Destroy()
	exec, err := g.Instantiate()
	if err != nil {
		b.Fatal(err)
	}
	if err := exec.Launch(st); err != nil {
		b.Fatal(err)
	}
	if err := st.Synchronize(); err != nil {
		b.Fatal(err)
	}
	return exec
}

// pairedSlices runs slices of n Go calls and of n C iterations (cSlice
// returns the ns they took) in alternating order until the benchmark's
// time is up, and reports the median Go slice per call (ns/op), the median
// C slice per iteration (c-ns/op) and the median of the slices' ratios
// (go/c).
func pairedSlices(b *testing.B, n int, call func() error, cSlice func(n int) float64) {
	_ = rotate(b, []func() float64{
		func() float64 { return timeSlice(b, n, call, nil) },
		func() float64 { return cSlice(n) / float64(n) },
	}, []string{"c-ns/op"}, []string{"go/c"})
}
