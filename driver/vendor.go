package driver

import (
	"fmt"
	"strconv"

	"github.com/flagos-ai/flagshim/device"
)

// Vendor describes one driver API as data: what its library is called and
// where it lives, what each operation's C function is called (with versioned
// fallbacks), what its result codes mean, its attribute numbers and its
// context model. The core ([Backend]) is written once against this
// description; drivers/cuda, drivers/musa and drivers/hip are nothing but a
// Vendor each.
//
// A Vendor is read-only once a Backend uses it.
type Vendor struct {
	Type device.Type // the device type: device.CUDA
	Name string      // the vendor, for Properties.Vendor: "NVIDIA"

	Library Library // where the driver library is

	// Symbols names the C function of each operation, the preferred
	// (newest) name first: {OpDeviceTotalMem: {"cuDeviceTotalMem_v2",
	// "cuDeviceTotalMem"}}. An operation with no names is one the vendor
	// lacks. See [Op] for the C signature each operation must have and
	// which are required.
	Symbols map[Op][]string
	// Narrow lists the names of Symbols whose sizes and addresses are 32-bit
	// (the unversioned legacy CUDA functions such as cuMemAlloc, before
	// cuMemAlloc_v2); results through them are masked to 32 bits and sizes
	// above 4 GiB are refused.
	Narrow []string

	// Results gives each result code its name and the sentinels it matches.
	// Codes it lacks are named "<ErrorPrefix>ERROR_UNKNOWN_CODE_<n>" unless
	// the library names them itself (OpErrorName).
	Results map[int]Result
	// ErrorPrefix prefixes generated names: "CUDA_".
	ErrorPrefix string
	// ErrorText says how OpErrorName and OpErrorString return their text.
	ErrorText ErrorTextStyle

	// Attributes are the numbers OpDeviceAttribute takes.
	Attributes Attributes
	// OrdinalArgs lists the device operations whose device argument is the
	// ordinal rather than the handle OpDeviceGet returned (HIP's
	// hipDeviceGetAttribute takes an int deviceId).
	OrdinalArgs []Op
	// Context is how a device's context is made current on a thread.
	Context ContextModel
	// JIT are the option numbers that give OpModuleLoadDataEx an error-log
	// buffer; zero values mean the vendor has none and the Ex form is
	// called without options.
	JIT JITOptions

	// VersionBase decodes OpDriverVersion's number: major = v / base,
	// minor = v % base / (base / 100). CUDA: 1000 (13000 is 13.0); MUSA:
	// 10000 (30100 is 3.1); HIP: 10000000 (60140092 is 6.1).
	VersionBase int
	// UUIDPrefix prefixes formatted UUIDs: "GPU-" as nvidia-smi writes them.
	UUIDPrefix string
	// VisibleEnv names the variables the vendor runtime applies to hide
	// devices (CUDA_VISIBLE_DEVICES); the core only reports them.
	VisibleEnv []string
}

// Library says what the driver library is called and where to look for it.
// The search is the loader's: the override variable (an absolute path, no
// fallback), then each soname as the dynamic loader would resolve it, then
// the well-known folders, skipping anything others can write; see
// docs/security.md.
type Library struct {
	Name    string   // for messages: "libcuda"
	EnvVar  string   // the override variable: FLAGOS_LIBCUDA_PATH
	Sonames []string // "libcuda.so.1", "libcuda.so"
	Dirs    []string // absolute folders, in order; filepath.Glob patterns allowed
	// Nodes are the device nodes without which the runtime finds no device
	// (HIP: "/dev/kfd", which every ROCm and DTK process opens). When the
	// library would come from the search and none of them is a character
	// device, it is not loaded: its init could only report no device, and
	// loading it costs tens of milliseconds (libamdhip64 pulls in the HSA
	// runtime and LLVM). An override (EnvVar) is always loaded. Empty: no
	// such rule.
	Nodes []string
}

// Result is what one result code means.
type Result struct {
	Name string  // "CUDA_ERROR_OUT_OF_MEMORY"
	Is   []error // the sentinels an *Error of this code matches: device.ErrOutOfMemory
}

// ErrorTextStyle is the shape of a vendor's error-text functions.
type ErrorTextStyle int

const (
	// ErrorTextOut: CUresult cuGetErrorName(CUresult, const char **out).
	ErrorTextOut ErrorTextStyle = iota
	// ErrorTextReturned: const char *hipGetErrorName(hipError_t).
	ErrorTextReturned
)

// ContextModel is how a vendor makes a device current on an OS thread.
type ContextModel int

const (
	// PrimaryContext: retain the device's primary context once
	// (OpPrimaryCtxRetain) and make it current before each call
	// (OpCtxSetCurrent(ctx)). CUDA and MUSA.
	PrimaryContext ContextModel = iota
	// CurrentDevice: select the device before each call
	// (OpSetDevice(ordinal)); the runtime owns the context. HIP.
	CurrentDevice
)

// Attributes are a vendor's numbers for the device attributes the core
// reads.
type Attributes struct {
	MultiprocessorCount    int // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 16
	ComputeCapabilityMajor int // 75
	ComputeCapabilityMinor int // 76
}

// JITOptions are the option numbers of an error-log buffer for
// OpModuleLoadDataEx (CU_JIT_ERROR_LOG_BUFFER 5 and
// CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6).
type JITOptions struct {
	ErrorLogBuffer, ErrorLogBufferSize int32
}

// DecodeVersion splits a driver version number with the vendor's base;
// 0, 0 for a negative number or a base that is not a multiple of 100.
func (v *Vendor) DecodeVersion(n int) (major, minor int) {
	base := v.VersionBase
	if n < 0 || base < 100 || base%100 != 0 {
		return 0, 0
	}
	return n / base, n % base / (base / 100)
}

// FormatVersion is DecodeVersion as "major.minor".
func (v *Vendor) FormatVersion(n int) string {
	major, minor := v.DecodeVersion(n)
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

// ResultName names a result code: the vendor's table, else a generated name.
func (v *Vendor) ResultName(code int) string {
	if r, ok := v.Results[code]; ok && r.Name != "" {
		return r.Name
	}
	return v.ErrorPrefix + "ERROR_UNKNOWN_CODE_" + strconv.Itoa(code)
}

// Validate reports what makes v unusable: a missing type or library name, a
// required operation without a name, an unknown context model.
func (v *Vendor) Validate() error {
	switch {
	case v == nil:
		return fmt.Errorf("driver: nil Vendor")
	case !device.ValidType(v.Type):
		return fmt.Errorf("driver: Vendor.Type %q is not a device type name", v.Type)
	case v.Library.Name == "" || len(v.Library.Sonames) == 0:
		return fmt.Errorf("driver: %s: Vendor.Library needs a name and at least one soname", v.Type)
	case v.Context != PrimaryContext && v.Context != CurrentDevice:
		return fmt.Errorf("driver: %s: unknown context model %d", v.Type, v.Context)
	}
	for _, op := range requiredOps(v.Context) {
		if len(v.Symbols[op]) == 0 {
			return fmt.Errorf("driver: %s: the required operation %s has no symbol name", v.Type, op)
		}
	}
	return nil
}

func (v *Vendor) narrow(name string) bool {
	for _, n := range v.Narrow {
		if n == name {
			return true
		}
	}
	return false
}

func (v *Vendor) takesOrdinal(op Op) bool {
	for _, o := range v.OrdinalArgs {
		if o == op {
			return true
		}
	}
	return false
}

func (v *Vendor) visible(getenv func(string) string) (name, value string) {
	for _, k := range v.VisibleEnv {
		if val := getenv(k); val != "" {
			return k, val
		}
	}
	return "", ""
}
