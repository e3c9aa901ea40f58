package driver

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/probe"
)

// state is the outcome of loading; immutable once published, except for the
// devices' contexts, which are retained on first use.
type state struct {
	v        *Vendor
	path     string       // the library opened; "" when none
	attempts []dl.Attempt // every candidate, in order
	api      *api         // nil when the library or a required symbol is missing
	version  int          // raw driver version; 0 when unknown
	count    int          // devices; -1 when unknown (init failed)
	devs     []devState   // by ordinal
	err      error        // nil: available
	result   probe.Result
}

// progress is what a load has done so far, for the reason of a load that
// timed out.
type progress struct {
	mu       sync.Mutex
	step     string // the C function being called
	path     string
	attempts []dl.Attempt
}

func (p *progress) at(step string) {
	p.mu.Lock()
	p.step = step
	p.mu.Unlock()
}

// load returns the state, loading on first use; the first concurrent callers
// share one load.
func (b *Backend) load() *state {
	if s := b.st.Load(); s != nil {
		return s
	}
	b.once.Do(func() { b.st.Store(b.guardedLoad()) })
	return b.st.Load()
}

// guardedLoad runs the load on a goroutine of its own and waits at most the
// init timeout: a driver that hangs in dlopen's constructors or in init
// cannot be interrupted, so its thread is left behind and the backend is not
// available.
func (b *Backend) guardedLoad() *state {
	var p progress
	done := make(chan *state, 1)
	go func() { done <- b.doLoad(&p) }()
	t := time.NewTimer(b.o.timeout)
	defer t.Stop()
	select {
	case s := <-done:
		return s
	case <-t.C:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &state{v: b.v, count: -1, path: p.path, attempts: p.attempts}
	step := p.step
	if step == "" {
		step = "loading " + b.v.Library.Name
	}
	s.fail(ErrTimedOut, fmt.Sprintf("%s: %s did not return within %s (FLAGOS_PROBE_TIMEOUT): the driver hangs; its thread is left behind and %s is not available in this process",
		b.v.Type, step, b.o.timeout, b.v.Type))
	b.log(s)
	return s
}

func (b *Backend) library() dl.Spec {
	l := b.v.Library
	if b.o.lib != nil {
		l = *b.o.lib
	}
	return dl.Spec{Name: l.Name, EnvVar: l.EnvVar, Sonames: l.Sonames, Dirs: l.Dirs, Getenv: b.o.getenv}
}

func (b *Backend) doLoad(p *progress) (s *state) {
	v := b.v
	s = &state{v: v, count: -1}
	defer func() {
		if r := recover(); r != nil {
			s.fail(nil, fmt.Sprintf("%s: loading the driver panicked: %v", v.Type, r))
		}
		b.log(s)
	}()

	p.at("dlopen")
	lib, err := dl.Open(b.library())
	if err != nil {
		var oe *dl.OpenError
		if errors.As(err, &oe) {
			s.attempts = oe.Attempts
		}
		s.fail(err, fmt.Sprintf("%s: %v", v.Type, err))
		return s
	}
	s.path, s.attempts = lib.Path, lib.Attempts
	p.mu.Lock()
	p.path, p.attempts = s.path, s.attempts
	p.mu.Unlock()
	a, err := resolve(v, lib)
	if err != nil {
		s.fail(err, fmt.Sprintf("%s: %v", v.Type, err))
		return s
	}
	s.api = a
	p.at(a.sym(OpDriverVersion))
	if ver, err := a.driverVersion(); err == nil {
		s.version = ver
	}
	p.at(a.sym(OpInit))
	if err := a.init(); err != nil {
		s.fail(err, fmt.Sprintf("%s: %s(0) failed: %s (library %s)%s", v.Type, a.sym(OpInit), bare(err), s.path, b.initHint(err)))
		return s
	}
	p.at(a.sym(OpDeviceCount))
	n, err := a.deviceCount()
	// A driver may say "no device" through the count's result rather than
	// a count of 0 (HIP's hipGetDeviceCount returns hipErrorNoDevice): that
	// is zero devices too.
	noDevice := err != nil && errors.Is(err, ErrNoDevice)
	if err != nil && !noDevice {
		s.fail(err, fmt.Sprintf("%s: %s failed: %s (library %s)", v.Type, a.sym(OpDeviceCount), bare(err), s.path))
		return s
	}
	switch {
	case !noDevice && n > MaxDevices:
		s.fail(ErrTooManyDevices, fmt.Sprintf("%s: %s reported %d devices, more than the %d flagshim accepts: the driver is broken (library %s)",
			v.Type, a.sym(OpDeviceCount), n, MaxDevices, s.path))
		return s
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
		return s
	}
	p.at(a.sym(OpDeviceGet))
	s.devs = make([]devState, n)
	for i := range s.devs {
		h, err := a.deviceGet(i)
		if err != nil {
			s.fail(err, fmt.Sprintf("%s: %s(%d) failed: %s (library %s)", v.Type, a.sym(OpDeviceGet), i, bare(err), s.path))
			s.devs = nil
			return s
		}
		s.devs[i] = devState{ordinal: i, handle: h}
	}
	s.count = n
	s.result = probe.Result{
		Available: true,
		Devices:   n,
		Reason:    fmt.Sprintf("%s: %s, driver %s, %d device(s)", v.Type, s.path, v.FormatVersion(s.version), n),
	}
	return s
}

func (b *Backend) log(s *state) {
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
		lib := b.v.Library
		return fmt.Sprintf("; this is the toolkit's link-time stub, not the driver: install the driver or set %s to the real library", lib.EnvVar)
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
