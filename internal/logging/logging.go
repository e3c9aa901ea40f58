package logging

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EnvVar is the environment variable that sets the log level.
const EnvVar = "FLAGOS_LOG"

// Accepted lists the values EnvVar accepts, in the order error messages
// give them.
const Accepted = "off (default), error, warn, info, debug"

// ErrBadLevel is wrapped by the error for a value EnvVar does not accept.
var ErrBadLevel = errors.New("invalid log level")

// ParseLevel parses a value of EnvVar. Surrounding spaces and case are
// ignored. "", "off" give on == false (level is then zapcore.InvalidLevel
// and means nothing); "error", "warn", "info", "debug" give that level and
// on == true. Anything else is an error wrapping ErrBadLevel.
func ParseLevel(s string) (level zapcore.Level, on bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off":
		return zapcore.InvalidLevel, false, nil
	case "error":
		return zapcore.ErrorLevel, true, nil
	case "warn":
		return zapcore.WarnLevel, true, nil
	case "info":
		return zapcore.InfoLevel, true, nil
	case "debug":
		return zapcore.DebugLevel, true, nil
	}
	return zapcore.InvalidLevel, false, fmt.Errorf("%s=%q: %w; accepted values: %s", EnvVar, s, ErrBadLevel, Accepted)
}

// New returns the logger for a value of EnvVar: zap.NewNop() when logging
// is off, otherwise a console logger on stderr at that level.
func New(s string) (*zap.Logger, error) {
	return newLogger(s, zapcore.Lock(os.Stderr))
}

// FromEnv is New(os.Getenv(EnvVar)).
func FromEnv() (*zap.Logger, error) {
	return New(os.Getenv(EnvVar))
}

func newLogger(s string, w zapcore.WriteSyncer) (*zap.Logger, error) {
	level, on, err := ParseLevel(s)
	if err != nil {
		return nil, err
	}
	if !on {
		return zap.NewNop(), nil
	}
	cfg := zap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.EncodeLevel = zapcore.CapitalLevelEncoder
	cfg.EncodeDuration = zapcore.StringDurationEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), w, level)
	return zap.New(core, zap.AddCaller(), zap.ErrorOutput(w)), nil
}
