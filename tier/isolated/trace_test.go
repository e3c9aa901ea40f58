package isolated

import (
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier"
)

// Asked to trace, a child sends each C call it makes, and the supervisor
// logs it as this process's tracer would, with the child's vendor; a
// pointer's data is never shown. Not asked, it sends none.
func TestChildTrace(t *testing.T) {
	lib := vendorstest.Driver(t, cuda.Vendor(), dltest.PrivateDir(t))
	t.Setenv("FLAGOS_LIBCUDA_PATH", lib)
	core, logs := observer.New(zapcore.InfoLevel)
	f, err := probeOnce(t, Config{Trace: zap.New(core)}, "cuda")
	require.NoError(t, err)
	require.True(t, f.Result.Available, f.Result.Reason)
	assert.Equal(t, tier.Isolated, f.Tier)
	calls := map[string]map[string]any{}
	for _, e := range logs.All() {
		assert.Equal(t, "call", e.Message)
		m := e.ContextMap()
		assert.Equal(t, "cuda", m["lib"])
		assert.Equal(t, "cuda", m["child"])
		assert.Contains(t, m, "duration")
		assert.IsType(t, time.Duration(0), m["duration"])
		calls[m["func"].(string)] = m
	}
	for _, fn := range []string{"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName"} {
		require.Contains(t, calls, fn, "the child's %s was traced", fn)
		assert.EqualValues(t, 0, calls[fn]["result"], fn)
	}
	assert.Equal(t, "0", calls["cuInit"]["args"], "cuInit(0): a value is shown")
	assert.Equal(t, "*", calls["cuDriverGetVersion"]["args"], "an out pointer is shown as *, never read")
	assert.Zero(t, Wait(10*time.Second))

	f, err = probeOnce(t, Config{}, "cuda")
	require.NoError(t, err)
	assert.True(t, f.Result.Available, "no trace asked, none sent (a trace line would break the protocol): %s", f.Result.Reason)
	assert.Zero(t, Wait(10*time.Second))
}

// A trace line that is not JSON breaks the protocol, as any other line.
func TestChildTraceGarbage(t *testing.T) {
	t.Setenv(hostileEnv, "trace-garbage")
	f, err := probeOnce(t, Config{Timeout: 30 * time.Second, Trace: zap.NewNop()}, "cuda")
	require.NoError(t, err)
	assert.False(t, f.Result.Available)
	assert.Contains(t, f.Result.Reason, "a trace line that is not JSON")
	assert.Zero(t, Wait(10*time.Second))
}
