package gpudrv

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ebitengine/purego"
	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/probe"
)

// Backend is the safe layer: a device.Backend and device.Describer for one
// vendor. Creating one does no I/O; the library is opened by the first call
// of any method, once, and the outcome is kept for the life of the Backend.
type Backend struct {
	v     *Vendor
	spec  dl.Spec
	log   *zap.Logger
	hooks *device.Hooks
	note  func() string

	once   sync.Once
	st     atomic.Pointer[state]
	cur    atomic.Int32  // the process-wide current device
	modSeq atomic.Uint64 // numbers unlabelled modules
}

// Config is what NewBackend needs besides the vendor.
type Config struct {
	// Spec says where the library is.
	Spec dl.Spec
	// Log nil means zap.NewNop().
	Log *zap.Logger
	// Hooks are applied to every module the backend loads; nil means
	// device.DefaultHooks.
	Hooks *device.Hooks
	// UnavailableNote, when set, is called each time a call fails because
	// the backend is unavailable; a non-empty result is appended to that
	// error's message as a sentence (the probe's Reason is left alone). It
	// must be cheap and safe for concurrent use.
	UnavailableNote func() string
}

// NewBackend returns a Backend for v that will load the library c.Spec
// describes. It does no I/O.
func NewBackend(v *Vendor, c Config) *Backend {
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Hooks == nil {
		c.Hooks = device.DefaultHooks
	}
	return &Backend{v: v, spec: c.Spec, log: c.Log, hooks: c.Hooks, note: c.UnavailableNote}
}

// Hooks is the registry the backend applies to the modules it loads.
func (b *Backend) Hooks() *device.Hooks { return b.hooks }

// unavail is the error of a call on an unavailable backend: the load's
// error, with the note appended when there is one.
func (b *Backend) unavail(s *state) error {
	if b.note == nil {
		return s.err
	}
	u, ok := s.err.(*unavailable)
	if !ok {
		return s.err
	}
	n := strings.TrimSpace(b.note())
	if n == "" {
		return s.err
	}
	c := *u
	c.note = n
	return &c
}

// state is the outcome of loading; immutable once published, except for the
// contexts, which are retained on first use.
type state struct {
	v        *Vendor
	path     string       // the library opened; "" when none
	attempts []dl.Attempt // every candidate
	drv      *Driver      // nil when the library or a required symbol is missing
	version  int          // raw driver version; 0 when unknown
	count    int          // devices; -1 when unknown (init failed)
	devs     []int32      // device handles by ordinal
	ctxs     []atomic.Pointer[primaryCtx]
	ctxMu    sync.Mutex // serialises retains
	err      error      // nil: available
	result   probe.Result
}

// load returns the state, loading on first use; the first concurrent callers
// share one load.
func (b *Backend) load() *state {
	if s := b.st.Load(); s != nil {
		return s
	}
	b.once.Do(func() { b.st.Store(b.doLoad()) })
	return b.st.Load()
}

func (b *Backend) doLoad() (s *state) {
	v := b.v
	s = &state{v: v, count: -1}
	defer func() {
		if p := recover(); p != nil {
			s.fail(v.Errors.NotAvailable, nil, fmt.Sprintf("%s: loading the driver panicked: %v", v.Pkg, p))
		}
		if s.err != nil {
			b.log.Info(v.Pkg+" not available", zap.String("reason", s.result.Reason), zap.String("library", s.path))
		} else {
			b.log.Info(v.Pkg+" driver loaded", zap.String("library", s.path), zap.String("driver", FormatVersion(s.version, v.VersionBase)), zap.Int("devices", s.count))
		}
	}()

	lib, err := dl.Open(b.spec)
	if err != nil {
		var oe *dl.OpenError
		if errors.As(err, &oe) {
			s.attempts = oe.Attempts
		}
		for _, a := range s.attempts {
			b.log.Debug(v.Pkg+" load attempt", zap.String("path", a.Path), zap.Error(a.Err))
		}
		s.fail(v.Errors.NotAvailable, err, v.Pkg+": "+err.Error())
		return s
	}
	s.path, s.attempts = lib.Path, lib.Attempts
	for _, a := range s.attempts {
		b.log.Debug(v.Pkg+" load attempt", zap.String("path", a.Path), zap.Error(a.Err))
	}
	drv, err := OpenDriver(v, lib)
	if err != nil {
		s.fail(v.Errors.NotAvailable, err, v.Pkg+": "+err.Error())
		return s
	}
	s.drv = drv
	if ver, err := drv.DriverGetVersion(); err == nil {
		s.version = ver
	}
	if err := drv.Init(0); err != nil {
		s.fail(v.Errors.NotAvailable, err, fmt.Sprintf("%s: %s(0) failed: %s (library %s)%s", v.Pkg, v.sym("Init"), bare(err), s.path, initHint(v, err)))
		return s
	}
	n, err := drv.DeviceGetCount()
	if err != nil {
		s.fail(v.Errors.NotAvailable, err, fmt.Sprintf("%s: %s failed: %s (library %s)", v.Pkg, v.sym("DeviceGetCount"), bare(err), s.path))
		return s
	}
	s.count = n
	if n <= 0 {
		s.count = 0
		reason := fmt.Sprintf("%s: no devices: %s returned 0 (library %s)", v.Pkg, v.sym("DeviceGetCount"), s.path)
		if vis := b.getenv(v.VisibleEnv); vis != "" {
			reason += fmt.Sprintf("; %s=%q hides devices", v.VisibleEnv, vis)
		}
		s.fail(v.Errors.NotAvailable, v.Errors.NoDevice, reason)
		return s
	}
	s.devs = make([]int32, n)
	for i := range s.devs {
		dev, err := drv.DeviceGet(i)
		if err != nil {
			s.fail(v.Errors.NotAvailable, err, fmt.Sprintf("%s: %s(%d) failed: %s (library %s)", v.Pkg, v.sym("DeviceGet"), i, bare(err), s.path))
			return s
		}
		s.devs[i] = dev
	}
	s.ctxs = make([]atomic.Pointer[primaryCtx], n)
	s.result = probe.Result{
		Available: true,
		Devices:   n,
		Reason:    fmt.Sprintf("%s: %s, driver %s, %d device(s)", v.Pkg, s.path, FormatVersion(s.version, v.VersionBase), n),
	}
	return s
}

func initHint(v *Vendor, err error) string {
	switch {
	case errors.Is(err, v.Errors.StubLibrary):
		return fmt.Sprintf("; this is the toolkit's link-time stub, not the driver: install the driver or set %s to the real library", v.Spec.EnvVar)
	case errors.Is(err, v.Errors.DriverMismatch):
		return "; the kernel module and the user-space driver library do not match: reboot or reinstall the driver"
	case errors.Is(err, v.Errors.NoDevice):
		if v.VisibleEnv != "" {
			return fmt.Sprintf("; check that a device is installed and that %s does not hide it", v.VisibleEnv)
		}
	}
	return ""
}

func (s *state) fail(sentinel, cause error, reason string) {
	s.err = &unavailable{sentinel: sentinel, reason: reason, cause: cause}
	s.result = probe.Result{Reason: reason}
}

func (b *Backend) getenv(k string) string {
	if k == "" {
		return ""
	}
	if b.spec.Getenv != nil {
		return b.spec.Getenv(k)
	}
	return os.Getenv(k)
}

// device checks index i against the device count.
func (s *state) device(i int) error {
	if uint(i) < uint(len(s.devs)) {
		return nil
	}
	return s.rangeErr(i)
}

func (s *state) rangeErr(i int) error {
	if len(s.devs) == 0 {
		return fmt.Errorf("%w: %s device index %d: there are no devices", s.v.Errors.InvalidDevice, s.v.Pkg, i)
	}
	return fmt.Errorf("%w: %s device index %d is out of range: valid indices are 0..%d (%d devices)",
		s.v.Errors.InvalidDevice, s.v.Pkg, i, len(s.devs)-1, len(s.devs))
}

// primaryCtx is a retained primary context. args is the argument list of
// cuCtxSetCurrent(ctx), built once: purego.SyscallN's variadic arguments
// escape (go:uintptrescapes), so a list built per call would cost an
// allocation; a shared, read-only one costs nothing.
type primaryCtx struct {
	ctx  uintptr
	args []uintptr
}

// context returns device i's primary context, retaining it on first use.
func (s *state) context(i int) (*primaryCtx, error) {
	if uint(i) >= uint(len(s.ctxs)) {
		return nil, s.rangeErr(i)
	}
	if c := s.ctxs[i].Load(); c != nil {
		return c, nil
	}
	s.ctxMu.Lock()
	defer s.ctxMu.Unlock()
	if c := s.ctxs[i].Load(); c != nil {
		return c, nil
	}
	ctx, err := s.drv.DevicePrimaryCtxRetain(s.devs[i])
	if err != nil {
		return nil, fmt.Errorf("%s(device %d): %w", s.v.sym("DevicePrimaryCtxRetain"), i, err)
	}
	c := &primaryCtx{ctx: ctx, args: []uintptr{ctx}}
	s.ctxs[i].Store(c)
	return c, nil
}

// setCurrent makes c current on the calling thread, which the caller has
// locked. Allocation-free.
func (s *state) setCurrent(c *primaryCtx) uintptr {
	r, _, _ := purego.SyscallN(s.drv.s.ctxSetCurrent, c.args...)
	return r
}

// Type is the vendor's device type.
func (b *Backend) Type() device.Type { return b.v.Type }

// Available is the true probe: the library loads, init returns success and
// there is at least one device. It loads on first use and never panics.
func (b *Backend) Available() probe.Result { return b.load().result }

// DeviceCount is the number of devices the driver shows (after
// CUDA_VISIBLE_DEVICES / MUSA_VISIBLE_DEVICES). Zero devices is (0, nil); a
// driver that could not be loaded or initialised is an error.
func (b *Backend) DeviceCount() (int, error) {
	s := b.load()
	if s.count >= 0 {
		return s.count, nil
	}
	return 0, b.unavail(s)
}

// Current is the backend's current device: 0 until SetCurrent.
func (b *Backend) Current() (int, error) {
	s := b.load()
	if s.err != nil {
		return -1, b.unavail(s)
	}
	return int(b.cur.Load()), nil
}

// SetCurrent makes device index the backend's current device and makes its
// primary context current on the calling OS thread.
func (b *Backend) SetCurrent(index int) error {
	s := b.load()
	if s.err != nil {
		return b.unavail(s)
	}
	ctx, err := s.context(index)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	r := s.setCurrent(ctx)
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return s.opErr("CtxSetCurrent", index, r)
	}
	b.cur.Store(int32(index))
	return nil
}

// Synchronize waits for all work on device index; a negative index means the
// current device.
func (b *Backend) Synchronize(index int) error {
	s := b.load()
	if s.err != nil {
		return b.unavail(s)
	}
	if index < 0 {
		index = int(b.cur.Load())
	}
	ctx, err := s.context(index)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	r := s.setCurrent(ctx)
	if result(r) != resultSuccess {
		runtime.UnlockOSThread()
		return s.opErr("CtxSetCurrent", index, r)
	}
	r = call0(s.drv.s.ctxSynchronize)
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return s.opErr("CtxSynchronize", index, r)
	}
	return nil
}

func (s *state) opErr(fn string, index int, r uintptr) error {
	return fmt.Errorf("%s(device %d): %w", s.v.sym(fn), index, s.drv.Err(result(r)))
}

// Properties describes device index.
func (b *Backend) Properties(index int) (device.Properties, error) {
	s := b.load()
	if s.err != nil {
		return device.Properties{}, b.unavail(s)
	}
	if err := s.device(index); err != nil {
		return device.Properties{}, err
	}
	d, dev := s.drv, s.devs[index]
	p := device.Properties{Vendor: b.v.VendorName}
	var err error
	wrap := func(fn string, e error) error { return fmt.Errorf("%s(device %d): %w", b.v.sym(fn), index, e) }
	if p.Name, err = d.DeviceGetName(dev); err != nil {
		return p, wrap("DeviceGetName", err)
	}
	if p.TotalMemory, err = d.DeviceTotalMem(dev); err != nil {
		return p, wrap("DeviceTotalMem", err)
	}
	for _, a := range []struct {
		attr int
		dst  *int
	}{
		{AttrComputeCapabilityMajor, &p.Major},
		{AttrComputeCapabilityMinor, &p.Minor},
		{AttrMultiprocessorCount, &p.MultiProcessors},
	} {
		if *a.dst, err = d.DeviceGetAttribute(a.attr, dev); err != nil {
			return p, wrap("DeviceGetAttribute", fmt.Errorf("attribute %d: %w", a.attr, err))
		}
	}
	uuid, ok, err := d.DeviceGetUuid(dev)
	if err != nil {
		return p, wrap("DeviceGetUuid", err)
	}
	if ok {
		p.UUID = FormatUUID(b.v.UUIDPrefix, uuid)
	}
	return p, nil
}

// DriverVersion is the driver's version, decoded with the vendor's encoding.
// It needs the library, not a working device.
func (b *Backend) DriverVersion() (major, minor int, err error) {
	s := b.load()
	if s.drv == nil || s.version == 0 {
		if s.err != nil {
			return 0, 0, b.unavail(s)
		}
		return 0, 0, fmt.Errorf("%w: %s did not report its version", b.v.Errors.NotSupported, s.path)
	}
	major, minor = DecodeVersion(s.version, b.v.VersionBase)
	return major, minor, nil
}

// PCIBusID is the PCI address the driver reports for device index
// ("00000000:18:00.0"). The symbol is optional: a library without it gives an
// error matching NotSupported.
func (b *Backend) PCIBusID(index int) (string, error) {
	s := b.load()
	if s.err != nil {
		return "", b.unavail(s)
	}
	if err := s.device(index); err != nil {
		return "", err
	}
	id, ok, err := s.drv.DeviceGetPCIBusId(s.devs[index])
	if !ok {
		return "", fmt.Errorf("%w: %s lacks %s", b.v.Errors.NotSupported, s.path, b.v.sym("DeviceGetPCIBusId"))
	}
	if err != nil {
		return "", fmt.Errorf("%s(device %d): %w", b.v.sym("DeviceGetPCIBusId"), index, err)
	}
	return id, nil
}

// MemInfo is the free and total memory of device index as its primary
// context sees them (cuMemGetInfo_v2): a second source for the total, next to
// Properties' cuDeviceTotalMem_v2.
func (b *Backend) MemInfo(index int) (free, total uint64, err error) {
	s := b.load()
	if s.err != nil {
		return 0, 0, b.unavail(s)
	}
	ctx, err := s.context(index)
	if err != nil {
		return 0, 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := s.drv.CtxSetCurrent(ctx.ctx); err != nil {
		return 0, 0, fmt.Errorf("%s(device %d): %w", b.v.sym("CtxSetCurrent"), index, err)
	}
	free, total, ok, err := s.drv.MemGetInfo()
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s lacks %s", b.v.Errors.NotSupported, s.path, b.v.sym("MemGetInfo_v2"))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s(device %d): %w", b.v.sym("MemGetInfo_v2"), index, err)
	}
	return free, total, nil
}

// Describe reports the library, the driver version, every load attempt and,
// in Extra: "devices", "reason", "available", the visible-devices variable
// when set, and the versioned symbols chosen.
func (b *Backend) Describe() device.Info {
	s := b.load()
	info := device.Info{Library: s.path, Extra: map[string]string{}}
	if s.version != 0 {
		info.DriverVersion = FormatVersion(s.version, b.v.VersionBase)
	}
	for _, a := range s.attempts {
		da := device.Attempt{Path: a.Path}
		if a.Err != nil {
			da.Error = a.Err.Error()
		}
		info.Attempts = append(info.Attempts, da)
	}
	info.Extra["available"] = strconv.FormatBool(s.err == nil)
	info.Extra["reason"] = s.result.Reason
	if s.count >= 0 {
		info.Extra["devices"] = strconv.Itoa(s.count)
	}
	if vis := b.getenv(b.v.VisibleEnv); vis != "" {
		info.Extra[b.v.VisibleEnv] = vis
	}
	if s.drv != nil {
		for k, name := range s.drv.s.found {
			info.Extra["symbol."+b.v.sym(k)] = name
		}
		if s.drv.s.deviceGetPCIBusId == 0 {
			info.Extra["missing."+b.v.sym("DeviceGetPCIBusId")] = "PCI bus ids not supported"
		}
		for _, m := range []struct {
			addr   uintptr
			suffix string
			what   string
		}{
			{s.drv.s.moduleLoadData | s.drv.s.moduleLoadDataEx, "ModuleLoadData", "modules not supported"},
			{s.drv.s.moduleGetFunction, "ModuleGetFunction", "module functions not supported"},
			{s.drv.s.launchKernel, "LaunchKernel", "launches not supported"},
			{s.drv.s.memAlloc, "MemAlloc_v2", "device memory not supported"},
		} {
			if m.addr == 0 {
				info.Extra["missing."+b.v.sym(m.suffix)] = m.what
			}
		}
	}
	return info
}

// Loaded reports whether the library has been looked for yet (for tests and
// diagnostics: it never triggers a load).
func (b *Backend) Loaded() bool { return b.st.Load() != nil }
