//go:build gpu

package flagshim_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
)

// The real-GPU proof of compute through `cuda` with no vendor type: what a
// program written for cuda does, on the reference H200 (where cuda is CUDA,
// not an alias). Run from the repository root (scripts/gpu-run.sh does):
// the PTX is drivers/cuda/testdata/gpu.ptx.

func gpuCUDA(t testing.TB) (device.Backend, device.Memory, device.Compute, device.Streams) {
	t.Helper()
	rep, err := flagshim.Init(context.Background())
	require.NoError(t, err)
	t.Logf("alias: %+v", rep.Alias)
	d, err := device.Parse("cuda:0")
	require.NoError(t, err)
	b, err := device.Lookup(d.Type)
	require.NoError(t, err)
	mem, err := device.MemoryOf(b)
	require.NoError(t, err)
	cmp, err := device.ComputeOf(b)
	require.NoError(t, err)
	str, err := device.StreamsOf(b)
	require.NoError(t, err)
	return b, mem, cmp, str
}

func gpuPTX(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("drivers/cuda/testdata/gpu.ptx")
	require.NoError(t, err, "run from the repository root")
	return b
}

func TestGPUStreamThroughCUDA(t *testing.T) {
	b, mem, cmp, str := gpuCUDA(t)
	m, err := cmp.LoadModule(0, gpuPTX(t), "gpu.ptx")
	require.NoError(t, err)
	defer m.Unload()
	add, err := m.Function("add")
	require.NoError(t, err)

	const n = 1 << 22
	free0, total, err := mem.MemInfo(0)
	require.NoError(t, err)
	p, err := b.Properties(0)
	require.NoError(t, err)
	assert.Equal(t, p.TotalMemory, total)

	in, err := str.AllocHost(0, 8*n)
	require.NoError(t, err)
	defer in.Free()
	out, err := str.AllocHost(0, 4*n)
	require.NoError(t, err)
	defer out.Free()
	hin, hout := in.Bytes(), out.Bytes()
	for i := range n {
		binary.LittleEndian.PutUint32(hin[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(hin[4*n+4*i:], math.Float32bits(float32(2*i)+0.5))
	}
	var d [3]device.Ptr
	for i := range d {
		d[i], err = mem.Alloc(0, 4*n)
		require.NoError(t, err)
		defer mem.Free(0, d[i])
	}
	free1, _, err := mem.MemInfo(0)
	require.NoError(t, err)
	assert.LessOrEqual(t, free1, free0-3*4*n, "MemInfo drops after the allocations")

	st, err := str.NewStream(0)
	require.NoError(t, err)
	defer st.Destroy()
	ev := make([]device.Event, 4)
	for i := range ev {
		ev[i], err = str.NewEvent(0)
		require.NoError(t, err)
		defer ev[i].Destroy()
	}
	require.NoError(t, st.Record(ev[0]))
	require.NoError(t, st.CopyHtoD(d[0], hin[:4*n]))
	require.NoError(t, st.CopyHtoD(d[1], hin[4*n:]))
	require.NoError(t, st.Record(ev[1]))
	require.NoError(t, st.Launch(add, [3]uint32{n / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, d[0], d[1], d[2], uint32(n)))
	require.NoError(t, st.Record(ev[2]))
	require.NoError(t, st.CopyDtoH(hout, d[2]))
	require.NoError(t, st.Record(ev[3]))
	require.NoError(t, ev[3].Synchronize())
	for i := 0; i < n; i += 997 {
		got := math.Float32frombits(binary.LittleEndian.Uint32(hout[4*i:]))
		if want := float32(i) + float32(2*i) + 0.5; got != want {
			t.Fatalf("c[%d] = %v, want %v", i, got, want)
		}
	}
	var times [3]time.Duration
	for i := range times {
		times[i], err = ev[i+1].Since(ev[i])
		require.NoError(t, err)
		assert.Positive(t, times[i])
	}
	t.Logf("stream of %d floats on %s: copy in %v (%.1f GB/s), kernel %v, copy out %v (%.1f GB/s)", n, p.Name,
		times[0], float64(8*n)/times[0].Seconds()/1e9, times[1], times[2], float64(4*n)/times[2].Seconds()/1e9)
	require.NoError(t, st.Synchronize())

	// Errors as a vendor-neutral program tests them.
	cnt, _ := b.DeviceCount()
	_, err = mem.Alloc(cnt, 8)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	_, err = mem.Alloc(0, 1<<50)
	assert.ErrorIs(t, err, device.ErrOutOfMemory)
	t.Logf("1 PiB: %v", err)
	_, err = m.Function("nope")
	assert.ErrorIs(t, err, device.ErrNotFound)
	_, err = cmp.LoadModule(0, []byte("not ptx"), "bad")
	assert.ErrorIs(t, err, device.ErrInvalidImage)
	t.Logf("bad image: %v", err)
	assert.ErrorIs(t, st.CopyHtoD(d[0], make([]byte, 16)), device.ErrInvalidValue, "Go memory is refused")
}

// BenchmarkGPUInterfaceLaunch launches through device.Compute, as a program
// that knows no vendor type does, with the argument list built once.
func BenchmarkGPUInterfaceLaunch(b *testing.B) {
	_, mem, cmp, _ := gpuCUDA(b)
	m, err := cmp.LoadModule(0, gpuPTX(b), "bench")
	require.NoError(b, err)
	fn, err := m.Function("nop3")
	require.NoError(b, err)
	p, err := mem.Alloc(0, 64)
	require.NoError(b, err)
	args := []any{p, p + 8, uint32(1000)}
	one := [3]uint32{1, 1, 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := cmp.Launch(0, fn, one, one, 0, args...); err != nil {
			b.Fatal(err)
		}
	}
}
