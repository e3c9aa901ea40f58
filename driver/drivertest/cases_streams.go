package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The cases of streams, events and pinned host memory.

func init() {
	cases = append(cases,
		fakeCase{name: "streams", setup: withOverride(nil), check: streams},
		fakeCase{name: "streams_not_supported", setup: withOverride([]string{"-DFAKE_NO_STREAMS"}), check: noStreams},
	)
}

// streams: a stream's copies and launch between two events, waits, and
// what a released stream, event or pinned buffer answers. A vendor without
// a module loader runs streamsWithoutModules; one without launches or
// asynchronous copies has the case check that they are not supported and
// copy synchronously instead.
func streams(t *testing.T, s *Suite, b *driver.Backend) {
	if lacksModules(s) != "" {
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
	if lacksModules(s) == "" {
		lm, err := b.LoadModule(0, []byte(AddImage), "x")
		require.NoError(t, err)
		s.roundTrip(t, b, lm, 0, 10)
		require.NoError(t, lm.Unload())
	} else {
		p, err := b.Alloc(0, 4)
		require.NoError(t, err)
		require.NoError(t, b.CopyHtoD(0, p, []byte{1, 2, 3, 4}))
		got := make([]byte, 4)
		require.NoError(t, b.CopyDtoH(0, got, p))
		assert.Equal(t, []byte{1, 2, 3, 4}, got)
		require.NoError(t, b.Free(0, p))
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
