package maca

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// mxsmlPresence is the conformance suite's Presence: the fake MXSML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
func mxsmlPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeMXSML.Build(t, dir, "")
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, d.UUID)
	}
	return []string{
		MXSMLEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_MXSML_COUNT=%d", len(devs)),
		"FAKE_MXSML_NAMES=" + strings.Join(names, ","),
		"FAKE_MXSML_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_MXSML_MEM_TOTAL=%d", devs[0].TotalMemory),
		"FAKE_MXSML_DRIVER=" + devs[0].DriverVersion,
		"FAKE_MXSML_BUS0=" + devs[0].PCIBusID[5:7],
	}
}
