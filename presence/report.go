package presence

import (
	"errors"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
)

// Sources: the value of Report.Source.
const (
	SourceNVML  = "nvml"         // NVIDIA Management Library
	SourceMTML  = "mtml"         // Moore Threads Management Library
	SourceKFD   = "kfd"          // the amdgpu kernel driver's KFD topology in sysfs
	SourceNodes = "device nodes" // character devices under /dev
)

// The override variables of the management libraries: an absolute path to
// open instead of searching; a relative path is an error.
const (
	NVMLEnvVar = "FLAGOS_LIBNVML_PATH"
	MTMLEnvVar = "FLAGOS_LIBMTML_PATH"
)

// The visibility variables each source applies (see Visible and VisibleHIP).
const (
	CUDAVisibleEnv = "CUDA_VISIBLE_DEVICES"
	MUSAVisibleEnv = "MUSA_VISIBLE_DEVICES"
	HIPVisibleEnv  = "HIP_VISIBLE_DEVICES"
	ROCRVisibleEnv = "ROCR_VISIBLE_DEVICES"
)

// Errors wrapped by Report.Err and by Visible; test them with errors.Is.
var (
	// ErrNoLibrary: the management library was not found anywhere searched.
	ErrNoLibrary = errors.New("presence: management library not found")
	// ErrBadOverride: the override variable names a relative path, a file
	// others may write to, or a file the loader cannot open.
	ErrBadOverride = errors.New("presence: override path refused")
	// ErrMissingSymbol: the library lacks a function this tier needs.
	ErrMissingSymbol = errors.New("presence: required function missing from the library")
	// ErrInit: the library's own init failed (the *Error says why).
	ErrInit = errors.New("presence: management library init failed")
	// ErrQuery: a query every answer needs (the device count, a device
	// handle) failed after init.
	ErrQuery = errors.New("presence: management library query failed")
	// ErrNoTopology: the KFD topology is not in sysfs (no amdgpu driver).
	ErrNoTopology = errors.New("presence: no KFD topology")
	// ErrNoDeviceNode: the devices are listed but the node the runtime
	// opens is missing (a container started without the device).
	ErrNoDeviceNode = errors.New("presence: device node missing")
	// ErrUndecidable: the visibility variable names devices this tier
	// cannot resolve without the driver (MIG instances, or UUIDs where the
	// source knows none).
	ErrUndecidable = errors.New("presence: visibility cannot be decided without the driver")
	// ErrPanic: a call panicked; the panic is in the message.
	ErrPanic = errors.New("presence: internal panic")
)

// Report is the answer of one source.
type Report struct {
	Source        string           // SourceNVML, SourceMTML, SourceKFD, SourceNodes
	Library       string           // the file opened, or the folder read; "" when none
	Attempts      []device.Attempt // every library path tried, in order
	DriverVersion string           // as the source says it: "550.54.15"; "" when unknown
	CUDAVersion   int              // NVML only: the CUDA driver API version, 12040 for 12.4; 0 unknown
	Total         int              // devices the source sees, before the visibility variable
	Visibility    string           // the variable applied, "CUDA_VISIBLE_DEVICES=0,1"; "" when none was set
	Devices       []Device         // the visible devices, in the runtime's order
	Notes         []string         // what did not answer, one line each (a device's name, ...)
	Reason        string           // one sentence: what was found, or why nothing was
	Err           error            // nil when the source answered (even with zero devices)
}

// Device is one device as the source describes it.
type Device struct {
	Index        int    // the ordinal the runtime will give it (after the visibility variable)
	SourceIndex  int    // the source's own index: NVML/MTML index, KFD node id, device node number
	Name         string // "NVIDIA H100 80GB HBM3"; "" when unknown
	UUID         string // in the vendor's form: NVML "GPU-...", MTML "xxxxxxxx-...", KFD "GPU-<16 hex>"
	PCIBusID     string // in the vendor's form; "" when unknown
	Node         string // the device node (SourceNodes only): "/dev/nvidia0"
	TotalMemory  uint64 // bytes; 0 when unknown
	FreeMemory   uint64 // bytes; 0 when unknown
	Major, Minor int    // compute capability (NVML), gfx major/minor (KFD); 0 when unknown
}

// Available reports whether the source answered and sees a visible device.
func (r Report) Available() bool { return r.Err == nil && len(r.Devices) > 0 }

// Option configures one call.
type Option func(*config)

type config struct {
	lookupEnv func(string) (string, bool)
	root      string
	log       *zap.Logger
	spec      func(*specEdit) // tests only: change the library search
}

// WithLookupEnv sets how variables are read (default os.LookupEnv). It tells
// unset from empty because the visibility variables do: CUDA_VISIBLE_DEVICES
// unset means every device, set and empty means none.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(c *config) { c.lookupEnv = f }
}

// WithRoot sets the filesystem root under which /dev and /sys are read
// (default "/"), for tests and chroots. Libraries are searched as usual.
func WithRoot(dir string) Option { return func(c *config) { c.root = dir } }

// WithLogger sets the logger (default: none). Each step logs at debug level.
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.log = l } }

func newConfig(opts []Option) *config {
	c := &config{lookupEnv: os.LookupEnv, root: "/", log: zap.NewNop()}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.lookupEnv == nil {
		c.lookupEnv = os.LookupEnv
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.root == "" {
		c.root = "/"
	}
	return c
}

func (c *config) getenv(k string) string {
	v, _ := c.lookupEnv(k)
	return v
}

// guard turns a panic of the call into a Report error, so no input makes a
// source panic its caller.
func guard(r *Report) {
	if p := recover(); p != nil {
		r.Devices = nil
		r.Err = fmt.Errorf("%w: %v", ErrPanic, p)
		r.Reason = fmt.Sprintf("%s: internal error: %v", r.Source, p)
	}
}

// visibility formats the variable that was applied.
func visibility(name, value string, set bool) string {
	if !set {
		return ""
	}
	return name + "=" + value
}

// countReason is the sentence of a source that answered.
func countReason(what string, total, visible int, vis string) string {
	switch {
	case total == 0:
		return what + " sees no device"
	case vis == "" || visible == total:
		return fmt.Sprintf("%s sees %d device%s", what, total, plural(total))
	default:
		return fmt.Sprintf("%s sees %d device%s, %d visible through %s", what, total, plural(total), visible, vis)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
