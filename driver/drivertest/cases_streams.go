package drivertest

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The cases of streams, events and pinned host memory.

// streams: a stream's copies and launch between two events, waits, and
// what a released stream, event or pinned buffer answers. A vendor without
// a module loader runs streamsWithoutModules; one without launches or
// asynchronous copies has the case check that they are not supported and
// copy synchronously instead.
func streams(t *testing.T, s *Suite, b *driver.Backend) {
	if !s.supports("modules") {
		streamsWithoutModules(t, s, b)
		return
	}
	liveStreams, liveEvents, liveHost := counter(t, "fake_live_streams"), counter(t, "fake_live_events"), counter(t, "fake_live_host")
	const n = 1000
	lm, err := b.LoadModule(1, []byte(AddImage), "add")
	require.NoError(t, err)
	defer lm.Unload()
	add, err := lm.Function("add")
	require.NoError(t, err)

	st, err := b.NewStream(1)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Device())
	start, err := b.NewEvent(1)
	require.NoError(t, err)
	stop, err := b.NewEvent(1)
	require.NoError(t, err)
	assert.Equal(t, 1, liveStreams())
	assert.Equal(t, 2, liveEvents())

	in, err := b.AllocHost(1, 2*4*n)
	require.NoError(t, err)
	out, err := b.AllocHost(1, 4*n)
	require.NoError(t, err)
	assert.Equal(t, 2, liveHost())
	hin, hout := in.Bytes(), out.Bytes()
	require.Len(t, hin, 2*4*n)
	copy(hin, Floats(n, func(i int) float32 { return float32(i) }))
	copy(hin[4*n:], Floats(n, func(i int) float32 { return float32(2*i) + 0.5 }))

	var d [3]device.Ptr
	for i := range d {
		d[i], err = b.Alloc(1, 4*n)
		require.NoError(t, err)
	}
	htod, dtoh := s.binds(driver.OpMemcpyHtoDAsync), s.binds(driver.OpMemcpyDtoHAsync)
	if !htod {
		assert.ErrorIs(t, st.CopyHtoD(d[0], hin[:4*n]), device.ErrNotSupported)
		require.NoError(t, b.CopyHtoD(1, d[0], hin[:4*n]))
		require.NoError(t, b.CopyHtoD(1, d[1], hin[4*n:]))
	}
	require.NoError(t, st.Record(start))
	if htod {
		require.NoError(t, st.CopyHtoD(d[0], hin[:4*n]))
		require.NoError(t, st.CopyHtoD(d[1], hin[4*n:]), "a sub-slice of pinned memory is pinned")
	}
	launches := s.launches()
	result := d[2] // the sum; without launches, the second input comes back
	if launches {
		require.NoError(t, st.Launch(add, [3]uint32{4, 1, 1}, [3]uint32{256, 1, 1}, 0, d[0], d[1], d[2], uint32(n)))
	} else {
		assert.ErrorIs(t, st.Launch(add, [3]uint32{4, 1, 1}, [3]uint32{256, 1, 1}, 0, d[0], d[1], d[2], uint32(n)), device.ErrNotSupported)
		result = d[1]
	}
	if dtoh {
		require.NoError(t, st.CopyDtoH(hout, result))
	} else {
		assert.ErrorIs(t, st.CopyDtoH(hout, result), device.ErrNotSupported)
	}
	require.NoError(t, st.Record(stop))
	_, err = stop.Since(start)
	assert.ErrorIs(t, err, device.ErrNotReady, "nothing has run yet: the fake runs queued work when it is waited for")
	require.NoError(t, stop.Synchronize())
	el, err := stop.Since(start)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, el, time.Duration(0))
	require.NoError(t, st.Synchronize())
	if !dtoh {
		require.NoError(t, b.CopyDtoH(1, hout, result))
	}
	if launches {
		CheckAdd(t, hout, n)
	} else {
		assert.Equal(t, hin[4*n:], hout)
	}

	// Go memory is refused for asynchronous copies.
	goMem := make([]byte, 16)
	if htod {
		assert.ErrorIs(t, st.CopyHtoD(d[0], goMem), device.ErrInvalidValue)
		assert.NoError(t, st.CopyHtoD(d[0], nil))
	}
	if dtoh {
		assert.ErrorIs(t, st.CopyDtoH(goMem, d[0]), device.ErrInvalidValue)
		assert.ErrorContains(t, st.CopyDtoH(goMem, d[0]), "AllocHost")
	}

	// Wait: work on another stream after an event of the first.
	st2, err := b.NewStream(1)
	require.NoError(t, err)
	require.NoError(t, st.Record(stop))
	require.NoError(t, st2.Wait(stop))
	require.NoError(t, st2.Synchronize())
	require.NoError(t, st2.Destroy())

	// A function of another device's module, an event of another backend.
	lm0, err := b.LoadModule(0, []byte(AddImage), "add0")
	require.NoError(t, err)
	add0, err := lm0.Function("add")
	require.NoError(t, err)
	wrongDevice := device.ErrInvalidValue
	if !launches {
		wrongDevice = device.ErrNotSupported
	}
	assert.ErrorIs(t, st.Launch(add0, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, d[0], d[1], d[2], uint32(1)), wrongDevice)
	require.NoError(t, lm0.Unload())
	assert.ErrorIs(t, st.Record(nil), device.ErrInvalidValue)

	for _, p := range d {
		require.NoError(t, b.Free(1, p))
	}
	require.NoError(t, in.Free())
	require.NoError(t, in.Free(), "a second Free does nothing")
	assert.Nil(t, in.Bytes())
	require.NoError(t, out.Free())
	require.NoError(t, start.Destroy())
	require.NoError(t, stop.Destroy())
	require.NoError(t, stop.Destroy())
	require.NoError(t, st.Destroy())
	require.NoError(t, st.Destroy())
	assert.ErrorIs(t, st.Synchronize(), device.ErrReleased)
	assert.ErrorIs(t, st.Launch(add, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0), device.ErrReleased)
	assert.ErrorIs(t, stop.Synchronize(), device.ErrReleased)
	_, err = stop.Since(start)
	assert.ErrorIs(t, err, device.ErrReleased)
	assert.Zero(t, liveStreams())
	assert.Zero(t, liveEvents())
	assert.Zero(t, liveHost())
	_, err = b.AllocHost(0, 0)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	_, err = b.NewStream(9)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
}

func noStreams(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, b.Available().Available)
	_, err := b.NewStream(0)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, s.sym(driver.OpStreamCreate))
	_, err = b.NewEvent(0)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	_, err = b.AllocHost(0, 8)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	// The rest still works.
	if s.supports("modules", "device memory") {
		lm, err := b.LoadModule(0, []byte(AddImage), "x")
		require.NoError(t, err)
		s.roundTrip(t, b, lm, 0, 10)
		require.NoError(t, lm.Unload())
	} else if s.supports("device memory") {
		p, err := b.Alloc(0, 4)
		require.NoError(t, err)
		require.NoError(t, b.CopyHtoD(0, p, []byte{1, 2, 3, 4}))
		got := make([]byte, 4)
		require.NoError(t, b.CopyDtoH(0, got, p))
		assert.Equal(t, []byte{1, 2, 3, 4}, got)
		require.NoError(t, b.Free(0, p))
	} else {
		require.NoError(t, b.Synchronize(0))
	}
	assert.Contains(t, b.Describe().Extra, "missing.streams")
}

// streamsWithoutModules is the streams case of a vendor that loads no
// modules: streams, events and pinned memory around synchronous copies,
// each part where the vendor binds it.
func streamsWithoutModules(t *testing.T, s *Suite, b *driver.Backend) {
	liveStreams := counter(t, "fake_live_streams")
	st, err := b.NewStream(1)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Device())
	assert.Equal(t, 1, liveStreams())

	if s.binds(driver.OpEventCreate, driver.OpEventRecord, driver.OpEventSynchronize, driver.OpEventDestroy) {
		liveEvents := counter(t, "fake_live_events")
		start, err := b.NewEvent(1)
		require.NoError(t, err)
		stop, err := b.NewEvent(1)
		require.NoError(t, err)
		assert.Equal(t, 2, liveEvents())
		require.NoError(t, st.Record(start))
		require.NoError(t, st.Record(stop))
		require.NoError(t, stop.Synchronize())
		el, err := stop.Since(start)
		if s.binds(driver.OpEventElapsedTime) {
			require.NoError(t, err)
			assert.GreaterOrEqual(t, el, time.Duration(0))
		} else {
			assert.ErrorIs(t, err, device.ErrNotSupported, "the vendor binds no event timing")
			assert.Contains(t, b.Describe().Extra, "missing.event timing")
		}
		if s.binds(driver.OpStreamWaitEvent) {
			st2, err := b.NewStream(1)
			require.NoError(t, err)
			require.NoError(t, st.Record(stop))
			require.NoError(t, st2.Wait(stop))
			require.NoError(t, st2.Synchronize())
			require.NoError(t, st2.Destroy())
		}
		assert.ErrorIs(t, st.Record(nil), device.ErrInvalidValue)
		require.NoError(t, start.Destroy())
		require.NoError(t, stop.Destroy())
		require.NoError(t, stop.Destroy())
		assert.ErrorIs(t, stop.Synchronize(), device.ErrReleased)
		assert.Zero(t, liveEvents())
	}

	if s.binds(driver.OpMemHostAlloc, driver.OpMemFreeHost) {
		liveHost := counter(t, "fake_live_host")
		in, err := b.AllocHost(1, 64)
		require.NoError(t, err)
		assert.Equal(t, 1, liveHost())
		hin := in.Bytes()
		require.Len(t, hin, 64)
		for i := range hin {
			hin[i] = byte(i)
		}
		d, err := b.Alloc(1, 64)
		require.NoError(t, err)
		if s.binds(driver.OpMemcpyHtoDAsync) {
			require.NoError(t, st.CopyHtoD(d, hin))
			require.NoError(t, st.Synchronize())
		} else {
			assert.ErrorIs(t, st.CopyHtoD(d, hin), device.ErrNotSupported)
			require.NoError(t, b.CopyHtoD(1, d, hin), "pinned memory is host memory for the synchronous copies")
		}
		got := make([]byte, 64)
		require.NoError(t, b.CopyDtoH(1, got, d))
		assert.Equal(t, hin, got)
		require.NoError(t, b.Free(1, d))
		require.NoError(t, in.Free())
		require.NoError(t, in.Free(), "a second Free does nothing")
		assert.Nil(t, in.Bytes())
		assert.Zero(t, liveHost())
		_, err = b.AllocHost(0, 0)
		assert.ErrorIs(t, err, device.ErrInvalidValue)
	}

	require.NoError(t, st.Synchronize())
	require.NoError(t, st.Destroy())
	require.NoError(t, st.Destroy())
	assert.ErrorIs(t, st.Synchronize(), device.ErrReleased)
	assert.Zero(t, liveStreams())
	_, err = b.NewStream(9)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
}

// streamWait: a wait orders work, judged by its effect. Work is queued on
// stream a (a copy of a pattern into x, or a kernel adding 1 to each
// counter of x, whichever the vendor has), an event is recorded after it,
// stream w waits for the event and queues work that reads x (a copy of x
// to the host, or the kernel again); only w is synchronized. w's work must
// see a's result, and the event must have completed. The fake runs a
// stream's work only when something waits for it: a wait that does
// nothing leaves a's work queued, and w reads what x held before.
func streamWait(t *testing.T, s *Suite, b *driver.Backend) {
	const dev, n = 1, 256
	a, err := b.NewStream(dev)
	require.NoError(t, err)
	defer a.Destroy()
	w, err := b.NewStream(dev)
	require.NoError(t, err)
	defer w.Destroy()
	ev, err := b.NewEvent(dev)
	require.NoError(t, err)
	defer ev.Destroy()
	if !s.binds(driver.OpStreamWaitEvent) {
		assert.ErrorIs(t, w.Wait(ev), device.ErrNotSupported, "the vendor binds no stream wait")
		return
	}
	pending := counter(t, "fake_pending_events")
	x, err := b.Alloc(dev, 4*n)
	require.NoError(t, err)
	defer b.Free(dev, x)
	require.NoError(t, b.CopyHtoD(dev, x, make([]byte, 4*n)))

	pinned := s.supports("pinned host memory")
	var inc device.Function
	if s.launches() {
		m, err := b.LoadModule(dev, []byte(AddImage), "wait")
		require.NoError(t, err)
		defer m.Unload()
		inc, err = m.Function("inc")
		require.NoError(t, err)
	}
	launchInc := func(st device.Stream) error {
		return st.Launch(inc, [3]uint32{1, 1, 1}, [3]uint32{n, 1, 1}, 0, x, uint32(n))
	}

	// a's work: x = 7, 8, 9, ... or x = 1, 1, 1, ...
	var want func(i int) uint32
	switch {
	case pinned && s.binds(driver.OpMemcpyHtoDAsync):
		in, err := b.AllocHost(dev, 4*n)
		require.NoError(t, err)
		defer in.Free()
		putCounters(in.Bytes(), func(i int) uint32 { return uint32(i + 7) })
		require.NoError(t, a.CopyHtoD(x, in.Bytes()))
		want = func(i int) uint32 { return uint32(i + 7) }
	case inc != nil:
		require.NoError(t, launchInc(a))
		want = func(int) uint32 { return 1 }
	}
	require.NoError(t, a.Record(ev))
	assert.Equal(t, 1, pending(), "the event is behind a's queued work")
	require.NoError(t, w.Wait(ev))

	// w's work reads x: a copy to the host, or the kernel again.
	var out device.HostBuffer
	switch {
	case want == nil:
	case pinned && s.binds(driver.OpMemcpyDtoHAsync):
		out, err = b.AllocHost(dev, 4*n)
		require.NoError(t, err)
		defer out.Free()
		require.NoError(t, w.CopyDtoH(out.Bytes(), x))
	case inc != nil:
		require.NoError(t, launchInc(w))
		prev := want
		want = func(i int) uint32 { return prev(i) + 1 }
	default:
		want = nil // nothing on w can read x: the event alone tells
	}
	require.NoError(t, w.Synchronize())
	assert.Zero(t, pending(), "w waited for the event: a's work before it has run")
	if want == nil {
		return
	}
	got := make([]byte, 4*n)
	if out != nil {
		copy(got, out.Bytes())
	} else {
		require.NoError(t, b.CopyDtoH(dev, got, x))
	}
	for i := range n {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != want(i) {
			t.Fatalf("after w waited for a's event, w's work saw x[%d] = %d, want %d: the wait did not order a's work before w's", i, v, want(i))
		}
	}
}

// putCounters writes f(i) into each 32-bit counter of b, little-endian.
func putCounters(b []byte, f func(i int) uint32) {
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], f(i/4))
	}
}
