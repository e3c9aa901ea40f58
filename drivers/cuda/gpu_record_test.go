//go:build gpu

package cuda

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// TestGPURecordTiers: on the real device, the exact tier (the driver,
// initialized here) and the presence tier (NVML and sysfs, no driver)
// give each GPU the same record, field for field, or say which field one
// of them cannot know; neither reports a conflict between its sources; and
// both agree with nvidia-smi (FLAGSHIM_NVSMI, FLAGSHIM_NVSMI_DRIVER) on
// the UUID, the PCI address, the name and the kernel driver's version.
func TestGPURecordTiers(t *testing.T) {
	exact := gpuBackend(t)
	pres := New(driver.WithPresence(presence.NewEnv()))
	r := pres.Available()
	require.True(t, r.Available, "the presence tier: %s", r.Reason)
	n, err := exact.DeviceCount()
	require.NoError(t, err)
	require.Equal(t, n, r.Devices, "both tiers count the same GPUs")
	smi := nvsmi(t)
	byUUID := map[string]device.Record{}
	for i := 0; i < n; i++ {
		p, err := pres.Record(i)
		require.NoError(t, err)
		byUUID[p.UUID] = p
	}
	for i := 0; i < n; i++ {
		e, err := exact.Record(i)
		require.NoError(t, err)
		p, ok := byUUID[e.UUID]
		require.True(t, ok, "cuda:%d (%s): no presence record has its UUID", i, e.UUID)
		je, _ := json.Marshal(e)
		jp, _ := json.Marshal(p)
		t.Logf("cuda:%d\n  exact:    %s\n  presence: %s", i, je, jp)
		if e.VisibleIndex == p.VisibleIndex { // CUDA's order is NVML's unless CUDA_DEVICE_ORDER says otherwise
			for _, d := range drivertest.CompareRecords(e, p) {
				t.Errorf("cuda:%d: %s", i, d)
			}
		}
		assert.Empty(t, e.Conflicts, "exact tier's sources disagree")
		assert.Empty(t, p.Conflicts, "presence tier's sources disagree")
		assert.Equal(t, "nvidia", e.Vendor)
		assert.True(t, e.Usable)
		if g, ok := smi[e.UUID]; ok {
			assert.Equal(t, pciKey(g.pci), e.PCIBusID, "nvidia-smi's pci.bus_id")
			assert.Equal(t, g.name, e.Name)
			assert.Equal(t, g.memMiB, e.TotalMemory>>20, "nvidia-smi's memory.total (MiB)")
		} else if len(smi) > 0 {
			t.Errorf("cuda:%d: nvidia-smi does not list %s", i, e.UUID)
		}
		if v := os.Getenv("FLAGSHIM_NVSMI_DRIVER"); v != "" {
			assert.Equal(t, v, p.DriverVersion, "presence: NVML's driver version is nvidia-smi's")
			if e.Unknown["driver_version"] == "" {
				assert.Equal(t, v, e.DriverVersion, "exact: the kernel module's version (sysfs) is nvidia-smi's")
			}
		}
	}
}
