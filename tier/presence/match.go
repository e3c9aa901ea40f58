package presence

import "strings"

// Devices finds a device among sources' answers by what another tier knows
// of it: its UUID, else its PCI address. The isolated tier's supervisor and
// the exact tier (driver.WithManagementMemory) use it to give a driver's
// device the memory facts only the management library tells without a
// context: its free memory and the reserve.
type Devices struct {
	byUUID map[string]Device
	byBus  map[string]Device
	shared map[string]bool // PCI addresses more than one device holds (a GPU and its MIG instances)
}

// IndexDevices indexes every device the reports list (Report.All, before
// the visible-devices variable: a variable the source cannot decide must
// not hide a device the driver sees; Report.Devices where a source gives
// no All).
func IndexDevices(reports []Report) Devices {
	x := Devices{byUUID: map[string]Device{}, byBus: map[string]Device{}, shared: map[string]bool{}}
	for _, r := range reports {
		devs := r.All
		if len(devs) == 0 {
			devs = r.Devices
		}
		for _, d := range devs {
			if d.UUID != "" {
				x.byUUID[strings.ToLower(d.UUID)] = d
			}
			if a := PCIAddress(d.PCIBusID); a != "" {
				if _, ok := x.byBus[a]; ok {
					x.shared[a] = true
				}
				x.byBus[a] = d
			}
		}
	}
	return x
}

// Find is the device whose UUID is uuid (case aside), else the one device
// at PCI address bus (any form PCIAddress takes): an address that several
// devices share (a GPU and its MIG instances) names none.
func (x Devices) Find(uuid, bus string) (Device, bool) {
	if d, ok := x.byUUID[strings.ToLower(uuid)]; ok && uuid != "" {
		return d, true
	}
	a := PCIAddress(bus)
	if a == "" || x.shared[a] {
		return Device{}, false
	}
	d, ok := x.byBus[a]
	return d, ok
}
