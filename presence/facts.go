package presence

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Facts composes the presence tier's answer for a driver backend: where
// its library is (b.FindLibrary: found and checked, never opened, so none
// of its code runs) and the first of reports that found devices (a
// management library first, device nodes as the fallback). It never
// initializes a driver. A backend whose library is not there is not
// available whatever the reports say: the exact calls would have no driver
// to use. DriverVersion is the management library's (the kernel driver's,
// "580.95.05"), not the driver API's.
func Facts(b *driver.Backend, vendorName string, reports ...Report) driver.Facts {
	lib := b.FindLibrary()
	f := driver.Facts{Tier: driver.TierPresence, Library: lib.Path, Attempts: lib.Attempts, Extra: map[string]string{}}
	t := b.Type()
	var tried []string
	var chosen *Report
	for i := range reports {
		r := &reports[i]
		f.Extra["presence."+r.Source] = r.Reason
		if r.Library != "" {
			f.Extra["presence."+r.Source+".library"] = r.Library
		}
		if r.Available() && chosen == nil {
			chosen = r
		}
		tried = append(tried, r.Source+": "+r.Reason)
	}
	switch {
	case lib.Err != nil:
		f.Result.Reason = fmt.Sprintf("%s: presence: %s; %s", t, strings.TrimPrefix(lib.Reason, string(t)+": "), strings.Join(tried, "; "))
		return f
	case chosen == nil:
		f.Result.Reason = fmt.Sprintf("%s: presence: %s is there but no device was found without initializing it: %s",
			t, lib.Path, strings.Join(tried, "; "))
		return f
	}
	f.Extra["presence.source"] = chosen.Source
	f.DriverVersion = chosen.DriverVersion
	if chosen.Visibility != "" {
		f.Extra["presence.visibility"] = chosen.Visibility
	}
	for _, d := range chosen.Devices {
		f.Devices = append(f.Devices, device.Properties{Name: d.Name, Vendor: vendorName, UUID: d.UUID, TotalMemory: d.TotalMemory, Major: d.Major, Minor: d.Minor})
		f.PCIBusIDs = append(f.PCIBusIDs, d.PCIBusID)
		f.FreeMemory = append(f.FreeMemory, d.FreeMemory)
	}
	f.Result.Available = len(f.Devices) > 0
	f.Result.Devices = len(f.Devices)
	how := "from " + chosen.Source
	if chosen.Source == SourceNodes {
		how = "from device nodes alone (no management library answered; names and memory are unknown)"
	}
	driverVersion := ""
	if f.DriverVersion != "" {
		driverVersion = ", driver " + f.DriverVersion
	}
	f.Result.Reason = fmt.Sprintf("%s: presence: %s%s, %d device(s) %s, without initializing the driver",
		t, lib.Path, driverVersion, len(f.Devices), how)
	if !f.Result.Available {
		f.Result.Reason = fmt.Sprintf("%s: presence: no devices (%s)", t, chosen.Reason)
	}
	return f
}
