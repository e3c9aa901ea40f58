package npu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
)

// dcmiPresence is the conformance suite's Presence: the fake DCMI told the
// NPUs the fake AscendCL describes, one per card (record_tiers compares
// both tiers' records; DCMI gives no UUID, which the presence record says).
func dcmiPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := fakeDCMI.Build(t, dir, "")
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return []string{
		DCMIEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_DCMI_CARDS=%d", len(devs)),
		"FAKE_DCMI_CHIP_TYPE=",
		"FAKE_DCMI_CHIP_NAMES=" + strings.Join(names, ","),
		fmt.Sprintf("FAKE_DCMI_HBM_MB=%d", devs[0].TotalMemory>>20),
		"FAKE_DCMI_DRIVER=" + devs[0].DriverVersion,
	}
}
