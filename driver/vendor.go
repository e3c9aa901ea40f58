package driver

import (
	"fmt"
	"strconv"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/visible"

	"github.com/flagos-ai/flagshim/device"
)

// Vendor describes one driver API as data: what its library is called and
// where it lives, what each operation's C function is called (with versioned
// fallbacks), what its result codes mean, its attribute numbers and its
// context model. The core ([Backend]) is written once against this
// description; each vendor package (drivers/cuda, drivers/musa, ...) is
// nothing but a Vendor.
//
// A Vendor is read-only once a Backend uses it.
type Vendor struct {
	Type device.Type // the device type: device.CUDA
	Name string      // the vendor, for Properties.Vendor: "NVIDIA"
	// Names are what the FlagOS projects call the vendor (FlagOS's
	// vocabulary, FlagGems, FlagCX, FlagTree), each cited beside it;
	// device records carry them. Zero where Name covers several makers
	// that its Runtimes name apart (HIP's "AMD/Hygon").
	Names device.VendorNames

	Library clib.Library // where the driver library is (Nodes is read by the core)

	// Symbols names the C function of each operation, the preferred
	// (newest) name first: {OpDeviceTotalMem: {"cuDeviceTotalMem_v2",
	// "cuDeviceTotalMem"}}. An operation with no names is one the vendor
	// lacks. See [Op] for the C signature each operation must have and
	// which are required.
	Symbols map[Op][]string
	// Adapters call the operations whose C function has another shape than
	// the one Op documents (CUDA's): arguments in another order, a
	// different version encoding, an extra argument. An adapter gets the
	// resolved function and CUDA's arguments and returns the vendor's
	// result code; see Adapter. Operations without one are called as CUDA's.
	// An operation with an adapter and no Symbols is served by the adapter
	// alone, which must not call its (unresolved) function: an API whose
	// devices are their ordinals (AscendCL has no device handle) answers
	// OpDeviceGet that way.
	Adapters map[Op]Adapter
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
	// 10000 (30100 is 3.1); HIP: 10000000 (60140092 is 6.1). 0 says the
	// encoding is not known: the number is reported as it is
	// (FormatVersion gives "30503") and Backend.DriverVersion is an error
	// matching device.ErrNotSupported, rather than a guessed major.minor.
	VersionBase int
	// UUIDPrefix prefixes formatted UUIDs: "GPU-" as nvidia-smi writes them.
	UUIDPrefix string
	// UUIDForm is what OpDeviceUUID's 16 bytes hold: the UUID itself
	// (UUIDBinary, the zero value: CUDA's CUuuid) or its body's characters
	// (UUIDHexText: ROCm's hipDeviceGetUuid).
	UUIDForm UUIDForm
	// VisibleEnv names the variables the vendor runtime applies to hide
	// devices (CUDA_VISIBLE_DEVICES); the core only reports them.
	VisibleEnv []string
	// Visibility is how the vendor's runtime reads those variables (its
	// stages, dialect and order variable, each rule cited beside it): what
	// the presence tier applies to the devices it lists, and what
	// SelectEnv writes for a child. nil: the runtime's rules are not
	// known, and no child's environment can be written.
	Visibility *visible.Rules

	// Presence is the vendor's presence tier (FLAGOS_PROBE=presence): its
	// sources, most trusted first (a management library, then device
	// nodes), each asked without initializing the driver. nil: its
	// DeviceNodes alone.
	Presence func(e *presence.Env) []presence.Report
	// DeviceNodes are the vendor's per-device nodes (/dev/nvidiaN), the
	// presence tier's fallback where no management library answers.
	DeviceNodes presence.NodeSpec
	// Vars are the vendor's variables besides Library.EnvVar and
	// VisibleEnv (a management library's override), for settings, the
	// CLI's report and the documentation.
	Vars []Var
	// Auto is the vendor's place in FLAGOS_BACKEND=auto, lower first; 0
	// leaves it out of auto (FLAGOS_BACKEND=<type> still routes to it).
	// docs/architecture.md gives the built-in order and its reason.
	Auto int
	// PCIVendors are the PCI vendor ids of the vendor's accelerators
	// (NVIDIA's 0x10de), which sysfs shows without any driver: the
	// strongest fact of whose silicon a machine holds.
	PCIVendors []uint16
	// Runtimes are the makers whose runtimes answer this API, with the
	// facts that recognize each (see Runtime); the backend names the one
	// that answered in Properties.Vendor and Describe. Shared says that
	// runtimes of other makers answer it too (CUDA's driver API: a
	// CUDA-compatible libcuda.so.1): a maker is then named from facts only,
	// and is "unknown" when none says; otherwise the vendor's Name is the
	// answer when no fact says more.
	Runtimes []Runtime
	Shared   bool

	// NonBlockingStream is OpStreamCreate's flag for a stream that does
	// not wait for the legacy default stream (CU_STREAM_NON_BLOCKING,
	// hipStreamNonBlocking: 1), and EventNoTiming OpEventCreate's for an
	// event without timing (CU_EVENT_DISABLE_TIMING, hipEventDisableTiming:
	// 2). 0 says the vendor's number is not known: NewStreamWith and
	// NewEventWith then create default streams and events.
	NonBlockingStream uint32
	EventNoTiming     uint32

	// Container is what a container needs to use the vendor's devices:
	// its control nodes, each device's own nodes, the libraries besides
	// the driver's and the variable that selects devices by UUID (CDI
	// specs, package fleet/cdi). The zero value injects the driver library
	// and the DeviceNodes alone.
	Container Container
}

// Adapter calls fn, a vendor's function for an operation, given the
// arguments CUDA's function takes (Op's comment gives them) and returns the
// vendor's result code. It may reorder, drop or add arguments, and call fn
// with its own locals (through fn.CallCode, which keeps them alive) and
// write what CUDA's function would have written through the pointer
// arguments CUDA's shape has (they point to live Go memory for the whole
// call: use clib.Ptr to reach it). It must not keep any argument after it
// returns. The comment beside each adapter cites the vendor's prototype.
//
//	// cnModuleLoadFatBinary(const void *image, CNmodule *mod): cn_api.h, CNDrv 2.15
//	driver.OpModuleLoadData: func(fn *clib.Func, args ...uintptr) int {
//		return fn.CallCode(args[1], args[0])
//	},
type Adapter func(fn *clib.Func, args ...uintptr) int

// Var is an environment variable a vendor reads.
type Var struct {
	Name string
	Kind VarKind
	Doc  string // what it does, one line: "the absolute path of libnvidia-ml.so.1 ..."
}

// VarKind says how flagshim treats a variable.
type VarKind int

const (
	// VarLibraryPath: an absolute path of a library to open instead of
	// searching; Init refuses any other value.
	VarLibraryPath VarKind = iota
	// VarVisible: applied by the vendor's runtime to hide devices;
	// reported.
	VarVisible
	// VarOther: read by the vendor package; reported.
	VarOther
)

// Variables lists every variable of the vendor: Library.EnvVar (a library
// path), Vars, then VisibleEnv.
func (v *Vendor) Variables() []Var {
	var out []Var
	if v.Library.EnvVar != "" {
		out = append(out, Var{Name: v.Library.EnvVar, Kind: VarLibraryPath,
			Doc: "the absolute path of the " + v.Name + " driver library (" + v.Library.Sonames[0] + ") to open instead of searching"})
	}
	out = append(out, v.Vars...)
	for _, k := range v.VisibleEnv {
		out = append(out, Var{Name: k, Kind: VarVisible, Doc: "applied by the " + v.Name + " runtime to hide devices; reported"})
	}
	return out
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
	// DeviceContext: learn the context of the device once, by selecting it
	// (OpSetDevice(ordinal)) and reading the thread's context
	// (OpCtxGetCurrent), then make that context current before each call
	// (OpCtxSetCurrent(ctx)), as PrimaryContext does. For a runtime whose
	// device selection is too costly to repeat per call: AscendCL's
	// aclrtSetDevice takes a reference on the device's context each time
	// (torch_npu selects each device once and switches contexts after).
	DeviceContext
)

// Attributes are a vendor's numbers for the device attributes the core
// reads. A negative number says the vendor has no such attribute (or none
// whose number is confirmed): it is never asked for, and the property is
// left 0 (unknown); except that a vendor with an OpDeviceAttribute adapter
// is asked for every number, negative ones included, so that its adapter
// can answer properties its API spells otherwise (Kunlunxin's generation
// from XPUATTR_MODEL), or report device.ErrNotSupported: unknown.
type Attributes struct {
	MultiprocessorCount    int // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 16
	ComputeCapabilityMajor int // 75
	ComputeCapabilityMinor int // 76
	// DMABufSupported is the attribute that says whether a device exports
	// dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: 124). 0 says the
	// vendor has none (no API numbers it 0): Backend.DMABufSupported is then
	// an error matching device.ErrNotSupported.
	DMABufSupported int
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
	if n < 0 || !v.VersionKnown() {
		return 0, 0
	}
	base := v.VersionBase
	return n / base, n % base / (base / 100)
}

// VersionKnown reports whether VersionBase says how OpDriverVersion's
// number encodes a version (a positive multiple of 100).
func (v *Vendor) VersionKnown() bool {
	return v.VersionBase >= 100 && v.VersionBase%100 == 0
}

// FormatVersion is DecodeVersion as "major.minor"; the number itself
// ("30503") when the encoding is not known (VersionBase 0).
func (v *Vendor) FormatVersion(n int) string {
	if !v.VersionKnown() && n > 0 {
		return strconv.Itoa(n)
	}
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
	case v.Context != PrimaryContext && v.Context != CurrentDevice && v.Context != DeviceContext:
		return fmt.Errorf("driver: %s: unknown context model %d", v.Type, v.Context)
	case v.UUIDForm != UUIDBinary && v.UUIDForm != UUIDHexText:
		return fmt.Errorf("driver: %s: unknown UUID form %d (Vendor.UUIDForm is driver.UUIDBinary or driver.UUIDHexText)", v.Type, v.UUIDForm)
	}
	for _, op := range requiredOps(v) {
		if !v.binds(op) {
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
