//go:build gpu

package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/gpudrv/gpudrvtest"
)

// gpuPTX is written by hand (no nvcc needed to build or run the test): a
// global initialised to 7, add(a, b, c, n) as in
// plugins/nvshmem/testdata/add.cu, echo(out, i32, u32, i64, u64, f32, f64)
// storing each argument in an 8-byte slot of out, and no-op kernels of 3
// and 8 parameters for the launch benchmarks. The shapes match the fake's
// module (gpudrvtest.AddImage), so the same checks run on both.
const gpuPTX = `
.version 7.8
.target sm_75
.address_size 64

.visible .global .align 4 .u32 flagshim_marker = 7;

.visible .entry add(
	.param .u64 add_a,
	.param .u64 add_b,
	.param .u64 add_c,
	.param .u32 add_n
)
{
	.reg .pred %p<2>;
	.reg .f32 %f<4>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<11>;

	ld.param.u64 %rd1, [add_a];
	ld.param.u64 %rd2, [add_b];
	ld.param.u64 %rd3, [add_c];
	ld.param.u32 %r2, [add_n];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r1, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r1, %r2;
	@%p1 bra ADD_DONE;
	cvta.to.global.u64 %rd4, %rd1;
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd6, %rd4, %rd5;
	cvta.to.global.u64 %rd7, %rd2;
	add.s64 %rd8, %rd7, %rd5;
	ld.global.f32 %f1, [%rd6];
	ld.global.f32 %f2, [%rd8];
	add.f32 %f3, %f1, %f2;
	cvta.to.global.u64 %rd9, %rd3;
	add.s64 %rd10, %rd9, %rd5;
	st.global.f32 [%rd10], %f3;
ADD_DONE:
	ret;
}

.visible .entry echo(
	.param .u64 echo_out,
	.param .s32 echo_i32,
	.param .u32 echo_u32,
	.param .s64 echo_i64,
	.param .u64 echo_u64,
	.param .f32 echo_f32,
	.param .f64 echo_f64
)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<2>;
	.reg .f64 %fd<2>;

	ld.param.u64 %rd1, [echo_out];
	cvta.to.global.u64 %rd1, %rd1;
	ld.param.s32 %r1, [echo_i32];
	st.global.u32 [%rd1], %r1;
	ld.param.u32 %r2, [echo_u32];
	st.global.u32 [%rd1+8], %r2;
	ld.param.s64 %rd2, [echo_i64];
	st.global.u64 [%rd1+16], %rd2;
	ld.param.u64 %rd3, [echo_u64];
	st.global.u64 [%rd1+24], %rd3;
	ld.param.f32 %f1, [echo_f32];
	st.global.f32 [%rd1+32], %f1;
	ld.param.f64 %fd1, [echo_f64];
	st.global.f64 [%rd1+40], %fd1;
	ret;
}

.visible .entry nop3(
	.param .u64 nop3_0,
	.param .u64 nop3_1,
	.param .u32 nop3_2
)
{
	ret;
}

.visible .entry nop8(
	.param .u64 nop8_0,
	.param .u64 nop8_1,
	.param .u32 nop8_2,
	.param .u32 nop8_3,
	.param .u64 nop8_4,
	.param .u64 nop8_5,
	.param .f32 nop8_6,
	.param .f64 nop8_7
)
{
	ret;
}
`

func TestGPUModule(t *testing.T) {
	b := gpuBackend(t)
	m, err := b.LoadModule(0, []byte(gpuPTX), "gpu.ptx")
	require.NoError(t, err)
	t.Logf("module %q handle %#x on device %d; hooks %v", m.Label(), m.Handle(), m.Device(), m.Applied())

	addr, size, ok, err := m.Global("flagshim_marker")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, uint64(4), size)
	got := make([]byte, 4)
	require.NoError(t, b.CopyDtoH(0, got, DevicePtr(addr)))
	assert.Equal(t, uint32(7), binary.LittleEndian.Uint32(got), "the PTX initialiser, read through cuModuleGetGlobal_v2")
	_, _, ok, err = m.Global("nvshmemi_device_state_d")
	require.NoError(t, err, "CUDA_ERROR_NOT_FOUND is not an error")
	assert.False(t, ok)
	_, err = m.Function("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	t.Logf("missing function: %v", err)

	gpudrvtest.AddRoundTrip(t, b, m, 0, 1<<20)
	gpudrvtest.EchoArgs(t, b, m, 0, 6)

	// A bad PTX: the driver's code and the JIT's log.
	_, err = b.LoadModule(0, []byte(".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry bad() { frob.u32 %r1; }\n"), "bad.ptx")
	require.Error(t, err)
	t.Logf("bad PTX: %v", err)
	var e *Error
	if assert.ErrorAs(t, err, &e) {
		assert.Equal(t, 218, e.Code, "CUDA_ERROR_INVALID_PTX")
	}

	require.NoError(t, m.Unload())
	require.NoError(t, m.Unload())
	_, err = m.Function("add")
	assert.ErrorIs(t, err, ErrUnloaded)
}

func TestGPUModuleHooks(t *testing.T) {
	gpuBackend(t)
	hooks := device.NewHooks()
	b := New(WithHooks(hooks))
	var mu sync.Mutex
	var ev []string
	record := func(s string) { mu.Lock(); ev = append(ev, s); mu.Unlock() }
	_, err := hooks.Register(device.Hook{
		Name:  "marker",
		Scope: device.HasGlobals("flagshim_marker"),
		Init: func(m device.Module) error {
			addr, _, _, err := m.Global("flagshim_marker")
			if err != nil {
				return err
			}
			v := make([]byte, 4)
			if err := b.CopyDtoH(m.(*Module).Device(), v, DevicePtr(addr)); err != nil {
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
	assert.Equal(t, []string{"marker"}, m.Applied())
	plain, err := b.LoadModule(0, []byte(".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry k() { ret; }\n"), "plain")
	require.NoError(t, err)
	assert.Nil(t, plain.Applied())

	remove, err := hooks.Register(device.Hook{
		Name:  "partial",
		Scope: device.HasGlobals("flagshim_marker", "flagshim_absent"),
		Init:  func(device.Module) error { return errors.New("never") },
	})
	require.NoError(t, err)
	_, err = b.LoadModule(0, []byte(gpuPTX), "one-of-two")
	assert.ErrorIs(t, err, device.ErrPartialGlobals)
	t.Logf("one of two globals: %v", err)
	require.NoError(t, remove())

	gpudrvtest.AddRoundTrip(t, b, m, 0, 4096)
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

var benchModule = sync.OnceValues(func() (*Module, error) { return gpu().LoadModule(0, []byte(gpuPTX), "bench.ptx") })

func benchGPULaunch(b *testing.B, kernel string, launch func(be *Backend, fn Function, p DevicePtr) error) {
	be := gpuBackend(b)
	m, err := benchModule()
	if err != nil {
		b.Fatal(err)
	}
	fn, err := m.Function(kernel)
	if err != nil {
		b.Fatal(err)
	}
	p, err := be.Alloc(0, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(0, p)
	b.ReportAllocs()
	for b.Loop() {
		if err := launch(be, fn, p); err != nil {
			b.Fatal(err)
		}
	}
	if err := be.Synchronize(0); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGPULaunch3Args queues empty kernels; the time is the launch's
// (marshalling, context, cuLaunchKernel), the queue drained at the end.
func BenchmarkGPULaunch3Args(b *testing.B) {
	benchGPULaunch(b, "nop3", func(be *Backend, fn Function, p DevicePtr) error {
		return be.Launch(0, fn, one, one, 0, p, p+8, uint32(1000))
	})
}

func BenchmarkGPULaunch8Args(b *testing.B) {
	benchGPULaunch(b, "nop8", func(be *Backend, fn Function, p DevicePtr) error {
		return be.Launch(0, fn, one, one, 0, p, p+8, uint32(1000), uint32(7), uint64(1<<40), uint64(3), float32(0.5), float64(2.5))
	})
}
