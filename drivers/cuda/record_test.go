package cuda

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// nvmlPresence is the suite's Presence: the fake NVML told the devices the
// fake libcuda describes (record_tiers compares both tiers' records), and
// the CUDA version the driver's fake answers.
var nvmlPresence = fakeNVML.Told("FAKE_NVML_", func(devs []device.Record) []string {
	var major, minor int
	fmt.Sscanf(devs[0].DriverAPIVersion, "%d.%d", &major, &minor)
	return []string{fmt.Sprintf("FAKE_NVML_CUDA=%d", major*1000+minor*10)}
})
