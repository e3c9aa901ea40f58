package driver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/probe"
)

// DefaultInitTimeout is how long a driver's init may take before the backend
// is "not available: timed out" (FLAGOS_PROBE_TIMEOUT's default).
const DefaultInitTimeout = 30 * time.Second

// Backend is one vendor's driver as a device.Backend, device.Describer,
// device.Memory, device.Compute, device.Streams and device.Graphs. Creating one does no
// I/O: the library is opened and initialized by the first call of any
// method, once, and the outcome is kept for the life of the Backend. Its
// methods are safe for concurrent use.
//
// The current device is the backend's, per process (as
// torch.cuda.current_device): SetCurrent stores it, Current returns it (0
// until SetCurrent), and every method given index -1 uses it. No method
// relies on the calling OS thread's state: each call that needs a context
// locks its goroutine to the thread, makes the device's context current
// there, calls the driver and unlocks. Use WithContext to run driver calls
// of your own with a device's context current.
type Backend struct {
	v *Vendor
	o options

	libOnce      sync.Once
	lib          *libState // stage one, set in libOnce
	deadlineOnce sync.Once
	loadDeadline time.Time
	once         sync.Once
	st           atomic.Pointer[state]
	cur          atomic.Int32    // the process-wide current device
	modSeq       atomic.Uint64   // numbers unlabelled modules
	pinned       pinnedSet       // host buffers from AllocHost, for Stream's copies
	fs           factsState      // the facts tier's answer (WithFacts)
	ident        identityState   // whose runtime answered, in the exact tier
	pci          pciState        // the vendor's accelerators in sysfs (Record, Unusable)
	mgmt         managementState // the management library's memory facts (WithManagementMemory)

	_ [64]byte // no line of hot is shared with a field written after the load (cur)
	// hot are the first devices' synchronize, prepared (the selector's
	// clib.Prepared), each copied into an allocation of its own: 64
	// bytes, which the allocator places on a cache line of their own.
	// Synchronize then reads hot's line and that one before its call,
	// where the general way follows the state, the device and its
	// selector, each a dependent load that a real driver's call before
	// it has left cold (docs/benchmarks.md; the call kept inline in the
	// backend measured the same on an H100, and needed a state word of
	// its own). Set once, by the first Synchronize that finds it empty.
	hot [hotDevices]atomic.Pointer[clib.Prepared]
}

// hotDevices is how many devices have a prepared synchronize in hot.
const hotDevices = 8

// Option configures New.
type Option func(*options)

type options struct {
	log     *zap.Logger
	hooks   *hooks.Hooks
	note    func() string
	getenv  func(string) string
	lib     *clib.Library
	timeout time.Duration
	step    func(string)
	facts   func(*Backend) tier.Facts
	makers  map[uint16]string             // WithMakers
	sysroot string                        // WithSysRoot
	names   map[string]device.VendorNames // WithVendorNames
	// management: WithManagementMemory.
	management *presence.Env
}

// WithLogger sets the logger (load attempts at debug, the outcome at info);
// the default is zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithHooks sets the module hook registry applied to every module the
// backend loads; the default (and nil) is hooks.DefaultHooks.
func WithHooks(h *hooks.Hooks) Option {
	return func(o *options) {
		if h != nil {
			o.hooks = h
		}
	}
}

// WithUnavailableNote sets a function called whenever a call fails because
// the backend is unavailable; a non-empty result is appended to that error's
// message as a sentence (Available().Reason is left alone). flagshim uses it
// to say that the cuda->flagos alias is off. It must be cheap and safe for
// concurrent use.
func WithUnavailableNote(f func() string) Option { return func(o *options) { o.note = f } }

// WithGetenv replaces os.Getenv for the library's override variable and the
// visible-devices variables the backend reports (tests, embedding).
func WithGetenv(f func(string) string) Option {
	return func(o *options) {
		if f != nil {
			o.getenv = f
		}
	}
}

// WithLibrary replaces where the library is looked for (the vendor's
// Library by default).
func WithLibrary(l clib.Library) Option { return func(o *options) { o.lib = &l } }

// WithInitTimeout bounds the driver's load and init (DefaultInitTimeout
// when d <= 0): past it the backend is not available, with a reason
// matching ErrTimedOut, and the thread stuck in the driver is left behind
// (a driver that hangs in init cannot be interrupted; its later answer is
// ignored).
func WithInitTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithStepHook sets a function called with the name of each C function the
// load is about to call ("dlopen libcuda", "cuInit", ...), so a supervising
// process can say where a driver crashed or hung (flagshim's isolated
// probe). It must be cheap and must not call the backend.
func WithStepHook(f func(step string)) Option { return func(o *options) { o.step = f } }

// New returns a Backend for v. It does no I/O. It panics if v fails
// Validate: a vendor description is a program's constant, not input.
func New(v *Vendor, opts ...Option) *Backend {
	if err := v.Validate(); err != nil {
		panic(err)
	}
	o := options{log: zap.NewNop(), hooks: hooks.DefaultHooks, getenv: os.Getenv}
	for _, opt := range opts {
		opt(&o)
	}
	if o.timeout <= 0 {
		o.timeout = DefaultInitTimeout
	}
	return &Backend{v: v, o: o}
}

// Vendor is the description the backend was made from.
func (b *Backend) Vendor() *Vendor { return b.v }

// Hooks is the registry the backend applies to the modules it loads.
func (b *Backend) Hooks() *hooks.Hooks { return b.o.hooks }

// Type is the vendor's device type.
func (b *Backend) Type() device.Type { return b.v.Type }

// Available is the true probe: the library loads, init succeeds and there is
// at least one device. The first call loads (concurrent first callers share
// that one load); the outcome is cached. It never panics.
func (b *Backend) Available() probe.Result {
	if f := b.facts(); f != nil {
		return f.Result
	}
	return b.load().result
}

// Loaded reports whether the library has been looked for yet; it never
// triggers a load (tests, diagnostics).
func (b *Backend) Loaded() bool { return b.st.Load() != nil }

// DeviceCount is the number of devices the driver shows (after its
// visible-devices variable). A driver that initialized with no devices gives
// (0, nil); one that could not be loaded or initialized is an error.
func (b *Backend) DeviceCount() (int, error) {
	if f := b.facts(); f != nil {
		if !f.Result.Available {
			return 0, fmt.Errorf("%w: %s", device.ErrNotAvailable, f.Result.Reason)
		}
		return len(f.Devices), nil
	}
	s := b.load()
	if s.count >= 0 {
		return s.count, nil
	}
	return 0, b.unavail(s)
}

// Current is the backend's current device: 0 until SetCurrent.
func (b *Backend) Current() (int, error) {
	if f := b.facts(); f != nil {
		if !f.Result.Available {
			return -1, fmt.Errorf("%w: %s", device.ErrNotAvailable, f.Result.Reason)
		}
		return int(b.cur.Load()), nil
	}
	s := b.load()
	if s.err != nil {
		return -1, b.unavail(s)
	}
	return int(b.cur.Load()), nil
}

// SetCurrent makes index the backend's current device (-1 keeps it). On a
// device's first use it retains the device's context. It does not touch the
// calling thread's context: every call makes its own device current itself.
func (b *Backend) SetCurrent(index int) error {
	if f := b.facts(); f != nil {
		i, err := b.factsDevice(f, index)
		if err != nil {
			return err
		}
		b.cur.Store(int32(i))
		return nil
	}
	s, d, err := b.device(index)
	if err != nil {
		return err
	}
	if _, err := s.selector(d); err != nil {
		return err
	}
	b.cur.Store(int32(d.ordinal))
	return nil
}

// Synchronize waits for all work on device index (-1: the current device).
func (b *Backend) Synchronize(index int) error {
	if uint(index) < hotDevices {
		if p := b.hot[index].Load(); p != nil {
			if _, r := p.Call(); clib.Code(r) != 0 {
				s, d, _ := b.device(index) // loaded: hot is written after the load
				return s.opErr(OpSynchronizeContext, d, s.api.failed(OpSynchronizeContext, clib.Code(r)))
			}
			return nil
		}
	}
	return b.synchronize(index)
}

// synchronize is Synchronize the general way; the first call on one of
// the first devices keeps its prepared call in hot.
func (b *Backend) synchronize(index int) error {
	s, d, err := b.device(index)
	if err != nil {
		return err
	}
	sel := d.sel.Load()
	if sel == nil {
		if sel, err = s.firstSelector(d); err != nil {
			return err
		}
	}
	if sel.sync.OK() {
		// One call that names the context (cuCtxSynchronize_v2), prepared
		// with the selector: the thread's current context stays as it
		// was, nothing needs the thread, and success costs one compare.
		if uint(d.ordinal) < hotDevices && b.hot[d.ordinal].Load() == nil {
			p := sel.sync
			b.hot[d.ordinal].CompareAndSwap(nil, &p)
		}
		if _, r := sel.sync.Call(); clib.Code(r) != 0 {
			return s.opErr(OpSynchronizeContext, d, s.api.failed(OpSynchronizeContext, clib.Code(r)))
		}
		return nil
	}
	if s.api.synchronizesContexts() { // the same call where clib prepares none (no trampoline here)
		if r := s.api.synchronizeContext(sel.args[:]); r != 0 {
			return s.opErr(OpSynchronizeContext, d, s.api.failed(OpSynchronizeContext, r))
		}
		return nil
	}
	// One transition to C for both calls, on one thread: no locked
	// goroutine, half the cgocall cost (see ccallThen).
	selected, synced := s.api.selectThenSynchronize(sel.args[:])
	if err := s.api.check(s.api.selectOp(), selected); err != nil {
		return s.opErr(s.api.selectOp(), d, err)
	}
	if err := s.api.check(OpSynchronize, synced); err != nil {
		return s.opErr(OpSynchronize, d, err)
	}
	return nil
}

// device returns the loaded state and device index's record (-1: the
// current device), or why there is none.
func (b *Backend) device(index int) (*state, *devState, error) {
	if s := b.st.Load(); s != nil && s.err == nil && uint(index) < uint(len(s.devs)) {
		return s, &s.devs[index], nil
	}
	return b.deviceSlow(index)
}

// deviceSlow is device before the load, on an unavailable backend, for
// the current device (-1) or an index out of range (out of line, so that
// device inlines into the hot paths).
func (b *Backend) deviceSlow(index int) (*state, *devState, error) {
	s := b.load()
	if s.err != nil {
		return nil, nil, b.unavail(s)
	}
	if index == -1 {
		index = int(b.cur.Load())
	}
	if uint(index) >= uint(len(s.devs)) {
		return nil, nil, s.rangeErr(index)
	}
	return s, &s.devs[index], nil
}

// unavail is the error of a call on an unavailable backend: the load's
// error, with the note appended when there is one.
func (b *Backend) unavail(s *state) error {
	if f := b.facts(); f != nil {
		return b.exactErr(f, s.err)
	}
	if b.o.note == nil {
		return s.err
	}
	u, ok := s.err.(*unavailable)
	if !ok {
		return s.err
	}
	n := strings.TrimSpace(b.o.note())
	if n == "" {
		return s.err
	}
	c := *u
	c.note = n
	return &c
}

func (s *state) rangeErr(i int) error {
	if len(s.devs) == 0 {
		return fmt.Errorf("%w: %s:%d: there are no devices", device.ErrInvalidIndex, s.v.Type, i)
	}
	return fmt.Errorf("%w: %s:%d is out of range: valid indexes are 0..%d (%d devices), or -1 for the current device",
		device.ErrInvalidIndex, s.v.Type, i, len(s.devs)-1, len(s.devs))
}

// opErr says which device op failed on: "cuda: cuCtxSynchronize(device 1)
// returned CUDA_ERROR_ILLEGAL_ADDRESS (700): ...", and unwraps to err.
func (s *state) opErr(op Op, d *devState, err error) error {
	var ce *clib.Error
	if errors.As(err, &ce) && ce == err && ce.Func == s.api.sym(op) {
		return &callError{msg: fmt.Sprintf("%s: %s(device %d) returned %s", ce.Library, ce.Func, d.ordinal, ce.Detail()), err: err}
	}
	return fmt.Errorf("%s(device %d): %w", s.api.sym(op), d.ordinal, err)
}

// callError is a C library's error with the call's own words.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

// lacks is the error of a call whose operations the library does not have.
func (s *state) lacks(what string, ops ...Op) error {
	return fmt.Errorf("%w: %s: %s lacks %s, needed for %s", device.ErrNotSupported, s.v.Type, s.path, strings.Join(s.api.missing(ops...), ", "), what)
}

// ready returns the loaded state for a call that needs ops, or why it
// cannot run.
func (b *Backend) ready(what string, ops ...Op) (*state, error) {
	s := b.load()
	if s.err != nil {
		return nil, b.unavail(s)
	}
	if !s.api.has(ops...) {
		return nil, s.lacks(what, ops...)
	}
	return s, nil
}

var (
	_ device.Backend   = (*Backend)(nil)
	_ device.Describer = (*Backend)(nil)
	_ device.Memory    = (*Backend)(nil)
	_ device.Compute   = (*Backend)(nil)
	_ device.Streams   = (*Backend)(nil)
	_ device.Graphs    = (*Backend)(nil)
)
