package cuda

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// A stream's synchronize and records and an event's synchronize are calls
// prepared when the stream or event is made (clib.Prepared): they must
// still reach the right handles, and a failure must still name the call
// and the device (here cuStreamSynchronize on a capturing stream, which the
// fake refuses with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900), as the
// general path says it. In a child process against the fake libcuda.
func TestPreparedStreamCalls(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libcuda")
	}
	lib := suite.BuildIn(t, dltest.PrivateDir(t))
	out := dltest.MustChild(t, "TestPreparedStreamCallsChild", EnvVar+"="+lib)
	if testing.Verbose() {
		t.Log(out)
	}
}

func TestPreparedStreamCallsChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestPreparedStreamCalls")
	}
	b := New()
	require.True(t, b.Available().Available, b.Available().Reason)
	for _, dev := range []int{1, 0} { // device 1 first: its context is not the thread's
		st, err := b.NewStream(dev)
		require.NoError(t, err)
		ev, err := b.NewEvent(dev)
		require.NoError(t, err)
		require.NoError(t, st.Record(ev))
		require.NoError(t, ev.Synchronize())
		require.NoError(t, st.Synchronize())
		require.NoError(t, ev.(device.EventQuerier).Query(), "the record reached the event and the stream")

		require.NoError(t, b.BeginCapture(st))
		err = st.Synchronize()
		var ce *clib.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "cuStreamSynchronize", ce.Func, "the error names the call that failed")
		assert.Contains(t, err.Error(), fmt.Sprintf("cuStreamSynchronize(device %d) returned", dev)+" CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900)")
		_, _ = b.EndCapture(st)
		require.NoError(t, ev.Destroy())
		require.NoError(t, st.Destroy())
		assert.Error(t, st.Synchronize(), "a destroyed stream is refused before any call")
		assert.Error(t, ev.Synchronize(), "a destroyed event is refused before any call")
	}
}
