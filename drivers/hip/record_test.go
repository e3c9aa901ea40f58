package hip

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// kfdPresence is the conformance suite's Presence (record_tiers compares
// both tiers' records): what the amdgpu driver would publish for the
// devices the driver's fake describes. A KFD topology under the case's
// sysfs root (a CPU node, then a GPU node per device: its unique_id the
// UUID's 16 hex digits, its PCI location, its gfx version from the
// capability, its VRAM), /dev/kfd, amdgpu's version, and libdrm's
// amdgpu.ids naming each device's PCI id and revision with the name the
// driver gives (the KFD nodes carry an ASIC name, which must not win).
func kfdPresence(t *testing.T, _, root string, devs []device.Record) []string {
	tr := presencetest.NewTree(t)
	tr.Root = root
	kfdCPU(tr, 0)
	ids := "1.0.0\n"
	for i, d := range devs {
		u, err := strconv.ParseUint(strings.TrimPrefix(d.UUID, "GPU-"), 16, 64)
		require.NoError(t, err, "the exact tier's UUID is ROCr's form: %q", d.UUID)
		var dom, bus, dev, fn int
		_, err = fmt.Sscanf(d.PCIBusID, "%04x:%02x:%02x.%x", &dom, &bus, &dev, &fn)
		require.NoError(t, err, "PCI address %q", d.PCIBusID)
		kfdGPU(tr, i+1, "drivertest asic", u, d.Major*10000+d.Minor*100, dom, bus<<8|dev<<3|fn, d.TotalMemory)
		// The kit wrote the PCI device (device id 0x2330+i); add its revision.
		rev := filepath.Join(root, "sys/bus/pci/devices", d.PCIBusID, "revision")
		require.NoError(t, os.WriteFile(rev, []byte(fmt.Sprintf("0x%02x\n", i)), 0o644))
		ids += fmt.Sprintf("%04X,\t%02X,\t%s\n", 0x2330+i, i, d.Name)
	}
	tr.Char("dev/kfd").File("sys/module/amdgpu/version", drivertest.RecordDriverVersion+"\n").
		File("usr/share/libdrm/amdgpu.ids", ids)
	return nil
}
