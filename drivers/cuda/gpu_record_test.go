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
// Memory has one meaning (docs/identity.md, "Memory"): total_memory is the
// driver's (cuDeviceTotalMem) in both tiers, nvidia-smi's memory.total
// less memory.reserved; reserved_memory is memory.reserved; and the exact
// tier that asks NVML for the reserve (driver.WithManagementMemory, as
// query and list --json do) finds NVML's total less its reserve equal to
// the driver's total (else its record has a conflict).
func TestGPURecordTiers(t *testing.T) {
	exact := gpuBackend(t)
	withNVML := New(driver.WithManagementMemory(presence.NewEnv()))
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
		m, err := withNVML.Record(i)
		require.NoError(t, err)
		jm, _ := json.Marshal(m)
		t.Logf("  exact, NVML's memory facts: %s", jm)
		assert.Empty(t, m.Conflicts, "exact tier with NVML's reserve: cuDeviceTotalMem is NVML's total less its reserve")
		assert.Equal(t, e.TotalMemory, m.TotalMemory)
		assert.Equal(t, e.TotalMemory, p.TotalMemory, "total_memory: the driver's in both tiers (presence: NVML's total less its reserve)")
		if p.Unknown["reserved_memory"] == "" {
			assert.Empty(t, m.Unknown["reserved_memory"], "the exact tier found NVML's reserve")
			assert.Equal(t, p.ReservedMemory, m.ReservedMemory, "reserved_memory: NVML's in both tiers")
		}
		if g, ok := smi[e.UUID]; ok {
			assert.Equal(t, pciKey(g.pci), e.PCIBusID, "nvidia-smi's pci.bus_id")
			assert.Equal(t, g.name, e.Name)
			if g.haveReserved {
				assert.Equal(t, g.reservedMiB, p.ReservedMemory>>20, "nvidia-smi's memory.reserved (MiB)")
				assert.Equal(t, g.memMiB, (p.TotalMemory+p.ReservedMemory)>>20, "nvidia-smi's memory.total (MiB): total_memory + reserved_memory")
				assert.InDelta(t, float64(g.memMiB-g.reservedMiB), float64(e.TotalMemory>>20), 1,
					"exact total_memory: nvidia-smi's memory.total - memory.reserved (MiB, each rounded down)")
			} else {
				t.Logf("cuda:%d: nvidia-smi gives no memory.reserved (an old driver): memory.total %d MiB, the driver's total %d MiB", i, g.memMiB, e.TotalMemory>>20)
			}
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
