package gcu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// efmlPresence is the conformance suite's Presence: the fake EFML told the
// devices the driver's fake describes (record_tiers compares both tiers'
// records).
func efmlPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeEFML.Build(t, dir, "")
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, d.UUID)
	}
	return []string{
		EFMLEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_EFML_COUNT=%d", len(devs)),
		"FAKE_EFML_NAMES=" + strings.Join(names, ","),
		"FAKE_EFML_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_EFML_MEM_TOTAL=%d", devs[0].TotalMemory),
		"FAKE_EFML_DRIVER=" + devs[0].DriverVersion,
		"FAKE_EFML_BUS0=" + devs[0].PCIBusID[5:7],
	}
}
