package tier

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// EnvVar selects the tier: FLAGOS_PROBE.
const EnvVar = "FLAGOS_PROBE"

// Tier names where a backend's probe answer comes from.
type Tier string

// The probe tiers (FLAGOS_PROBE).
const (
	// Exact: the driver is initialized in the process (cuInit); the answer
	// is the driver's own.
	Exact Tier = "exact"
	// Presence: management libraries (NVML, MTML, ...), device nodes and
	// the driver library found but not opened; no driver is initialized in
	// the process, so a process that forks afterwards keeps a working
	// child.
	Presence Tier = "presence"
	// Isolated: the exact answer, computed in a child process, so a
	// driver that crashes or hangs in init cannot take the process down.
	Isolated Tier = "isolated"
)

// Parse reads a FLAGOS_PROBE value (surrounding spaces ignored); "" is def.
func Parse(s string, def Tier) (Tier, error) {
	switch t := Tier(strings.TrimSpace(s)); t {
	case "":
		return def, nil
	case Exact, Presence, Isolated:
		return t, nil
	}
	return "", fmt.Errorf("%s=%q: accepted values are exact (initialize the driver in this process), presence (management libraries and device nodes; no driver init) and isolated (the exact answer from a child process)", EnvVar, s)
}

// Facts is a probe answer obtained without initializing the driver in this
// process: by the presence tier in this process, or by the exact tier in a
// child process (isolated). Devices are numbered as the runtime will number
// them (after the visible-devices variable).
type Facts struct {
	Tier       Tier
	Result     probe.Result
	Devices    []device.Properties
	PCIBusIDs  []string // by device; "" when unknown
	FreeMemory []uint64 // by device; 0 when unknown
	// ReservedMemory is, by device, what its driver and firmware reserve
	// in bytes, which Devices' TotalMemory (the runtime's total) leaves
	// out: a management library's answer (NVML's
	// nvmlDeviceGetMemoryInfo_v2); -1 unknown; nil when the tier asked
	// none.
	ReservedMemory []int64
	Library        string
	DriverVersion  string
	Attempts       []device.Attempt
	Extra          map[string]string
	// Vendor is whose runtime answered ("NVIDIA", "Iluvatar CoreX",
	// "unknown") and VendorFacts the facts that say so (each device's PCI
	// vendor id, the library's real path, ...).
	Vendor      string
	VendorFacts []string
	// Indexes are, by device, the source's own index of it where the
	// source numbers devices as the vendor's tool does (NVML's index is
	// nvidia-smi's); -1 unknown; nil when the tier read none.
	Indexes []int
	// Parents are, by device, the UUID of the device a partition (a MIG
	// instance) is carved from; "" for a whole device; nil when the tier
	// read none.
	Parents []string
	// APIVersion is the driver API's version ("12.4") where a presence
	// source tells it (NVML's CUDA driver version); "" unknown. In the
	// exact tier DriverVersion is that already.
	APIVersion string
	// Source is the presence source that answered ("nvml", "device
	// nodes"); "" in the exact tier.
	Source string
}

// Check reports what makes f impossible, as the exact tier would refuse
// it: a device count that disagrees with the devices listed or exceeds
// device.MaxDevices, per-device lists of another length, an available
// answer without devices. An isolated probe's child is another process,
// so its answer is checked before it is believed.
func (f *Facts) Check() error {
	n := len(f.Devices)
	switch {
	case f.Result.Devices < 0 || f.Result.Devices > device.MaxDevices:
		return fmt.Errorf("a device count of %d is outside 0..%d", f.Result.Devices, device.MaxDevices)
	case n > device.MaxDevices:
		return fmt.Errorf("%d devices listed, more than %d", n, device.MaxDevices)
	case f.Result.Available && (f.Result.Devices == 0 || f.Result.Devices != n):
		return fmt.Errorf("available with %d device(s) but %d listed", f.Result.Devices, n)
	case !f.Result.Available && f.Result.Devices != 0:
		return fmt.Errorf("not available but %d device(s) counted", f.Result.Devices)
	case len(f.PCIBusIDs) > n || len(f.FreeMemory) > n || len(f.ReservedMemory) > n || len(f.Indexes) > n || len(f.Parents) > n:
		return fmt.Errorf("%d PCI bus ids, %d free-memory values, %d reserved-memory values, %d indexes and %d parents for %d devices",
			len(f.PCIBusIDs), len(f.FreeMemory), len(f.ReservedMemory), len(f.Indexes), len(f.Parents), n)
	}
	for i, d := range f.Devices {
		if d.Major < 0 || d.Minor < 0 || d.MultiProcessors < 0 {
			return fmt.Errorf("device %d: negative properties (%d.%d, %d multiprocessors)", i, d.Major, d.Minor, d.MultiProcessors)
		}
		if i < len(f.Indexes) && (f.Indexes[i] < -1 || f.Indexes[i] >= device.MaxDevices) {
			return fmt.Errorf("device %d: index %d is outside -1..%d", i, f.Indexes[i], device.MaxDevices-1)
		}
		if i < len(f.ReservedMemory) && f.ReservedMemory[i] < -1 {
			return fmt.Errorf("device %d: %d bytes reserved", i, f.ReservedMemory[i])
		}
		if i < len(f.FreeMemory) && d.TotalMemory != 0 && f.FreeMemory[i] > d.TotalMemory {
			return fmt.Errorf("device %d: %d bytes free of %d", i, f.FreeMemory[i], d.TotalMemory)
		}
	}
	return nil
}
