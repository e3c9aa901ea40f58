package driver

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// WithManagementMemory makes the exact tier's records (Record) carry what
// only the vendor's management library tells without a device context:
// each device's free memory and the memory its driver and firmware
// reserve (NVML's nvmlDeviceGetMemoryInfo_v2), which the driver's total
// leaves out and nvidia-smi's memory.total holds. The library is asked once,
// in this process, when a record first needs it: the vendor's presence
// sources in e (they never initialize the driver), under the init timeout
// (WithInitTimeout), their devices matched to the driver's by UUID, else
// PCI address (presence.Devices). The presence tier has these facts anyway,
// and the isolated tier's supervisor asks for them; flagshim.WithFreeMemory
// gives this option in the exact tier. Without it an exact-tier record
// leaves the reserve unknown and learns free memory only from MemInfo.
func WithManagementMemory(e *presence.Env) Option {
	return func(o *options) { o.management = e }
}

// managementState is the management library's answer, asked once.
type managementState struct {
	once sync.Once
	devs presence.Devices
	src  string // the sources that answered, "nvml"
	why  string // why there is no answer: the sources' reasons, or the deadline
}

// management asks the vendor's presence sources once; nil without
// WithManagementMemory.
func (b *Backend) management() *managementState {
	if b.o.management == nil {
		return nil
	}
	m := &b.mgmt
	m.once.Do(func() {
		reports, ok := guarded(time.Now().Add(b.o.timeout), func() []presence.Report { return b.v.PresenceReports(b.o.management) })
		if !ok {
			m.why = fmt.Sprintf("the %s management library did not answer within %s (FLAGOS_PROBE_TIMEOUT)", b.v.Type, b.o.timeout)
			return
		}
		var srcs, whys []string
		var listed []presence.Report
		for _, r := range reports {
			switch {
			case r.Source == presence.SourceNodes: // device nodes tell no memory
			case len(r.All) > 0 || len(r.Devices) > 0:
				srcs, listed = append(srcs, r.Source), append(listed, r)
			default:
				whys = append(whys, r.Source+": "+r.Reason)
			}
		}
		m.devs, m.src = presence.IndexDevices(listed), strings.Join(srcs, ", ")
		switch {
		case len(reports) == 0:
			m.why = fmt.Sprintf("the %s vendor names no management library", b.v.Type)
		case m.src == "":
			m.why = "no management library answered: " + strings.Join(whys, "; ")
		}
	})
	return m
}

// recordManagement fills an exact-tier record's reserve and free memory
// from the management library (WithManagementMemory), or says why not.
func (b *Backend) recordManagement(r *device.Record) {
	m := b.management()
	switch {
	case m == nil:
		r.Unknown[fieldReserved] = "the driver does not tell the memory its driver and firmware reserve (total_memory leaves it out); the management library does: the presence tier, or an exact or isolated tier asked for memory (flagshim query, info)"
		return
	case m.why != "":
		r.Unknown[fieldReserved] = m.why
		return
	}
	d, ok := m.devs.Find(r.UUID, r.PCIBusID)
	if !ok {
		r.Unknown[fieldReserved] = fmt.Sprintf("the management library (%s) describes no device with UUID %q or alone at PCI address %q", m.src, r.UUID, r.PCIBusID)
		return
	}
	if d.ReservedKnown {
		r.ReservedMemory = d.ReservedMemory
		if d.TotalMemory != 0 && d.TotalMemory != r.TotalMemory {
			r.Conflicts = append(r.Conflicts, fmt.Sprintf("%s: the driver says %d bytes, %s's total less its reserve %d", fieldMemory, r.TotalMemory, m.src, d.TotalMemory))
		}
	} else {
		r.Unknown[fieldReserved] = fmt.Sprintf("the management library (%s) does not tell the reserve apart", m.src)
	}
	if d.FreeMemory != 0 && (r.TotalMemory == 0 || d.FreeMemory <= r.TotalMemory) {
		r.FreeMemory = d.FreeMemory
		delete(r.Unknown, fieldFree)
	}
}
