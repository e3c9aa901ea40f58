//go:build gpu

package cuda

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/hooks"
)

// gpuPTX (testdata/gpu.ptx, also read by the root package's GPU test and
// scripts/cfloor.c) is written by hand (no nvcc needed to build or run the test): a
// global initialised to 7, add(a, b, c, n) as in
// plugins/nvshmem/testdata/add.cu, inc(p, n) adding 1 to each of n 32-bit
// counters (the graph tests), echo(out, i32, u32, i64, u64, f32, f64)
// storing each argument in an 8-byte slot of out, and no-op kernels of 3
// and 8 parameters for the launch benchmarks. The shapes match the fake's
// module (drivertest.AddImage), so the same checks run on both.
//
//go:embed testdata/gpu.ptx
var gpuPTX string

func TestGPUModule(t *testing.T) {
	b := gpuBackend(t)
	lm, err := b.LoadModule(0, []byte(gpuPTX), "gpu.ptx")
	require.NoError(t, err)
	m := lm.(*driver.Module)
	t.Logf("module %q handle %#x on device %d; hooks %v", m.Label(), m.Handle(), m.Device(), m.Applied())

	addr, size, ok, err := m.Global("flagshim_marker")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, uint64(4), size)
	got := make([]byte, 4)
	require.NoError(t, b.CopyDtoH(0, got, device.Ptr(addr)))
	assert.Equal(t, uint32(7), binary.LittleEndian.Uint32(got), "the PTX initialiser, read through cuModuleGetGlobal_v2")
	_, _, ok, err = m.Global("nvshmemi_device_state_d")
	require.NoError(t, err, "CUDA_ERROR_NOT_FOUND is not an error")
	assert.False(t, ok)
	_, err = m.Function("nope")
	assert.ErrorIs(t, err, device.ErrNotFound)
	t.Logf("missing function: %v", err)

	drivertest.AddRoundTrip(t, b, m, 0, 1<<20)
	drivertest.EchoArgs(t, b, m, 0, 6)

	// A bad PTX: the driver's code and the JIT's log.
	_, err = b.LoadModule(0, []byte(".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry bad() { frob.u32 %r1; }\n"), "bad.ptx")
	require.Error(t, err)
	t.Logf("bad PTX: %v", err)
	var e *clib.Error
	if assert.ErrorAs(t, err, &e) {
		assert.Equal(t, 218, e.Code, "CUDA_ERROR_INVALID_PTX")
	}

	require.NoError(t, m.Unload())
	require.NoError(t, m.Unload())
	_, err = m.Function("add")
	assert.ErrorIs(t, err, device.ErrReleased)
}

func TestGPUModuleHooks(t *testing.T) {
	gpuBackend(t)
	hs := hooks.NewHooks()
	b := New(driver.WithHooks(hs))
	var mu sync.Mutex
	var ev []string
	record := func(s string) { mu.Lock(); ev = append(ev, s); mu.Unlock() }
	_, err := hs.Register(hooks.Hook{
		Name:  "marker",
		Scope: hooks.HasGlobals("flagshim_marker"),
		Init: func(m device.Module) error {
			addr, _, _, err := m.Global("flagshim_marker")
			if err != nil {
				return err
			}
			v := make([]byte, 4)
			if err := b.CopyDtoH(m.(*driver.Module).Device(), v, device.Ptr(addr)); err != nil {
				return err
			}
			record(fmt.Sprint("init ", m.Label(), " marker=", binary.LittleEndian.Uint32(v)))
			return nil
		},
		Finalize: func(m device.Module) error { record("fini " + m.Label()); return nil },
	})
	require.NoError(t, err)
	m, err := b.LoadModule(0, []byte(gpuPTX), "with-marker")
	require.NoError(t, err)
	assert.Equal(t, []string{"marker"}, hs.Applied(m))
	plain, err := b.LoadModule(0, []byte(".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry k() { ret; }\n"), "plain")
	require.NoError(t, err)
	assert.Nil(t, hs.Applied(plain))

	remove, err := hs.Register(hooks.Hook{
		Name:  "partial",
		Scope: hooks.HasGlobals("flagshim_marker", "flagshim_absent"),
		Init:  func(device.Module) error { return errors.New("never") },
	})
	require.NoError(t, err)
	_, err = b.LoadModule(0, []byte(gpuPTX), "one-of-two")
	assert.ErrorIs(t, err, hooks.ErrPartialGlobals)
	t.Logf("one of two globals: %v", err)
	require.NoError(t, remove())

	drivertest.AddRoundTrip(t, b, m, 0, 4096)
	require.NoError(t, m.Unload())
	require.NoError(t, plain.Unload())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"init with-marker marker=7", "init one-of-two marker=7", "fini one-of-two", "fini with-marker"}, ev)
}

func TestGPUModuleParallel(t *testing.T) {
	b := gpuBackend(t)
	const goroutines, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				m, err := b.LoadModule(0, []byte(gpuPTX), fmt.Sprintf("g%d-r%d", g, r))
				if err == nil {
					_, err = m.Function("add")
				}
				if err == nil {
					_, _, _, err = m.Global("flagshim_marker")
				}
				if err == nil {
					err = m.Unload()
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var benchModule = sync.OnceValues(func() (device.LoadedModule, error) {
	image := []byte(gpuPTX)
	if p := gpuImagePath(); p != "testdata/gpu.ptx" { // the benchmarks' plumbing on the fake libcuda
		var err error
		if image, err = os.ReadFile(p); err != nil {
			return nil, err
		}
	}
	return gpu().LoadModule(0, image, "bench.ptx")
})

// benchKernel is gpu.ptx's function name, loaded once, and a 64-byte
// buffer for its pointer arguments, freed when b ends.
func benchKernel(b *testing.B, name string) (device.Function, device.Ptr) {
	be := gpuBackend(b)
	m, err := benchModule()
	if err != nil {
		b.Fatal(err)
	}
	fn, err := m.Function(name)
	if err != nil {
		b.Fatal(err)
	}
	p, err := be.Alloc(0, 64)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Free(0, p) })
	return fn, p
}

// nop3Args and nop8Args are the arguments of gpu.ptx's nop3 and nop8 for a
// buffer p: what scripts/cfloor.c passes too.
func nop3Args(p device.Ptr) []any { return []any{p, p + 8, uint32(1000)} }

func nop8Args(p device.Ptr) []any {
	return []any{p, p + 8, uint32(1000), uint32(7), uint64(1 << 40), uint64(3), float32(0.5), float64(2.5)}
}

func benchGPULaunch(b *testing.B, kernel string, args func(p device.Ptr) []any) {
	be := gpuBackend(b)
	fn, p := benchKernel(b, kernel)
	a := args(p) // built once: a launch then allocates nothing
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Launch(0, fn, one, one, 0, a...); err != nil {
			b.Fatal(err)
		}
	}
	if err := be.Synchronize(0); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGPULaunch3Args queues empty kernels; the time is the launch's
// (marshalling, context, cuLaunchKernel), the queue drained at the end.
func BenchmarkGPULaunch3Args(b *testing.B) { benchGPULaunch(b, "nop3", nop3Args) }

func BenchmarkGPULaunch8Args(b *testing.B) { benchGPULaunch(b, "nop8", nop8Args) }

var one = [3]uint32{1, 1, 1}
