package logging_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/flagos-ai/flagshim/internal/logging"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in    string
		level zapcore.Level
		on    bool
	}{
		{"", zapcore.InvalidLevel, false},
		{"   ", zapcore.InvalidLevel, false},
		{"off", zapcore.InvalidLevel, false},
		{" OFF\t", zapcore.InvalidLevel, false},
		{"error", zapcore.ErrorLevel, true},
		{"Error", zapcore.ErrorLevel, true},
		{"warn", zapcore.WarnLevel, true},
		{"WARN ", zapcore.WarnLevel, true},
		{"info", zapcore.InfoLevel, true},
		{"\ninfo\n", zapcore.InfoLevel, true},
		{"debug", zapcore.DebugLevel, true},
		{"DeBuG", zapcore.DebugLevel, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			level, on, err := logging.ParseLevel(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.on, on)
			assert.Equal(t, tt.level, level)
		})
	}
}

func TestParseLevelErrors(t *testing.T) {
	for _, in := range []string{"verbose", "warning", "0", "1", "none", "in fo", "dpanic", "fatal", "debug,info", "\x00"} {
		t.Run(in, func(t *testing.T) {
			_, on, err := logging.ParseLevel(in)
			require.ErrorIs(t, err, logging.ErrBadLevel)
			assert.False(t, on)
			msg := err.Error()
			assert.Contains(t, msg, logging.EnvVar)
			assert.Contains(t, msg, strconv.Quote(in), "the value, quoted")
			for _, v := range []string{"off", "error", "warn", "info", "debug"} {
				assert.Contains(t, msg, v)
			}
			l, err2 := logging.New(in)
			assert.Nil(t, l)
			assert.Equal(t, err.Error(), err2.Error())
		})
	}
}

func TestNewOff(t *testing.T) {
	for _, in := range []string{"", "off", " Off "} {
		var buf bytes.Buffer
		l, err := logging.NewLogger(in, zapcore.AddSync(&buf))
		require.NoError(t, err)
		assert.False(t, l.Core().Enabled(zapcore.ErrorLevel), "off must be silent")
		l.Error("should not appear")
		assert.Empty(t, buf.String())

		l, err = logging.New(in)
		require.NoError(t, err)
		assert.False(t, l.Core().Enabled(zapcore.FatalLevel))
	}
}

func TestNewLevels(t *testing.T) {
	all := []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel}
	for _, min := range all {
		t.Run(min.String(), func(t *testing.T) {
			var buf bytes.Buffer
			l, err := logging.NewLogger(strings.ToUpper(min.String()), zapcore.AddSync(&buf))
			require.NoError(t, err)
			for _, lv := range all {
				assert.Equal(t, lv >= min, l.Core().Enabled(lv), "level %s", lv)
				l.Check(lv, "msg-"+lv.String()).Write(zap.String("k", "v"))
			}
			require.NoError(t, l.Sync())
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			var want []string
			for _, lv := range all {
				if lv >= min {
					want = append(want, "msg-"+lv.String())
				}
			}
			require.Len(t, lines, len(want), buf.String())
			iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d)`)
			for i, line := range lines {
				assert.Regexp(t, iso, line)
				assert.Contains(t, line, want[i])
				assert.Contains(t, line, `{"k": "v"}`)
				assert.Contains(t, line, "logging_test.go", "caller")
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(logging.EnvVar, "debug")
	l, err := logging.FromEnv()
	require.NoError(t, err)
	assert.True(t, l.Core().Enabled(zapcore.DebugLevel))

	t.Setenv(logging.EnvVar, "")
	l, err = logging.FromEnv()
	require.NoError(t, err)
	assert.False(t, l.Core().Enabled(zapcore.ErrorLevel))

	t.Setenv(logging.EnvVar, "loud")
	_, err = logging.FromEnv()
	require.ErrorIs(t, err, logging.ErrBadLevel)
	assert.Contains(t, err.Error(), `FLAGOS_LOG="loud"`)
}

func FuzzParseLevel(f *testing.F) {
	for _, s := range []string{"", "off", "OFF", " error ", "warn", "Info", "DEBUG", "verbose", "\x00", "warning", "ſ", "İnfo", "\u00a0debug\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		level, on, err := logging.ParseLevel(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		if err != nil {
			if !assert.ErrorIs(t, err, logging.ErrBadLevel) || !assert.Contains(t, err.Error(), logging.EnvVar) {
				return
			}
			assert.False(t, on)
			return
		}
		if !on {
			assert.Contains(t, []string{"", "off"}, norm)
			return
		}
		// Accepted values round-trip through the level's name.
		assert.Equal(t, norm, level.String())
		again, on2, err2 := logging.ParseLevel(level.String())
		require.NoError(t, err2)
		assert.True(t, on2)
		assert.Equal(t, level, again)
	})
}

func TestDurationsReadable(t *testing.T) {
	var buf bytes.Buffer
	l, err := logging.NewLogger("info", zapcore.AddSync(&buf))
	require.NoError(t, err)
	l.Info("took", zap.Duration("duration", 1500*time.Microsecond))
	assert.Contains(t, buf.String(), `"duration": "1.5ms"`)
}
