package driver

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// Loading has two stages, each run once: opening the library (dlopen, the
// symbols, the driver version: no init, so it is fork-safe and serves the
// presence tier) and initializing the driver (init, the device count and
// handles). Both run on a goroutine of their own under one deadline (the
// init timeout): a driver that hangs in its constructors or its init cannot
// be interrupted, so its thread is left behind and the backend is not
// available.

// libState is the outcome of opening the library; immutable.
type libState struct {
	path     string         // the library opened; "" when none
	attempts []clib.Attempt // every candidate, in order
	api      *api           // nil when the library or a required symbol is missing
	version  int            // raw driver version; 0 when unknown
	err      error          // why there is no api
	reason   string
}

// state is the outcome of loading; immutable once published, except for the
// devices' contexts, which are retained on first use.
type state struct {
	v        *Vendor
	path     string
	attempts []clib.Attempt
	api      *api
	version  int
	count    int        // devices; -1 when unknown (init failed)
	devs     []devState // by ordinal
	err      error      // nil: available
	result   probe.Result
}

// progress is what a stage is doing, for the reason of one that timed out
// and for the step hook of an isolated probe.
type progress struct {
	mu   sync.Mutex
	step string // the C function being called
	hook func(string)
}

func (p *progress) at(step string) {
	p.mu.Lock()
	p.step = step
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		hook(step)
	}
}

func (p *progress) current() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.step
}

// guarded runs f on a goroutine of its own and waits until deadline; on
// expiry it returns false and f's later result is dropped.
func guarded[T any](deadline time.Time, f func() T) (T, bool) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case v := <-done:
		return v, true
	case <-t.C:
		var zero T
		return zero, false
	}
}

func (b *Backend) timedOut(step string) string {
	return fmt.Sprintf("%s: %s did not return within %s (FLAGOS_PROBE_TIMEOUT): the driver hangs; its thread is left behind and %s is not available in this process",
		b.v.Type, step, b.o.timeout, b.v.Type)
}

// deadline is when the backend's loading must be done: the init timeout
// from the first use.
func (b *Backend) deadline() time.Time {
	b.deadlineOnce.Do(func() { b.loadDeadline = time.Now().Add(b.o.timeout) })
	return b.loadDeadline
}

// library opens the library once (stage one).
func (b *Backend) library() *libState {
	b.libOnce.Do(func() {
		p := &progress{hook: b.o.step}
		ls, ok := guarded(b.deadline(), func() *libState { return b.openLibrary(p) })
		if !ok {
			step := p.current()
			ls = &libState{err: ErrTimedOut, reason: b.timedOut(step)}
		}
		b.lib = ls
	})
	return b.lib
}

// where is where the library is looked for: WithLibrary's, else the
// vendor's.
func (b *Backend) where() clib.Library {
	if b.o.lib != nil {
		return *b.o.lib
	}
	return b.v.Library
}

// find runs the library search without opening anything.
func (b *Backend) find() (string, []clib.Attempt, error) { return b.where().Find(b.o.getenv) }

func (b *Backend) openLibrary(p *progress) (ls *libState) {
	v := b.v
	ls = &libState{}
	defer func() {
		if r := recover(); r != nil {
			ls.api, ls.err, ls.reason = nil, ErrPanic, fmt.Sprintf("%s: loading the driver panicked: %v", v.Type, r)
		}
	}()
	if skipped, ok := b.withoutNodes(); ok {
		return skipped
	}
	p.at("dlopen " + v.Library.Name)
	lib, err := b.where().Open(b.o.getenv)
	if err != nil {
		var oe *clib.OpenError
		var as []clib.Attempt
		if errors.As(err, &oe) {
			as = oe.Attempts
		}
		return b.notOpened(as, err)
	}
	ls.path, ls.attempts = lib.Path(), lib.Attempts()
	a, err := resolve(v, lib)
	if err != nil {
		ls.err, ls.reason = err, fmt.Sprintf("%s: %v", v.Type, err)
		return ls
	}
	p.at(a.sym(OpDriverVersion))
	if ver, err := a.driverVersion(); err == nil {
		ls.version = ver
	}
	ls.api = a
	return ls
}

// notOpened is the library's state when the search found none to open
// (err is the search's *clib.OpenError).
func (b *Backend) notOpened(attempts []clib.Attempt, err error) *libState {
	return &libState{attempts: attempts, err: err, reason: fmt.Sprintf("%s: %v", b.v.Type, err)}
}

// dryLibrary is what openLibrary answers when that is known without
// opening anything: the device nodes are missing (withoutNodes), or the
// search finds no library (Find runs Open's search and fails with Open's
// error). ok is false when openLibrary would open one.
func (b *Backend) dryLibrary() (ls *libState, ok bool) {
	if skipped, ok := b.withoutNodes(); ok {
		return skipped, true
	}
	_, as, err := b.find()
	if err == nil {
		return nil, false
	}
	return b.notOpened(as, err), true
}

// unloaded is the state of a library that gave no API (ls.api nil).
func (b *Backend) unloaded(ls *libState) *state {
	s := &state{v: b.v, count: -1, path: ls.path, attempts: ls.attempts, version: ls.version}
	s.fail(ls.err, ls.reason)
	return s
}

// load returns the state, loading on first use (both stages); the first
// concurrent callers share one load.
func (b *Backend) load() *state {
	if s := b.st.Load(); s != nil {
		return s
	}
	return b.loadOnce()
}

// loadOnce is load's first use, out of line so that load inlines into the
// hot paths.
func (b *Backend) loadOnce() *state {
	b.once.Do(func() {
		ls := b.library()
		var s *state
		if ls.api == nil {
			s = b.unloaded(ls)
		} else {
			// The guarded goroutine owns st; on a timeout it keeps running
			// (the driver hangs) and s gets a fresh state, so nothing is
			// shared with the goroutine left behind.
			s = &state{v: b.v, count: -1, path: ls.path, attempts: ls.attempts, api: ls.api, version: ls.version}
			p, st := &progress{hook: b.o.step}, s
			if done, ok := guarded(b.deadline(), func() *state { b.initDriver(st, p); return st }); ok {
				s = done
			} else {
				s = &state{v: b.v, count: -1, path: ls.path, attempts: ls.attempts, version: ls.version}
				s.fail(ErrTimedOut, b.timedOut(p.current()))
			}
		}
		b.logOutcome(s)
		b.st.Store(s)
	})
	return b.st.Load()
}

// initDriver is stage two on a library that opened.
func (b *Backend) initDriver(s *state, p *progress) {
	v, a := b.v, s.api
	defer func() {
		if r := recover(); r != nil {
			s.devs, s.count = nil, -1
			s.fail(ErrPanic, fmt.Sprintf("%s: initializing the driver panicked: %v", v.Type, r))
		}
	}()
	p.at(a.sym(OpInit))
	if err := a.init(); err != nil {
		s.fail(err, fmt.Sprintf("%s: %s(0) failed: %s (library %s)%s", v.Type, a.sym(OpInit), bare(err), s.path, b.initHint(err)))
		return
	}
	if s.version == 0 {
		// A version function that needs init answers now (cn_api.h lists
		// CN_ERROR_NOT_INITIALIZED among cnDriverGetVersion's results).
		if ver, err := a.driverVersion(); err == nil {
			s.version = ver
		}
	}
	p.at(a.sym(OpDeviceCount))
	n, err := a.deviceCount()
	// A driver may say "no device" through the count's result rather than
	// a count of 0 (HIP's hipGetDeviceCount returns hipErrorNoDevice): that
	// is zero devices too.
	noDevice := err != nil && errors.Is(err, ErrNoDevice)
	if err != nil && !noDevice {
		s.fail(err, fmt.Sprintf("%s: %s failed: %s (library %s)", v.Type, a.sym(OpDeviceCount), bare(err), s.path))
		return
	}
	switch {
	case !noDevice && n > MaxDevices:
		s.fail(ErrTooManyDevices, fmt.Sprintf("%s: %s reported %d devices, more than the %d flagshim accepts: the driver is broken (library %s)",
			v.Type, a.sym(OpDeviceCount), n, MaxDevices, s.path))
		return
	case noDevice || n <= 0:
		s.count = 0
		got, cause := strconv.Itoa(n), error(ErrNoDevice)
		if noDevice {
			got, cause = bare(err), err
		}
		reason := fmt.Sprintf("%s: no devices: %s returned %s (library %s)", v.Type, a.sym(OpDeviceCount), got, s.path)
		if k, val := v.visible(b.o.getenv); k != "" {
			reason += fmt.Sprintf("; %s=%q hides devices", k, val)
		}
		s.fail(cause, reason)
		return
	}
	p.at(a.sym(OpDeviceGet))
	devs := make([]devState, n)
	for i := range devs {
		h, err := a.deviceGet(i)
		if err != nil {
			s.fail(err, fmt.Sprintf("%s: %s(%d) failed: %s (library %s)", v.Type, a.sym(OpDeviceGet), i, bare(err), s.path))
			return
		}
		devs[i] = devState{ordinal: i, handle: h}
	}
	s.devs, s.count = devs, n
	version := "driver " + v.FormatVersion(s.version)
	if s.version == 0 {
		version = "driver version unknown" // the library could not tell (OpDriverVersion failed)
	}
	s.result = probe.Result{
		Available: true,
		Devices:   n,
		Reason:    fmt.Sprintf("%s: %s, %s, %d device(s)", v.Type, s.path, version, n),
	}
}

func (b *Backend) logOutcome(s *state) {
	for _, a := range s.attempts {
		b.o.log.Debug(string(b.v.Type)+" load attempt", zap.String("path", a.Path), zap.Error(a.Err))
	}
	if s.err != nil {
		b.o.log.Info(string(b.v.Type)+" not available", zap.String("reason", s.result.Reason), zap.String("library", s.path))
		return
	}
	b.o.log.Info(string(b.v.Type)+" driver loaded", zap.String("library", s.path),
		zap.String("driver", b.v.FormatVersion(s.version)), zap.Int("devices", s.count))
}

func (b *Backend) initHint(err error) string {
	switch {
	case errors.Is(err, ErrStubLibrary):
		return fmt.Sprintf("; this is the toolkit's link-time stub, not the driver: install the driver or set %s to the real library", b.v.Library.EnvVar)
	case errors.Is(err, ErrDriverMismatch):
		return "; the kernel module and the user-space driver library do not match: reboot or reinstall the driver"
	case errors.Is(err, ErrNoDevice):
		if len(b.v.VisibleEnv) > 0 {
			return fmt.Sprintf("; check that a device is installed and that %s does not hide it", b.v.VisibleEnv[0])
		}
	}
	return ""
}

// fail makes s unavailable: reason is the probe's, cause what errors.Is
// finds besides device.ErrNotAvailable.
func (s *state) fail(cause error, reason string) {
	s.err = &unavailable{reason: reason, cause: cause}
	s.result = probe.Result{Reason: reason}
}

var _ = device.ErrNotAvailable
