package devicetest_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/hooks"
)

// inc is the conformance kit's inc(p, n): one thread adds 1 to each of n
// 32-bit counters.
func inc(l *devicetest.Launch) error {
	n := int(l.Args[1].(uint32))
	n = min(n, l.Threads())
	b, err := l.Bytes(l.Args[0].(device.Ptr), 4*n)
	if err != nil {
		return err
	}
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], binary.LittleEndian.Uint32(b[4*i:])+1)
	}
	return nil
}

func graphMachine(t *testing.T) (*devicetest.Backend, device.LoadedModule) {
	b := devicetest.New(devicetest.Config{Type: "acme", Devices: []devicetest.Device{{Name: "A"}, {Name: "B"}}, Hooks: hooks.NewHooks()})
	img := b.AddModule("inc", devicetest.Module{Kernels: map[string]devicetest.Kernel{"inc": inc}})
	m, err := b.LoadModule(1, img, "inc")
	require.NoError(t, err)
	return b, m
}

// TestGraphs: the pure-Go double records and replays as the drivers do,
// through the conformance kit's own check.
func TestGraphs(t *testing.T) {
	b, m := graphMachine(t)
	g, err := device.GraphsOf(b)
	require.NoError(t, err)
	drivertest.GraphReplay(t, b, m, 1, 1000, 100, 7)

	err = g.BeginCapture(nil)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "default stream cannot be captured")
	st, err := b.NewStream(1)
	require.NoError(t, err)
	_, err = g.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	fn, err := m.Function("inc")
	require.NoError(t, err)
	p, err := b.Alloc(1, 4)
	require.NoError(t, err)
	one := [3]uint32{1, 1, 1}

	// A synchronize ruins the capture; the stream works again afterwards.
	require.NoError(t, g.BeginCapture(st))
	assert.ErrorIs(t, g.BeginCapture(st), device.ErrInvalidValue)
	assert.ErrorIs(t, st.Destroy(), device.ErrInvalidValue, "a capturing stream is not destroyed")
	require.NoError(t, st.Launch(fn, one, one, 0, p, uint32(1)))
	assert.ErrorIs(t, st.Synchronize(), device.ErrNotSupported)
	_, err = g.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	// Copies and records are captured; each replay records the event again.
	hb, err := b.AllocHost(1, 4)
	require.NoError(t, err)
	ev, err := b.NewEvent(1)
	require.NoError(t, err)
	require.NoError(t, g.BeginCapture(st))
	require.NoError(t, st.Launch(fn, one, one, 0, p, uint32(1)))
	require.NoError(t, st.CopyDtoH(hb.Bytes(), p))
	require.NoError(t, st.Record(ev))
	gr, err := g.EndCapture(st)
	require.NoError(t, err)
	exec, err := gr.Instantiate()
	require.NoError(t, err)
	for i := uint32(1); i <= 3; i++ {
		require.NoError(t, exec.Launch(st))
		require.NoError(t, ev.Synchronize())
		assert.Equal(t, i, binary.LittleEndian.Uint32(hb.Bytes()))
	}
	st0, err := b.NewStream(0)
	require.NoError(t, err)
	assert.ErrorIs(t, exec.Launch(st0), device.ErrInvalidValue, "another device's stream")

	// Unloading the kernels' module retires the graph and its instances.
	require.NoError(t, m.Unload())
	assert.ErrorIs(t, exec.Launch(st), device.ErrReleased)
	_, err = gr.Instantiate()
	assert.ErrorIs(t, err, device.ErrReleased)
	require.NoError(t, exec.Destroy())
	require.NoError(t, gr.Destroy())
	require.NoError(t, st.Destroy())
	assert.ErrorIs(t, g.BeginCapture(st), device.ErrReleased)
}
