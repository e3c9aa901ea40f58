package devicetest_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/hooks"
)

// addOne is a kernel: out[i] = in[i] + 1 for uint32s, i < n.
func addOne(l *devicetest.Launch) error {
	in, out, n := l.Args[0].(device.Ptr), l.Args[1].(device.Ptr), int(l.Args[2].(uint32))
	src, err := l.Bytes(in, 4*n)
	if err != nil {
		return err
	}
	dst, err := l.Bytes(out, 4*n)
	if err != nil {
		return err
	}
	for i := range n {
		binary.LittleEndian.PutUint32(dst[4*i:], binary.LittleEndian.Uint32(src[4*i:])+1)
	}
	return nil
}

func newFake(hs *hooks.Hooks) (*devicetest.Backend, []byte) {
	b := devicetest.New(devicetest.Config{Type: "acme", Devices: []devicetest.Device{{Name: "A", Memory: 1 << 20}, {Name: "B"}}, Hooks: hs})
	img := b.AddModule("m", devicetest.Module{
		Kernels: map[string]devicetest.Kernel{"add1": addOne, "fail": func(*devicetest.Launch) error { return errors.New("trap") }},
		Globals: map[string]uint64{"g": 8},
	})
	return b, img
}

func TestBackend(t *testing.T) {
	b, _ := newFake(hooks.NewHooks())
	r := b.Available()
	assert.True(t, r.Available)
	assert.Equal(t, 2, r.Devices)
	p, err := b.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, "B", p.Name)
	assert.Equal(t, uint64(16<<30), p.TotalMemory)
	require.NoError(t, b.SetCurrent(1))
	p, err = b.Properties(-1)
	require.NoError(t, err)
	assert.Equal(t, "B", p.Name)
	for _, bad := range []int{-2, 2} {
		assert.ErrorIs(t, b.SetCurrent(bad), device.ErrInvalidIndex)
		_, err := b.Alloc(bad, 1)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}

	u := devicetest.New(devicetest.Config{Unavailable: "no acme card"})
	assert.False(t, u.Available().Available)
	_, err = u.DeviceCount()
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	assert.ErrorContains(t, u.Synchronize(0), "no acme card")
}

func TestMemoryAndKernels(t *testing.T) {
	hs := hooks.NewHooks()
	var inits []string
	_, err := hs.Register(hooks.Hook{Name: "g", Scope: hooks.HasGlobals("g"), Init: func(m device.Module) error {
		inits = append(inits, m.Label())
		return nil
	}})
	require.NoError(t, err)
	b, img := newFake(hs)

	free0, total, err := b.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<20), total)
	m, err := b.LoadModule(0, img, "mine")
	require.NoError(t, err)
	assert.Equal(t, []string{"mine"}, inits, "hooks run on the fake's modules")
	_, size, ok, err := m.Global("g")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, uint64(8), size)
	_, _, ok, _ = m.Global("nope")
	assert.False(t, ok)

	const n = 64
	in, err := b.Alloc(0, 4*n)
	require.NoError(t, err)
	out, err := b.Alloc(0, 4*n)
	require.NoError(t, err)
	free1, _, _ := b.MemInfo(0)
	assert.Equal(t, free0-8-8*n, free1, "allocations are counted, the module global included")
	src := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(src[4*i:], uint32(i))
	}
	require.NoError(t, b.CopyHtoD(0, in, src))
	fn, err := m.Function("add1")
	require.NoError(t, err)
	require.NoError(t, b.Launch(0, fn, [3]uint32{1, 1, 1}, [3]uint32{n, 1, 1}, 0, in, out, uint32(n)))
	got := make([]byte, 4*n)
	require.NoError(t, b.CopyDtoH(0, got, out))
	for i := range n {
		assert.Equal(t, uint32(i+1), binary.LittleEndian.Uint32(got[4*i:]))
	}

	_, err = m.Function("nope")
	assert.ErrorIs(t, err, device.ErrNotFound)
	boom, _ := m.Function("fail")
	assert.ErrorIs(t, b.Launch(0, boom, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0), device.ErrLaunchFailed)
	assert.ErrorIs(t, b.Launch(1, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, in, out, uint32(1)), device.ErrInvalidValue, "another device")
	assert.ErrorIs(t, b.Launch(0, fn, [3]uint32{0, 1, 1}, [3]uint32{1, 1, 1}, 0), device.ErrInvalidValue)
	assert.ErrorIs(t, b.Launch(0, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 7), device.ErrInvalidValue, "a Go int")
	assert.ErrorIs(t, b.Launch(0, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, in, out, uint32(1<<20)), device.ErrLaunchFailed, "out of bounds")
	_, err = b.Alloc(0, 1<<21)
	assert.ErrorIs(t, err, device.ErrOutOfMemory)
	assert.ErrorIs(t, b.CopyHtoD(0, out+4*n, []byte{1}), device.ErrInvalidValue)
	_, err = b.LoadModule(0, []byte("ptx"), "x")
	assert.ErrorIs(t, err, device.ErrInvalidImage)

	require.NoError(t, m.Unload())
	require.NoError(t, m.Unload())
	_, err = m.Function("add1")
	assert.ErrorIs(t, err, device.ErrReleased)
	assert.ErrorIs(t, b.Launch(0, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0), device.ErrReleased)
	require.NoError(t, b.Free(0, in))
	require.NoError(t, b.Free(0, out))
	assert.ErrorIs(t, b.Free(0, out), device.ErrInvalidValue)
	free2, _, _ := b.MemInfo(0)
	assert.Equal(t, free0, free2)
}

func TestStreams(t *testing.T) {
	b, img := newFake(hooks.NewHooks())
	m, err := b.LoadModule(1, img, "")
	require.NoError(t, err)
	fn, _ := m.Function("add1")
	st, err := b.NewStream(1)
	require.NoError(t, err)
	start, _ := b.NewEvent(1)
	stop, _ := b.NewEvent(1)
	hb, err := b.AllocHost(1, 8)
	require.NoError(t, err)
	buf := hb.Bytes()
	binary.LittleEndian.PutUint32(buf, 41)
	in, _ := b.Alloc(1, 4)
	out, _ := b.Alloc(1, 4)
	require.NoError(t, st.Record(start))
	require.NoError(t, st.CopyHtoD(in, buf[:4]))
	require.NoError(t, st.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, in, out, uint32(1)))
	require.NoError(t, st.CopyDtoH(buf[4:], out))
	require.NoError(t, st.Record(stop))
	assert.Zero(t, binary.LittleEndian.Uint32(buf[4:]), "nothing runs before a synchronize")
	_, err = stop.Since(start)
	assert.ErrorIs(t, err, device.ErrNotReady)
	require.NoError(t, stop.Synchronize())
	assert.Equal(t, uint32(42), binary.LittleEndian.Uint32(buf[4:]))
	d, err := stop.Since(start)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, d, time.Duration(0))
	assert.ErrorIs(t, st.CopyHtoD(in, make([]byte, 4)), device.ErrInvalidValue, "Go memory is not pinned")
	require.NoError(t, hb.Free())
	assert.ErrorIs(t, st.CopyHtoD(in, buf[:4]), device.ErrInvalidValue, "a freed buffer is not pinned")
	require.NoError(t, st.Destroy())
	assert.ErrorIs(t, st.Synchronize(), device.ErrReleased)
}

func TestConcurrentUse(t *testing.T) {
	b, img := newFake(hooks.NewHooks())
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := g % 2
			m, err := b.LoadModule(dev, img, fmt.Sprint("g", g))
			if !assert.NoError(t, err) {
				return
			}
			fn, _ := m.Function("add1")
			p, err := b.Alloc(dev, 8)
			assert.NoError(t, err)
			st, _ := b.NewStream(dev)
			for range 50 {
				assert.NoError(t, st.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, p, p+4, uint32(1)))
			}
			assert.NoError(t, b.Synchronize(dev))
			assert.NoError(t, st.Destroy())
			assert.NoError(t, b.Free(dev, p))
			assert.NoError(t, m.Unload())
		}()
	}
	wg.Wait()
}
