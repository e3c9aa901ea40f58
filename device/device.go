package device

import (
	"strconv"

	"github.com/flagos-ai/flagshim/probe"
)

// Type names a kind of device: a vendor runtime or the virtual flagos device.
type Type string

// The device types flagshim knows by name. Other backends may register other
// lowercase names.
const (
	CPU    Type = "cpu"
	CUDA   Type = "cuda"
	MUSA   Type = "musa"
	HIP    Type = "hip" // AMD ROCm and Hygon DCU
	FlagOS Type = "flagos"
)

// Device is one parsed device string.
type Device struct {
	Type  Type
	Index int // -1: none given (the current device)
}

// String gives the canonical device string, "cuda" or "flagos:1". Parse of
// the result gives d back.
func (d Device) String() string {
	if d.Index < 0 {
		return string(d.Type)
	}
	return string(d.Type) + ":" + strconv.Itoa(d.Index)
}

// Properties describe one device.
type Properties struct {
	Name, Vendor, UUID string
	TotalMemory        uint64
	Major, Minor       int // compute capability
	MultiProcessors    int
}

// Backend is one runtime that can run work: a vendor driver, the virtual
// flagos device, or the built-in cpu.
//
// Device indexes. Every method that takes a device index (here and in the
// optional interfaces Memory, Compute and Streams) reads -1 as "the current
// device", the one Current returns, and 0..DeviceCount()-1 as that device.
// Any other index is an error matching ErrInvalidIndex that names the valid
// range. Errors match the vendor-neutral sentinels of this package
// (ErrNotAvailable, ErrInvalidIndex, ErrOutOfMemory, ...) whatever the
// backend.
//
// Optional capabilities are separate interfaces, as database/sql/driver's
// are: Describer, Memory, Compute, Streams. Ask with a type assertion or
// with MemoryOf, ComputeOf and StreamsOf.
type Backend interface {
	// Type is the backend's device type.
	Type() Type
	// Available is the backend's own (original) probe.
	Available() probe.Result
	// DeviceCount is the number of devices the backend sees.
	DeviceCount() (int, error)
	// Current is the current device's index: 0 until SetCurrent.
	Current() (int, error)
	// SetCurrent makes index the current device (-1 leaves it as it is).
	SetCurrent(index int) error
	// Synchronize waits for all work queued on device index.
	Synchronize(index int) error
	// Properties describes device index.
	Properties(index int) (Properties, error)
}

// Describer is implemented by backends that can say where they came from:
// which library was opened, which driver version answered and every load
// attempt on the way. The CLI and flagshim's report use it; it is optional.
type Describer interface {
	Describe() Info
}

// Info is what a Describer reports.
type Info struct {
	Library       string    // the path that was opened; "" when none
	DriverVersion string    // "13.0", "" when unknown
	Attempts      []Attempt // every path tried, in order
	RoutesTo      Type      // for virtual backends: the backend that answers; "" otherwise
	// Vendor is whose runtime answered: "NVIDIA", or the maker of a
	// runtime compatible with the backend's API ("Iluvatar CoreX" behind a
	// libcuda.so.1), "unknown" when no fact says; VendorFacts are the
	// facts it rests on. "" where the backend does not say.
	Vendor      string
	VendorFacts []string
	Extra       map[string]string
}

// Attempt is one try at opening a library.
type Attempt struct {
	Path  string // what was passed to dlopen, or the candidate that was skipped
	Error string // "" when it opened
}

// MaxDevices is the most devices flagshim accepts from any source: a
// driver, a management library, a probe child, device nodes. A count above
// it is a broken (or hostile) library's, refused before anything is
// allocated for it.
const MaxDevices = 4096
