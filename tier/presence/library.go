package presence

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
)

// Open finds, checks and opens a management library for a source, and
// records the attempts in r. On failure it fills r.Err (ErrNoLibrary or
// ErrBadOverride) and r.Reason, which names the library's file and its
// override variable, and returns nil.
func (e *Env) Open(lib clib.Library, r *Report) *clib.Handle {
	// The file the advice names is the library's own, whatever a test's
	// search looks for instead.
	file := fileOf(lib)
	if e.search != nil {
		env := lib.EnvVar
		e.search(&lib)
		lib.EnvVar = env
	}
	h, err := lib.Open(e.Getenv)
	if err == nil {
		r.Library = h.Path()
		r.Attempts = clib.Attempts(h.Attempts())
		e.log.Debug("presence: opened", zap.String("library", h.Path()))
		return h
	}
	var oe *clib.OpenError
	if !errors.As(err, &oe) {
		r.Err = fmt.Errorf("%w: %w", ErrNoLibrary, err)
		r.Reason = err.Error()
		return nil
	}
	r.Attempts = clib.Attempts(oe.Attempts)
	if oe.Override != "" {
		detail := "the path must be absolute"
		if oe.Cause != nil {
			detail = oe.Cause.Error()
		}
		r.Err = fmt.Errorf("%w: %w", ErrBadOverride, err)
		r.Reason = fmt.Sprintf("%s=%q cannot be used: %s; set %s=/abs/path/to/%s or unset it to search the usual places",
			lib.EnvVar, oe.Override, detail, lib.EnvVar, file)
		return nil
	}
	tried := clib.Tried(err)
	r.Err = fmt.Errorf("%w: %w", ErrNoLibrary, err)
	r.Reason = fmt.Sprintf("%s not found (tried %s); install the driver's management library or set %s=/abs/path/to/%s",
		file, tried, lib.EnvVar, file)
	e.log.Debug("presence: not found", zap.String("library", file), zap.String("tried", tried))
	return nil
}

// fileOf is the library's file as advice names it: its first soname, else
// its name's .so.
func fileOf(lib clib.Library) string {
	if len(lib.Sonames) > 0 {
		return lib.Sonames[0]
	}
	return lib.Name + ".so"
}
