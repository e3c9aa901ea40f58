package presence

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/visible"
)

// SourceNodes is Report.Source for an answer from device nodes alone.
// Other sources are named by the vendor package that binds them ("nvml",
// "mtml", "kfd", ...).
const SourceNodes = "device nodes"

// Errors wrapped by Report.Err and by the visibility functions; test them
// with errors.Is.
var (
	// ErrNoLibrary: the management library was not found anywhere searched.
	ErrNoLibrary = errors.New("presence: management library not found")
	// ErrBadOverride: the override variable names a relative path, a file
	// others may write to, or a file the loader cannot open.
	ErrBadOverride = errors.New("presence: override path refused")
	// ErrMissingSymbol: the library lacks a function this tier needs.
	ErrMissingSymbol = clib.ErrMissingSymbol
	// ErrInit: the library's own init failed (the *clib.Error says why).
	ErrInit = errors.New("presence: management library init failed")
	// ErrQuery: a query every answer needs (the device count, a device
	// handle) failed after init.
	ErrQuery = errors.New("presence: management library query failed")
	// ErrTooManyDevices: a source reported more devices than
	// device.MaxDevices; nothing was allocated for them.
	ErrTooManyDevices = errors.New("presence: implausible device count")
	// ErrNoDeviceNode: the devices are listed but the node the runtime
	// opens is missing (a container started without the device).
	ErrNoDeviceNode = errors.New("presence: device node missing")
	// ErrUndecidable: the visibility variable names devices this tier
	// cannot resolve without the driver (MIG instances, or UUIDs where the
	// source knows none).
	ErrUndecidable = visible.ErrUndecidable
	// ErrPanic: a call panicked; the panic is in the message.
	ErrPanic = errors.New("presence: internal panic")
	// ErrImplausible: a value a library answered breaks an invariant
	// (more memory free than there is, a size whose bytes overflow 64
	// bits): it is left unknown, with a note.
	ErrImplausible = errors.New("presence: implausible value")
)

// Report is the answer of one source.
type Report struct {
	Source        string           // "nvml", "mtml", "kfd", SourceNodes, ...
	Library       string           // the file opened, or the folder read; "" when none
	Attempts      []device.Attempt // every library path tried, in order
	DriverVersion string           // as the source says it: "550.54.15"; "" when unknown
	CUDAVersion   int              // NVML only: the CUDA driver API version, 12040 for 12.4; 0 unknown
	Total         int              // devices the source sees, before the visibility variable
	Visibility    string           // the variable applied, "CUDA_VISIBLE_DEVICES=0,1"; "" when none was set
	Devices       []Device         // the visible devices, in the runtime's order
	All           []Device         // every device the source lists, in its order, before the visibility variables
	Notes         []string         // what did not answer, one line each (a device's name, ...)
	// Indexed says SourceIndex is the index the vendor's own tool gives
	// each device (a management library's: NVML's index is nvidia-smi's),
	// which device records report as the physical index. Query sets it.
	Indexed bool
	Reason  string // one sentence: what was found, or why nothing was
	Err     error  // nil when the source answered (even with zero devices)
}

// Device is one device as the source describes it.
type Device struct {
	Index       int    // the ordinal the runtime will give it (after the visibility variable)
	SourceIndex int    // the source's own index: NVML/MTML index, KFD node id, device node number
	Name        string // "NVIDIA H100 80GB HBM3"; "" when unknown
	UUID        string // in the vendor's form: NVML "GPU-...", MTML "xxxxxxxx-...", KFD "GPU-<16 hex>"
	PCIBusID    string // in the vendor's form; "" when unknown
	Node        string // the device node (SourceNodes only): "/dev/nvidia0"
	// TotalMemory is the memory the runtime can allocate, in bytes (the
	// driver's total: cuDeviceTotalMem): the source's total less what the
	// driver and firmware reserve where the source tells that apart
	// (ReservedKnown), else the source's total; 0 when unknown.
	TotalMemory uint64
	FreeMemory  uint64 // bytes; 0 when unknown
	// ReservedMemory is what the driver and firmware reserve, in bytes,
	// which TotalMemory leaves out (NVML's nvmlMemory_v2_t.reserved:
	// nvidia-smi's memory.total is TotalMemory + ReservedMemory); known
	// only where ReservedKnown.
	ReservedMemory uint64
	ReservedKnown  bool
	Major, Minor   int // compute capability (NVML), gfx major/minor (KFD); 0 when unknown
	// Parent is the UUID of the device a partition (a MIG instance) is
	// carved from; "" for a whole device.
	Parent string
	// Partitioned says the device is split into partitions (a GPU in MIG
	// mode): its runtime sees the partitions, listed after it, not itself.
	Partitioned bool
	// PartitionsListed says the source lists the device's partitions, if
	// any (NVML's MIG calls answered for it).
	PartitionsListed bool
}

// Available reports whether the source answered and sees a visible device.
func (r Report) Available() bool { return r.Err == nil && len(r.Devices) > 0 }

// Env is what a presence source reads: the environment, the filesystem
// root under which /dev and /sys are read, the logger, and (tests only) a
// replacement of a management library's search. Build one with NewEnv;
// its methods are the helpers vendor bindings share.
type Env struct {
	lookupEnv func(string) (string, bool)
	root      string
	log       *zap.Logger
	search    func(*clib.Library)
	// noShutdown: WithoutShutdown.
	noShutdown bool
	// progress: WithProgress.
	progress func(step string)
}

// Option configures NewEnv.
type Option func(*Env)

// WithLookupEnv sets how variables are read (default os.LookupEnv). It tells
// unset from empty because the visibility variables do: CUDA_VISIBLE_DEVICES
// unset means every device, set and empty means none.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(e *Env) { e.lookupEnv = f }
}

// WithRoot sets the filesystem root under which /dev and /sys are read
// (default "/"), for tests and chroots. Libraries are searched as usual.
func WithRoot(dir string) Option { return func(e *Env) { e.root = dir } }

// WithLogger sets the logger (default: none). Each step logs at debug level.
func WithLogger(l *zap.Logger) Option { return func(e *Env) { e.log = l } }

// WithSearch lets f change a management library's search (its sonames and
// folders; never its override), so that a machine's real library cannot
// answer for a test's fake. For tests.
func WithSearch(f func(*clib.Library)) Option { return func(e *Env) { e.search = f } }

// WithoutShutdown leaves each management library initialized after its
// query instead of calling its shutdown, for a process that asks once and
// exits soon after (the CLI): the exit releases the session, and the
// shutdown is time the user waits for (nvmlShutdown: about 3 ms of the 30
// that flagshim list takes on an H100). The library's next query in the
// process, in any Env, ends the session left open before it starts its
// own, so that no more than one is ever open.
func WithoutShutdown() Option { return func(e *Env) { e.noShutdown = true } }

// NewEnv returns the Env of opts: os.LookupEnv, the root "/", no logger.
func NewEnv(opts ...Option) *Env {
	e := &Env{lookupEnv: os.LookupEnv, root: "/", log: zap.NewNop()}
	for _, o := range opts {
		if o != nil {
			o(e)
		}
	}
	if e.lookupEnv == nil {
		e.lookupEnv = os.LookupEnv
	}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	if e.root == "" {
		e.root = "/"
	}
	return e
}

// WithProgress returns a copy of e whose sources report each step they
// are about to take ("NVML: init", "NVML: device 1") to f, so that a
// caller that stops waiting for a library that hangs can say where it
// hung (the driver core bounds the presence tier by its init timeout). f
// must be cheap and safe for concurrent use.
func (e *Env) WithProgress(f func(step string)) *Env {
	c := *e
	c.progress = f
	return &c
}

// Step reports that a source is about to take step (see WithProgress).
func (e *Env) Step(step string) {
	if e.progress != nil {
		e.progress(step)
	}
}

// Lookup reads a variable, telling unset from empty.
func (e *Env) Lookup(k string) (string, bool) { return e.lookupEnv(k) }

// Getenv reads a variable; "" when unset.
func (e *Env) Getenv(k string) string {
	v, _ := e.lookupEnv(k)
	return v
}

// Log is the logger.
func (e *Env) Log() *zap.Logger { return e.log }

// Path is p ("/dev/kfd") under the root.
func (e *Env) Path(p string) string { return filepath.Join(e.root, p) }

// Guard turns a panic of a source into its Report's error, so no input
// makes a source panic its caller: defer presence.Guard(&r).
func Guard(r *Report) {
	if p := recover(); p != nil {
		r.Devices = nil
		r.Err = fmt.Errorf("%w: %v", ErrPanic, p)
		r.Reason = fmt.Sprintf("%s: internal error: %v", r.Source, p)
	}
}

// CheckCount refuses a count above device.MaxDevices, before anything is
// allocated for it: the error for r (ErrTooManyDevices) naming fn.
func CheckCount(r *Report, what, fn string, n uint64) bool {
	if n <= device.MaxDevices {
		return true
	}
	r.Err = fmt.Errorf("%w: %s reported %d devices", ErrTooManyDevices, fn, n)
	r.Reason = fmt.Sprintf("%s: %s reported %d devices, more than the %d flagshim accepts: the library is broken", what, fn, n, device.MaxDevices)
	return false
}

// MB is n megabytes (MiB, as the management libraries count) in bytes;
// an error matching ErrImplausible, naming what, when they do not fit in
// 64 bits (2^62 MB once became 0 bytes).
func MB(n uint64, what string) (uint64, error) {
	if n > math.MaxUint64>>20 {
		return 0, fmt.Errorf("%w: %s is %d MB, more bytes than 64 bits hold: left unknown", ErrImplausible, what, n)
	}
	return n << 20, nil
}

// Plausible leaves unknown (0) what in d breaks an invariant every answer
// keeps (free memory within the total, a compute capability that is not
// negative) and says what it left out, one sentence each: no source's
// device carries an impossible value, whatever its library answered.
func Plausible(d *Device) []string {
	var out []string
	if d.TotalMemory != 0 && d.FreeMemory > d.TotalMemory {
		out = append(out, fmt.Sprintf("%v: %d bytes free of %d: free memory left unknown", ErrImplausible, d.FreeMemory, d.TotalMemory))
		d.FreeMemory = 0
	}
	if d.Major < 0 || d.Minor < 0 {
		out = append(out, fmt.Sprintf("%v: compute capability %d.%d: left unknown", ErrImplausible, d.Major, d.Minor))
		d.Major, d.Minor = 0, 0
	}
	return out
}

// Visibility formats the variable that was applied: "" when it is unset.
func Visibility(name, value string, set bool) string {
	if !set {
		return ""
	}
	return name + "=" + value
}

// CountReason is the sentence of a source that answered.
func CountReason(what string, total, visible int, vis string) string {
	switch {
	case total == 0:
		return what + " sees no device"
	case vis == "" || visible == total:
		return fmt.Sprintf("%s sees %d device%s", what, total, Plural(total))
	default:
		return fmt.Sprintf("%s sees %d device%s, %d visible through %s", what, total, Plural(total), visible, vis)
	}
}

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
