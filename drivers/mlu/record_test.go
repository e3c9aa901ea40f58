package mlu

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
)

// cndevPresence is the conformance suite's Presence: the fake CNDev told
// the devices the driver's fake describes (record_tiers compares both
// tiers' records): its UUIDs without CNDev's "MLU-", its memory in MB.
var cndevPresence = fakeCNDev.Told("FAKE_CNDEV_", func(devs []device.Record) []string {
	var uuids []string
	for _, d := range devs {
		uuids = append(uuids, strings.TrimPrefix(d.UUID, "MLU-"))
	}
	return []string{"FAKE_CNDEV_UUIDS=" + strings.Join(uuids, ","), fmt.Sprintf("FAKE_CNDEV_MEM_TOTAL_MB=%d", devs[0].TotalMemory>>20)}
})
