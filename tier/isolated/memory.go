package isolated

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
)

// Free memory (Config.Memory) is learned by the supervisor, not the child:
// from the vendor's management library (NVML, MTML, ...), which needs no
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

// fill waits for the answer until deadline and fills f's free memory from
// it, matching devices by PCI bus id, else by UUID; a device no source
// matches keeps 0 (unknown). A management library that has not answered by
// the deadline leaves every device unknown, and says so in f.Extra.
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
		f.Extra["isolated.free_memory"] = fmt.Sprintf("the management library did not answer within the probe's deadline (%s): free memory unknown", deadline.Format(time.RFC3339Nano))
		return
	}
	byBus, byUUID := map[string]uint64{}, map[string]uint64{}
	for _, r := range reports {
		for _, d := range r.Devices {
			if d.FreeMemory == 0 {
				continue
			}
			if d.PCIBusID != "" {
				byBus[normalBus(d.PCIBusID)] = d.FreeMemory
			}
			if d.UUID != "" {
				byUUID[strings.ToLower(d.UUID)] = d.FreeMemory
			}
		}
	}
	f.FreeMemory = make([]uint64, len(f.Devices))
	for i, d := range f.Devices {
		if i < len(f.PCIBusIDs) {
			if m, ok := byBus[normalBus(f.PCIBusIDs[i])]; ok {
				f.FreeMemory[i] = m
				continue
			}
		}
		f.FreeMemory[i] = byUUID[strings.ToLower(d.UUID)]
	}
}

// normalBus is a PCI bus id with a 4-digit domain, lower case: CUDA says
// "00000000:18:00.0", NVML "00000000:18:00.0" or "0000:18:00.0".
func normalBus(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if dom, rest, ok := strings.Cut(s, ":"); ok && len(dom) > 4 {
		s = dom[len(dom)-4:] + ":" + rest
	}
	return s
}
