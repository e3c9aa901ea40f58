package flagshim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// FLAGOS_TRACE takes FLAGOS_ALIAS_CUDA's values, strictly.
func TestParseTrace(t *testing.T) {
	for _, v := range []string{"", "0", "false", "off", "no", " OFF ", "No"} {
		on, err := ParseTrace(v)
		require.NoError(t, err, "%q", v)
		assert.False(t, on, "%q", v)
	}
	for _, v := range []string{"1", "true", "on", "yes", " TRUE\t", "Yes"} {
		on, err := ParseTrace(v)
		require.NoError(t, err, "%q", v)
		assert.True(t, on, "%q", v)
	}
	for _, v := range []string{"2", "verbose", "debug", "y", "enable", "on,off"} {
		_, err := ParseTrace(v)
		require.Error(t, err, "%q", v)
		assert.Contains(t, err.Error(), `FLAGOS_TRACE="`+v+`"`)
		assert.Contains(t, err.Error(), "1, true, on, yes")
		assert.Contains(t, err.Error(), "0, false, off, no")
	}
	_, err := readSettings(func(k string) string {
		if k == EnvTrace {
			return "verbose"
		}
		return ""
	}, "")
	assert.ErrorIs(t, err, ErrBadSetting)
}

// The trace goes to Init's logger where it logs info, else to stderr at
// info level: FLAGOS_LOG=off does not hide a trace that was asked for.
func TestTraceLogger(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := &shim{log: zap.New(core)}
	s.traceLogger().Info("call")
	require.Equal(t, 1, logs.Len(), "a logger at info level gets the trace")
	assert.Equal(t, "trace", logs.All()[0].LoggerName)

	core, logs = observer.New(zapcore.ErrorLevel)
	s = &shim{log: zap.New(core)}
	l := s.traceLogger()
	assert.True(t, l.Core().Enabled(zapcore.InfoLevel), "a quieter logger is replaced by stderr at info")
	assert.Zero(t, logs.Len())
	s = &shim{log: zap.NewNop()}
	assert.True(t, s.traceLogger().Core().Enabled(zapcore.InfoLevel), "FLAGOS_LOG=off (no-op logger): stderr at info")
}
