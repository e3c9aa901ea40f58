package drivertest

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The stream cases of the second group (rows of the kit's table, cases.go).

// streamOps: queries, a value wait that holds its stream until another
// stream writes the value, memsets, copies, stream-ordered memory and a host
// function on a stream, and a stream of another owner.
func streamOps(t *testing.T, s *Suite, b *driver.Backend) {
	st, err := b.NewStreamWith(1, true)
	require.NoError(t, err)
	defer st.Destroy()
	other, err := b.NewStreamWith(1, false)
	require.NoError(t, err)
	defer other.Destroy()
	ev, err := b.NewEventWith(1, false)
	require.NoError(t, err)
	defer ev.Destroy()
	p, err := b.Alloc(1, 64)
	require.NoError(t, err)
	defer b.Free(1, p)
	flag, err := b.Alloc(1, 8)
	require.NoError(t, err)
	defer b.Free(1, flag)

	if !s.claims("stream query") {
		unsupported(t, st.Query(), "stream query")
	} else {
		assert.NoError(t, st.Query(), "an idle stream is done")
	}
	if !s.claims("event query") {
		unsupported(t, ev.Query(), "event query")
	} else {
		assert.NoError(t, ev.Query(), "an event never recorded is done")
	}

	waits := s.claims("64-bit value wait/write")
	if !waits {
		unsupported(t, st.WaitValue64(flag, 1), "value wait")
		unsupported(t, other.WriteValue64(flag, 1), "value write")
	} else {
		// A wait orders: the memset after it does not run until another
		// stream writes the flag.
		require.NoError(t, b.Memset(1, p, 0, 1, 64))
		require.NoError(t, st.WaitValue64(flag, 1))
		if s.claims("memset on a stream") {
			require.NoError(t, st.Memset(p, 0x5a, 1, 64))
		}
		require.NoError(t, st.Record(ev))
		if s.claims("stream query") {
			assert.ErrorIs(t, st.Query(), device.ErrNotReady, "held by the wait")
			assert.True(t, driver.IsPending(st.Query()))
		}
		if s.claims("event query") {
			assert.ErrorIs(t, ev.Query(), device.ErrNotReady, "recorded after the held work")
		}
		assert.Equal(t, make([]byte, 64), read(t, b, p, 64), "the memset waits for the flag")
		require.NoError(t, other.WriteValue64(flag, 1))
		require.NoError(t, other.Synchronize())
		require.NoError(t, st.Synchronize(), "the flag is written: the stream runs")
		if s.claims("stream query") {
			assert.NoError(t, st.Query())
		}
		if s.claims("event query") {
			assert.NoError(t, ev.Query())
		}
		if s.claims("memset on a stream") {
			assert.Equal(t, strings.Repeat("\x5a", 64), string(read(t, b, p, 64)))
		}
		assert.ErrorIs(t, st.WaitValue64(flag+4, 1), device.ErrInvalidValue, "an unaligned word")
	}

	if s.claims("memset on a stream") {
		require.NoError(t, st.Memset(p, 0x0102, 2, 32))
		require.NoError(t, st.Synchronize())
		assert.Equal(t, strings.Repeat("\x02\x01", 32), string(read(t, b, p, 64)))
		assert.ErrorIs(t, st.Memset(p, 1, 8, 1), device.ErrInvalidValue)
	} else {
		unsupported(t, st.Memset(p, 0, 1, 1), "memset on a stream")
	}

	if s.claims("device-to-device copy on a stream") {
		require.NoError(t, b.CopyHtoD(1, p, []byte("stream-ordered copies of device memory")))
		require.NoError(t, st.CopyDtoD(p+40, p, 15))
		require.NoError(t, st.Synchronize())
		assert.Equal(t, "stream-ordered ", string(read(t, b, p+40, 15)))
	} else {
		unsupported(t, st.CopyDtoD(p, p, 1), "device-to-device copy on a stream")
	}

	allocs := counter(t, "fake_live_allocs")
	if s.claims("stream-ordered alloc/free") {
		before := allocs()
		a, err := st.Alloc(128)
		require.NoError(t, err)
		assert.Equal(t, before+1, allocs())
		require.NoError(t, b.CopyHtoD(1, a, []byte("ordered")))
		require.NoError(t, st.Free(a))
		require.NoError(t, st.Synchronize())
		assert.Equal(t, before, allocs(), "freed in stream order")
	} else {
		_, err := st.Alloc(8)
		unsupported(t, err, "stream-ordered alloc")
	}

	if s.claims("host function on a stream") {
		var seen atomic.Value
		if s.supports("pinned host memory", "asynchronous copies") {
			hb, err := b.AllocHost(1, 8)
			require.NoError(t, err)
			defer hb.Free()
			require.NoError(t, b.CopyHtoD(1, p, []byte("ABCDEFGH")))
			require.NoError(t, st.CopyDtoH(hb.Bytes(), p))
			require.NoError(t, st.LaunchHostFunc(func() { seen.Store(string(hb.Bytes())) }))
		} else {
			// No copy to host on a stream: the function sees that it ran.
			require.NoError(t, st.LaunchHostFunc(func() { seen.Store("ABCDEFGH") }))
		}
		assert.Nil(t, seen.Load(), "queued, not run")
		require.NoError(t, st.Synchronize())
		assert.Equal(t, "ABCDEFGH", seen.Load(), "it ran after the work before it")
		assert.Zero(t, clib.PendingHostFuncs(), "each func is forgotten once called")
		assert.Equal(t, 1, counter(t, "fake_host_funcs_run")())
		assert.ErrorIs(t, st.LaunchHostFunc(nil), device.ErrInvalidValue)
	} else {
		unsupported(t, st.LaunchHostFunc(func() {}), "host function")
		assert.Zero(t, clib.PendingHostFuncs(), "a refused func is not kept")
	}

	require.NoError(t, st.Destroy())
	assert.ErrorIs(t, st.Query(), device.ErrReleased)
	assert.ErrorIs(t, st.Memset(p, 0, 1, 1), device.ErrReleased)

	// A foreign stream: the owner's handle, left alive by Destroy.
	streams := counter(t, "fake_live_streams")
	n := streams()
	f, err := b.ForeignStream(1, other.Handle())
	require.NoError(t, err)
	assert.True(t, f.Foreign())
	if s.claims("memset on a stream") {
		require.NoError(t, f.Memset(p, 7, 1, 4))
		require.NoError(t, f.Synchronize())
		assert.Equal(t, "\x07\x07\x07\x07", string(read(t, b, p, 4)))
	}
	require.NoError(t, f.Destroy())
	assert.Equal(t, n, streams(), "the owner's stream is not destroyed")
	require.NoError(t, other.Synchronize())
}

// streamOpsBusy: with FAKE_QUERY_BUSY=3 the first three queries of a
// stream with work answer "not ready" and run nothing; polling then ends.
func streamOpsBusy(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, s.claims("stream query") && s.claims("memset on a stream"), "the case's row needs both")
	st, err := b.NewStreamWith(0, false)
	require.NoError(t, err)
	defer st.Destroy()
	p, err := b.Alloc(0, 16)
	require.NoError(t, err)
	defer b.Free(0, p)
	require.NoError(t, st.Memset(p, 9, 1, 16))
	polls := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := st.Query()
		if err == nil {
			break
		}
		require.ErrorIs(t, err, device.ErrNotReady)
		polls++
		require.True(t, time.Now().Before(deadline), "still not ready after %d polls", polls)
	}
	assert.Equal(t, 3, polls)
	got := make([]byte, 16)
	require.NoError(t, b.CopyDtoH(0, got, p))
	assert.Equal(t, strings.Repeat("\x09", 16), string(got))
	if !raceEnabled { // the race detector's instrumentation allocates
		allocs := testing.AllocsPerRun(20, func() { _ = st.Query() })
		assert.Zero(t, allocs, "a query allocates nothing")
	}
}
