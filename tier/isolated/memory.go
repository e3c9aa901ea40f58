package isolated

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
)

// Free memory and the reserve (Config.Memory) are learned by the
// supervisor, not the child: from the vendor's management library (NVML,
// MTML, ...), which needs no
// driver initialized, asked in this process while the child initializes
// the driver, so that the slower of the two, not their sum, is what a
// host waits for (on an H200, NVML's init alone is a few tens of ms). The
// presence tier (the CLI's list) runs the same libraries in the process
// too. Asking the driver instead would create each device's context in
// the child (about 150 ms a GPU on an H200).

// memoryQuery is a vendor's management-library answer on its way.
type memoryQuery chan []presence.Report

// askMemory starts vendor t's presence sources on a goroutine (leaving
// their sessions open with noShutdown); nil when the vendor has none.
func askMemory(t device.Type, noShutdown bool) memoryQuery {
	v, ok := vendors.Lookup(t)
	if !ok || v.Presence == nil {
		return nil
	}
	root := os.Getenv("FLAGOS_TEST_ROOT") // checked by Init: absolute or unset
	if !filepath.IsAbs(root) {
		root = ""
	}
	q := make(memoryQuery, 1)
	opts := []presence.Option{presence.WithRoot(root)}
	if noShutdown {
		opts = append(opts, presence.WithoutShutdown())
	}
	// PresenceReports recovers a panic of the vendor's code: it would
	// otherwise end the host from this goroutine.
	go func() { q <- v.PresenceReports(presence.NewEnv(opts...)) }()
	return q
}

// fill waits for the answer until deadline and fills f's free memory and
// reserve from it (presence.Devices: by UUID, else by PCI address); a
// device no source describes keeps them unknown. A management library that
// has not answered by the deadline leaves every device unknown, and says
// so in f.Extra.
func (q memoryQuery) fill(f *tier.Facts, deadline time.Time) {
	if q == nil || !f.Result.Available {
		return
	}
	var reports []presence.Report
	select {
	case reports = <-q:
	case <-time.After(time.Until(deadline)):
		if f.Extra == nil {
			f.Extra = map[string]string{}
		}
		f.Extra["isolated.free_memory"] = fmt.Sprintf("the management library did not answer within the probe's deadline (%s): free memory and the reserve unknown", deadline.Format(time.RFC3339Nano))
		return
	}
	found := presence.IndexDevices(reports)
	f.FreeMemory = make([]uint64, len(f.Devices))
	f.ReservedMemory = make([]int64, len(f.Devices))
	for i, d := range f.Devices {
		f.ReservedMemory[i] = -1
		bus := ""
		if i < len(f.PCIBusIDs) {
			bus = f.PCIBusIDs[i]
		}
		m, ok := found.Find(d.UUID, bus)
		if !ok {
			continue
		}
		f.FreeMemory[i] = m.FreeMemory
		if m.ReservedKnown && m.ReservedMemory <= math.MaxInt64 {
			f.ReservedMemory[i] = int64(m.ReservedMemory)
		}
	}
}
