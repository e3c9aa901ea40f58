package kunlunxin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// xpumlPresence is the conformance suite's Presence: the fake XPUML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
func xpumlPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeXPUML.Build(t, dir, "")
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, d.UUID)
	}
	return []string{
		XPUMLEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_XPUML_COUNT=%d", len(devs)),
		"FAKE_XPUML_NAMES=" + strings.Join(names, ","),
		"FAKE_XPUML_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_XPUML_MEM_TOTAL=%d", devs[0].TotalMemory),
		"FAKE_XPUML_DRIVER=" + devs[0].DriverVersion,
		"FAKE_XPUML_BUS0=" + devs[0].PCIBusID[5:7],
	}
}
