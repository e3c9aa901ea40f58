package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// nvmlPresence is the suite's Presence: the fake NVML told the devices the
// fake libcuda describes (record_tiers compares both tiers' records).
func nvmlPresence(t *testing.T, dir, _ string, devs []device.Record) []string {
	lib := drivertest.BuildFake(t, "nvml", dir)
	var names, uuids []string
	for _, d := range devs {
		names, uuids = append(names, d.Name), append(uuids, d.UUID)
	}
	var major, minor int
	fmt.Sscanf(devs[0].DriverAPIVersion, "%d.%d", &major, &minor)
	return []string{
		NVMLEnvVar + "=" + lib,
		fmt.Sprintf("FAKE_NVML_COUNT=%d", len(devs)),
		"FAKE_NVML_NAMES=" + strings.Join(names, ","),
		"FAKE_NVML_UUIDS=" + strings.Join(uuids, ","),
		fmt.Sprintf("FAKE_NVML_MEM_TOTAL=%d", devs[0].TotalMemory),
		"FAKE_NVML_DRIVER=" + devs[0].DriverVersion,
		fmt.Sprintf("FAKE_NVML_CUDA=%d", major*1000+minor*10),
	}
}
