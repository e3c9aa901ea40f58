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
type Backend interface {
	Type() Type
	Available() probe.Result
	DeviceCount() (int, error)
	Current() (int, error)
	SetCurrent(index int) error
	Synchronize(index int) error
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
	Extra         map[string]string
}

// Attempt is one try at opening a library.
type Attempt struct {
	Path  string // what was passed to dlopen, or the candidate that was skipped
	Error string // "" when it opened
}
