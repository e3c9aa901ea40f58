package musa

import (
	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/gpudrv"
	"github.com/flagos-ai/flagshim/probe"
)

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBMUSA_PATH"

// VisibleDevicesEnv is applied by the driver itself; the backend only
// reports it (Describe().Extra).
const VisibleDevicesEnv = "MUSA_VISIBLE_DEVICES"

var errs = gpudrv.NewErrors("musa")

// Sentinels; test with errors.Is. An *Error matches them by its code.
var (
	ErrNotAvailable   = errs.NotAvailable   // no library, a required symbol missing, init failed or no device
	ErrNoDevice       = errs.NoDevice       // MUSA_ERROR_NO_DEVICE (100), or zero devices
	ErrStubLibrary    = errs.StubLibrary    // MUSA_ERROR_STUB_LIBRARY (34)
	ErrInvalidDevice  = errs.InvalidDevice  // MUSA_ERROR_INVALID_DEVICE (101), or an index out of range
	ErrNotFound       = errs.NotFound       // MUSA_ERROR_NOT_FOUND (500)
	ErrNotSupported   = errs.NotSupported   // MUSA_ERROR_NOT_SUPPORTED (801), or an optional symbol the library lacks
	ErrDriverMismatch = errs.DriverMismatch // MUSA_ERROR_INSUFFICIENT_DRIVER (35), MUSA_ERROR_SYSTEM_DRIVER_MISMATCH (803), MUSA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)
	ErrNotInitialized = errs.NotInitialized // MUSA_ERROR_NOT_INITIALIZED (3), MUSA_ERROR_DEINITIALIZED (4)
	ErrInvalidContext = errs.InvalidContext // MUSA_ERROR_INVALID_CONTEXT (201)
	ErrUnknown        = errs.Unknown        // MUSA_ERROR_UNKNOWN (999)
	ErrUnloaded       = errs.Unloaded       // a Module used after Unload
)

// Error is a result code of the driver API, with its name and the driver's
// message: "musa: MUSA_ERROR_NO_DEVICE (100): no MUSA-capable device is detected".
type Error = gpudrv.Error

var vendor = &gpudrv.Vendor{
	Type:        device.MUSA,
	Pkg:         "musa",
	VendorName:  "Moore Threads",
	SymPrefix:   "mu",
	ErrPrefix:   "MUSA_",
	VisibleEnv:  VisibleDevicesEnv,
	UUIDPrefix:  "",
	VersionBase: 10000,
	Spec:        defaultSpec(),
	Errors:      errs,
}

func defaultSpec() dl.Spec {
	return dl.Spec{
		Name:    "libmusa",
		EnvVar:  EnvVar,
		Sonames: []string{"libmusa.so.1", "libmusa.so"},
		Dirs:    []string{"/usr/local/musa/lib", "/usr/local/musa/lib64", "/opt/musa/lib*"},
	}
}

// Option configures New.
type Option func(*options)

type options struct {
	log   *zap.Logger
	spec  dl.Spec
	hooks *device.Hooks
	note  func() string
}

// WithLogger sets the logger; the default is zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithHooks sets the module hook registry applied to every module the
// backend loads; the default (and nil) is device.DefaultHooks.
func WithHooks(h *device.Hooks) Option { return func(o *options) { o.hooks = h } }

// WithUnavailableNote sets a function called whenever a call fails because
// MUSA is unavailable; a non-empty result is appended to that error's message
// as a sentence (Available().Reason is left alone). flagshim uses it to say
// that the cuda->flagos alias is off. It must be cheap and safe for
// concurrent use.
func WithUnavailableNote(f func() string) Option { return func(o *options) { o.note = f } }

// withSpec replaces where the library is looked for (tests).
func withSpec(s dl.Spec) Option { return func(o *options) { o.spec = s } }

// Backend is the MUSA driver as a device.Backend and device.Describer. Its
// methods are safe for concurrent use.
type Backend struct{ b *gpudrv.Backend }

var (
	_ device.Backend   = (*Backend)(nil)
	_ device.Describer = (*Backend)(nil)
)

// New returns a Backend. It does no I/O: the library is looked for on the
// first call of any method, once.
func New(opts ...Option) *Backend {
	o := options{log: zap.NewNop(), spec: defaultSpec()}
	for _, opt := range opts {
		opt(&o)
	}
	return &Backend{b: gpudrv.NewBackend(vendor, gpudrv.Config{Spec: o.spec, Log: o.log, Hooks: o.hooks, UnavailableNote: o.note})}
}

// Type is device.MUSA.
func (b *Backend) Type() device.Type { return device.MUSA }

// Available is the true (original) probe: the library loads, muInit(0)
// succeeds and there is at least one device. The first call loads the
// library (concurrent first callers share that one load); the outcome is
// cached. It never panics.
func (b *Backend) Available() probe.Result { return b.b.Available() }

// DeviceCount is the number of devices the driver shows (MUSA_VISIBLE_DEVICES applied by the
// driver). A driver that initialised with no devices gives (0, nil).
func (b *Backend) DeviceCount() (int, error) { return b.b.DeviceCount() }

// Current is the backend's current device, per process: 0 until SetCurrent.
// See the package documentation.
func (b *Backend) Current() (int, error) { return b.b.Current() }

// SetCurrent makes index the current device and makes its primary context
// current on the calling OS thread.
func (b *Backend) SetCurrent(index int) error { return b.b.SetCurrent(index) }

// Synchronize waits for the work on device index (-1: the current device).
func (b *Backend) Synchronize(index int) error { return b.b.Synchronize(index) }

// Properties describes device index.
func (b *Backend) Properties(index int) (device.Properties, error) { return b.b.Properties(index) }

// DriverVersion is the driver's version (encoded by the driver as major*10000 + minor*100: 30100 is 3.1).
func (b *Backend) DriverVersion() (major, minor int, err error) { return b.b.DriverVersion() }

// PCIBusID is the PCI address of device index as the driver writes it. The
// symbol is optional: a library without it gives an error matching
// ErrNotSupported.
func (b *Backend) PCIBusID(index int) (string, error) { return b.b.PCIBusID(index) }

// MemInfo is the free and total memory of device index seen from its
// primary context (muMemGetInfo_v2).
func (b *Backend) MemInfo(index int) (free, total uint64, err error) { return b.b.MemInfo(index) }

// Describe reports the library, the driver version, every load attempt and
// extra facts (devices, reason, MUSA_VISIBLE_DEVICES when set, versioned symbols chosen).
func (b *Backend) Describe() device.Info { return b.b.Describe() }

// Module is a module loaded by LoadModule on one device. It implements
// device.Module (Backend, Handle, Label, Global): hooks see this very
// pointer from load to Unload. See the package documentation, "Modules".
type Module = gpudrv.Module

// Function is a kernel of a Module, for Launch.
type Function = gpudrv.Function

// DevicePtr is an address in device memory.
type DevicePtr = gpudrv.DevicePtr

// MaxLaunchArgs is the most arguments Launch takes.
const MaxLaunchArgs = gpudrv.MaxLaunchArgs

// Hooks is the module hook registry the backend applies.
func (b *Backend) Hooks() *device.Hooks { return b.b.Hooks() }

// LoadModule loads a PTX (NUL appended when missing), cubin or fatbin image
// on device index (muModuleLoadDataEx, with the JIT's error log in the error
// on failure) and applies the backend's hooks. A failing or panicking hook
// fails this load only: its error names the hook, and the module is
// unloaded. label names the module in messages ("" gives "module#N").
func (b *Backend) LoadModule(index int, image []byte, label string) (*Module, error) {
	return b.b.LoadModule(index, image, label)
}

// Launch queues fn on device index's default stream (muLaunchKernel) and
// returns without waiting; kernel faults show at the next synchronizing
// call (CopyDtoH, Synchronize). args are DevicePtr, uintptr, int32, uint32,
// int64, uint64, float32 or float64, in the kernel's parameter order; they
// are copied into pinned memory for the call, and no Go pointer outlives it.
func (b *Backend) Launch(index int, fn Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	return b.b.Launch(index, fn, grid, block, sharedMem, args...)
}

// Alloc allocates n bytes on device index (muMemAlloc_v2).
func (b *Backend) Alloc(index int, n uint64) (DevicePtr, error) { return b.b.Alloc(index, n) }

// Free frees memory Alloc returned (muMemFree_v2).
func (b *Backend) Free(index int, p DevicePtr) error { return b.b.Free(index, p) }

// CopyHtoD copies src into device memory at dst (muMemcpyHtoD_v2).
func (b *Backend) CopyHtoD(index int, dst DevicePtr, src []byte) error {
	return b.b.CopyHtoD(index, dst, src)
}

// CopyDtoH copies device memory at src into dst (muMemcpyDtoH_v2), after
// the work queued before it on the default stream.
func (b *Backend) CopyDtoH(index int, dst []byte, src DevicePtr) error {
	return b.b.CopyDtoH(index, dst, src)
}
