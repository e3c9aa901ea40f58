package driver

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// WithPresence makes the backend answer from its vendor's presence tier
// (Vendor.Presence, else its DeviceNodes) instead of initializing the
// driver: WithFacts with PresenceFacts. e reads the environment, /dev and
// /sys.
func WithPresence(e *presence.Env) Option {
	return WithFacts(func(b *Backend) tier.Facts { return b.PresenceFacts(e) })
}

// PresenceFacts is the presence tier's answer for the backend: where its
// library is (found and checked, never opened, so none of its code runs)
// and the first of the vendor's sources that found devices (a management
// library first, device nodes as the fallback). It never initializes a
// driver. A backend whose library is not there is not available whatever
// the sources say: the exact calls would have no driver to use.
// DriverVersion is the source's (the kernel driver's, "580.95.05"), not the
// driver API's.
func (b *Backend) PresenceFacts(e *presence.Env) tier.Facts {
	var reports []presence.Report
	switch {
	case b.v.Presence != nil:
		reports = b.v.Presence(e)
	case len(b.v.DeviceNodes.Prefixes) > 0:
		reports = []presence.Report{presence.Nodes(b.v.DeviceNodes, e)}
	}
	return b.composeFacts(reports)
}

func (b *Backend) composeFacts(reports []presence.Report) tier.Facts {
	lib := b.FindLibrary()
	f := tier.Facts{Tier: tier.Presence, Library: lib.Path, Attempts: lib.Attempts, Extra: map[string]string{}}
	t := b.Type()
	var tried []string
	var chosen *presence.Report
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
	if len(reports) == 0 {
		tried = append(tried, "the vendor names no management library and no device nodes; use FLAGOS_PROBE=exact or isolated")
	}
	switch {
	case lib.Err != nil:
		f.Result.Reason = fmt.Sprintf("%s: presence: %s; %s", t, strings.TrimPrefix(lib.Reason, string(t)+": "), strings.Join(tried, "; "))
		return f
	case chosen == nil:
		f.Result.Reason = fmt.Sprintf("%s: presence: %s is there but no device was found without initializing it: %s",
			t, lib.Path, strings.Join(tried, "; "))
		return f
	case len(chosen.Devices) > device.MaxDevices:
		f.Result.Reason = fmt.Sprintf("%s: presence: %s reported %d devices, more than the %d flagshim accepts", t, chosen.Source, len(chosen.Devices), device.MaxDevices)
		return f
	}
	f.Extra["presence.source"] = chosen.Source
	f.Source = chosen.Source
	f.DriverVersion = chosen.DriverVersion
	if chosen.CUDAVersion > 0 && b.v.VersionKnown() {
		f.APIVersion = b.v.FormatVersion(chosen.CUDAVersion)
	}
	if chosen.Visibility != "" {
		f.Extra["presence.visibility"] = chosen.Visibility
	}
	var names []string
	for _, d := range chosen.Devices {
		names = append(names, d.Name)
		f.PCIBusIDs = append(f.PCIBusIDs, d.PCIBusID)
	}
	id := b.identify(lib.Path, f.PCIBusIDs, names)
	f.Vendor, f.VendorFacts = id.maker, id.facts
	for i, d := range chosen.Devices {
		f.Devices = append(f.Devices, device.Properties{Name: d.Name, Vendor: id.byDevice[i], UUID: d.UUID, TotalMemory: d.TotalMemory, Major: d.Major, Minor: d.Minor})
		f.FreeMemory = append(f.FreeMemory, d.FreeMemory)
		f.Parents = append(f.Parents, d.Parent)
		if chosen.Indexed {
			f.Indexes = append(f.Indexes, d.SourceIndex)
		}
	}
	f.Result.Available = len(f.Devices) > 0
	f.Result.Devices = len(f.Devices)
	how := "from " + chosen.Source
	if chosen.Source == presence.SourceNodes {
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
