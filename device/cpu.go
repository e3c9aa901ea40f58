package device

import (
	"fmt"
	"runtime"

	"github.com/flagos-ai/flagshim/probe"
)

// cpuBackend is the host processor, always registered, one device.
type cpuBackend struct{}

func (cpuBackend) Type() Type { return CPU }

func (cpuBackend) Available() probe.Result {
	return probe.Result{Available: true, Devices: 1, Reason: "the host CPU is always available"}
}

func (cpuBackend) DeviceCount() (int, error) { return 1, nil }
func (cpuBackend) Current() (int, error)     { return 0, nil }

func (cpuBackend) SetCurrent(index int) error { return cpuIndex(index) }

func (cpuBackend) Synchronize(index int) error { return cpuIndex(index) }

// Properties describe the host: MultiProcessors counts its logical cores.
func (cpuBackend) Properties(index int) (Properties, error) {
	if err := cpuIndex(index); err != nil {
		return Properties{}, err
	}
	return Properties{
		Name:            fmt.Sprintf("host cpu (%s)", runtime.GOARCH),
		Vendor:          "host",
		MultiProcessors: runtime.NumCPU(),
	}, nil
}

// cpuIndex accepts 0 and -1 (the current device, which is 0).
func cpuIndex(index int) error {
	if index != 0 && index != -1 {
		return fmt.Errorf("%w: cpu:%d: cpu has one device, index 0 (or -1, the current device)", ErrInvalidIndex, index)
	}
	return nil
}
