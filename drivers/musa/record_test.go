package musa

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// mtmlPresence is the conformance suite's Presence: the fake MTML told the
// devices the fake libmusa describes (record_tiers compares both tiers'
// records).
func mtmlPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeMTML.Build(t, dir, "")
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, d.UUID)
	}
	return []string{
		MTMLEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_MTML_COUNT=%d", len(devs)),
		"FAKE_MTML_NAMES=" + strings.Join(names, ","),
		"FAKE_MTML_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_MTML_MEM_TOTAL=%d", devs[0].TotalMemory),
		"FAKE_MTML_DRIVER=" + devs[0].DriverVersion,
		"FAKE_MTML_BUS0=" + busOf(devs[0].PCIBusID),
	}
}

// busOf is the bus number of a sysfs PCI address, hex ("18").
func busOf(addr string) string {
	if len(addr) < 7 {
		return ""
	}
	return addr[5:7]
}
