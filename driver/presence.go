package driver

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.uber.org/zap"

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
//
// The sources run under the exact tier's bound (WithInitTimeout,
// FLAGOS_PROBE_TIMEOUT) and its recovery: a management library that hangs
// (in its init, its count, a name) leaves its thread behind and the backend
// is "not available", naming the step that did not return; a panic of the
// vendor's code is the backend's "not available" with the panic's message
// (Vendor.PresenceReports).
func (b *Backend) PresenceFacts(e *presence.Env) tier.Facts {
	p := &progress{}
	e = e.WithProgress(p.at)
	reports, ok := guarded(time.Now().Add(b.o.timeout), func() []presence.Report { return b.v.PresenceReports(e) })
	if !ok {
		step := p.current()
		if step == "" {
			step = "the vendor's presence sources"
		}
		why := fmt.Sprintf("%s did not return within %s (FLAGOS_PROBE_TIMEOUT): the management library hangs; its thread is left behind and %s is not available in this process; FLAGOS_PROBE=isolated asks a child process instead",
			step, b.o.timeout, b.v.Type)
		b.o.log.Info(string(b.v.Type)+" presence timed out", zap.String("step", step))
		f := b.composeFacts([]presence.Report{{Source: "presence", Err: ErrTimedOut, Reason: why}})
		f.Result.Reason = fmt.Sprintf("%s: presence: %s", b.v.Type, why)
		return f
	}
	return b.composeFacts(reports)
}

// PresenceReports asks the vendor's presence sources in e: Presence, else
// a count of its DeviceNodes; nil when it has neither. A panic of the
// vendor's code is recovered: the answer is then one Report whose Err
// matches presence.ErrPanic and ErrPanic, with the panic's message. It has
// no deadline of its own (PresenceFacts bounds it).
func (v *Vendor) PresenceReports(e *presence.Env) (reports []presence.Report) {
	switch {
	case v.Presence != nil:
		defer func() {
			if r := recover(); r != nil {
				reports = []presence.Report{{
					Source: "presence",
					Err:    fmt.Errorf("%w: %w: %v", presence.ErrPanic, ErrPanic, r),
					Reason: fmt.Sprintf("the %s vendor's presence function panicked: %v", v.Type, r),
				}}
			}
		}()
		return v.Presence(e)
	case len(v.DeviceNodes.Prefixes) > 0:
		return []presence.Report{presence.Nodes(v.DeviceNodes, e)}
	}
	return nil
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
		presence.Plausible(&d) // a source not built on presence.Query, too
		f.Devices = append(f.Devices, device.Properties{Name: d.Name, Vendor: id.byDevice[i], UUID: d.UUID, TotalMemory: d.TotalMemory, Major: d.Major, Minor: d.Minor})
		f.FreeMemory = append(f.FreeMemory, d.FreeMemory)
		f.ReservedMemory = append(f.ReservedMemory, reserved(d))
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

// reserved is d's reserve for tier.Facts: -1 where its source did not tell
// it apart.
func reserved(d presence.Device) int64 {
	if !d.ReservedKnown || d.ReservedMemory > math.MaxInt64 {
		return -1
	}
	return int64(d.ReservedMemory)
}
