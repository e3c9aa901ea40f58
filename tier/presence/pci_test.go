package presence_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestPCIAddress(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:18:00.0":  "0000:18:00.0", // CUDA's, NVML's
		"0000:1B:00.0":      "0000:1b:00.0",
		" 0000:c1:00.7\n":   "0000:c1:00.7",
		"00000010:17:00.0":  "0010:17:00.0",
		"1:02:03.4":         "0001:02:03.4",
		"":                  "",
		"18:00.0":           "",
		"0000:18:00":        "",
		"0000:1g:00.0":      "",
		"0000-18-00.0":      "",
		"100000:18:00.0":    "", // a domain past 16 bits
		"0000:18:00.0.1":    "",
		"000000000:18:00.0": "",
	} {
		assert.Equal(t, want, presence.PCIAddress(in), "%q", in)
	}
}

// FuzzPCIAddress: what it accepts is sysfs's form, lower case, and a
// fixed point.
func FuzzPCIAddress(f *testing.F) {
	for _, s := range []string{"00000000:18:00.0", "0000:1B:00.0", "x", "0:0:0.0", "ffff:ff:1f.7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := presence.PCIAddress(s)
		if a == "" {
			return
		}
		require.Len(t, a, len("0000:18:00.0"), "%q -> %q", s, a)
		assert.Equal(t, strings.ToLower(a), a)
		assert.Equal(t, a, presence.PCIAddress(a))
	})
}

func pciTree(t *testing.T) *presencetest.Tree {
	tr := presencetest.NewTree(t)
	dev := func(addr, vendor, class, driver string, numa int) {
		d := "sys/bus/pci/devices/" + addr + "/"
		tr.File(d+"vendor", vendor+"\n").File(d+"device", "0x2330\n").File(d+"class", class+"\n").
			File(d+"numa_node", fmt.Sprintf("%d\n", numa)).File(d+"local_cpulist", "0-7,16-23\n")
		if driver != "" {
			tr.Link(d+"driver", "../../../../bus/pci/drivers/"+driver)
		}
	}
	dev("0000:3b:00.0", "0x10de", "0x030200", "nvidia", 1)
	dev("0000:18:00.0", "0x10de", "0x030200", "nvidia", 0)
	dev("0000:18:00.1", "0x10de", "0x040300", "snd_hda_intel", 0) // the GPU's audio function
	dev("0000:5e:00.0", "0x8086", "0x020000", "ice", 0)           // a NIC
	dev("0000:af:00.0", "0x10de", "0x030200", "vfio-pci", -1)     // passed through
	dev("0000:c1:00.0", "0x1002", "0x120000", "", 1)              // no driver bound
	tr.Link("sys/bus/pci/drivers/nvidia/module", "../../../../module/nvidia").File("sys/module/nvidia/version", "580.95.05\n")
	return tr
}

func TestPCIDevice(t *testing.T) {
	e := presence.NewEnv(presence.WithRoot(pciTree(t).Root))
	d, err := e.PCIDevice("00000000:3B:00.0")
	require.NoError(t, err)
	assert.Equal(t, presence.PCIDevice{Address: "0000:3b:00.0", Vendor: 0x10de, Device: 0x2330, Class: 0x030200, NUMANode: 1,
		LocalCPUs: "0-7,16-23", Driver: "nvidia", DriverVersion: "580.95.05"}, d)
	assert.True(t, d.Accelerator())

	d, err = e.PCIDevice("0000:c1:00.0")
	require.NoError(t, err)
	assert.Equal(t, "", d.Driver)
	assert.Equal(t, "", d.DriverVersion)

	_, err = e.PCIDevice("0000:99:00.0")
	assert.Error(t, err, "no such device")
	_, err = e.PCIDevice("nope")
	assert.ErrorContains(t, err, `"nope" is not a PCI address`)
}

func TestPCIAccelerators(t *testing.T) {
	e := presence.NewEnv(presence.WithRoot(pciTree(t).Root))
	var got []string
	for _, d := range e.PCIAccelerators([]uint16{0x10de}, 4096) {
		got = append(got, d.Address+" "+d.Driver+" "+d.DriverVersion)
	}
	assert.Equal(t, []string{"0000:18:00.0 nvidia 580.95.05", "0000:3b:00.0 nvidia 580.95.05", "0000:af:00.0 vfio-pci "}, got,
		"NVIDIA's accelerators in address order: not its audio function, not another maker's")
	assert.Len(t, e.PCIAccelerators([]uint16{0x10de}, 1), 1, "the limit")
	assert.Empty(t, e.PCIAccelerators([]uint16{0x1ed5}, 4096))
	assert.Nil(t, presence.NewEnv(presence.WithRoot(t.TempDir())).PCIAccelerators([]uint16{0x10de}, 4096), "no sysfs")
}
