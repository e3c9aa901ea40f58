package mlu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// cndevPresence is the conformance suite's Presence: the fake CNDev told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
func cndevPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeCNDev.Build(t, dir, "")
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, strings.TrimPrefix(d.UUID, "MLU-"))
	}
	return []string{
		CNDevEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_CNDEV_COUNT=%d", len(devs)),
		"FAKE_CNDEV_NAMES=" + strings.Join(names, ","),
		"FAKE_CNDEV_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_CNDEV_MEM_TOTAL_MB=%d", devs[0].TotalMemory>>20),
		"FAKE_CNDEV_DRIVER=" + devs[0].DriverVersion,
		"FAKE_CNDEV_BUS0=" + devs[0].PCIBusID[5:7],
	}
}
