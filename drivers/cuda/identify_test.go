package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// Whose runtime answers behind a CUDA-compatible libcuda.so.1: the fake
// libcuda, laid out as each maker lays it out, with a fake sysfs PCI tree
// (the devices the fake reports sit at 0000:18:00.0 and 0000:19:00.0).
// Each case runs in a child process, in the exact tier, the presence tier
// (a fake NVML look-alike gives the bus ids) and as an isolated probe's
// child sends it (ExactFacts).

type identCase struct {
	name    string
	layout  string   // where libcuda.so.1 sits under the case's folder: "lib" or a maker's tree
	realAs  string   // when set, libcuda.so.1 is a link to this file beside it
	pci     []string // sysfs vendor ids of the two devices ("" none)
	machine []string // other sysfs accelerators, vendor ids (class 0x1200)
	env     []string
	want    string // backend and device vendor, in the exact tier
	facts   string // a fact the answer cites
	// presence is the presence tier's answer, where the fake NVML
	// look-alike names the devices "Fake NVIDIA GPU" (a name that says
	// nothing) at the same bus ids; "" is want.
	presence string
}

var identCases = []identCase{
	{name: "nvidia_by_pci", layout: "lib", pci: []string{"0x10de", "0x10de"}, want: "NVIDIA", facts: "PCI vendor 0x10de (NVIDIA) at 0000:18:00.0"},
	{name: "corex_tree_and_pci", layout: "usr/local/corex/lib64", pci: []string{"0x1e3e", "0x1e3e"},
		env: []string{"FAKE_CUDA_DEVICE_NAMES=Iluvatar BI-V100,Iluvatar BI-V100"}, want: "Iluvatar CoreX", facts: "PCI vendor 0x1e3e (Iluvatar CoreX)"},
	{name: "corex_tree_alone", layout: "usr/local/corex/lib64", want: "Iluvatar CoreX", facts: "its path is Iluvatar CoreX's"},
	{name: "ppu_by_name", layout: "lib", env: []string{"FAKE_CUDA_DEVICE_NAMES=PPU-ZW810E,PPU-ZW810E", "FAKE_CUDA_DRIVER_VERSION=13000"},
		want: "T-Head PPU", facts: `named "PPU-ZW810E"`, presence: "unknown"},
	// PPU's NVML look-alike names the devices as its libcuda does: the
	// presence tier tells PPU by the same fact, nothing initialized.
	{name: "ppu_nvml_lookalike", layout: "lib", env: []string{"FAKE_CUDA_DEVICE_NAMES=PPU-ZW810E,PPU-ZW810E", "FAKE_NVML_NAMES=PPU-ZW810E,PPU-ZW810E",
		"FAKE_NVML_DRIVER=1.5.1-ppu"}, want: "T-Head PPU", facts: `named "PPU-ZW810E"`},
	{name: "kunlunxin_file", layout: "xcudart/lib", realAs: "libxpucuda.so.515.58.kunlun", want: "Kunlunxin", facts: "libxpucuda.so.515.58.kunlun"},
	{name: "another_family_silicon", layout: "lib", pci: []string{"0x1ed5", "0x1ed5"}, want: "Moore Threads", facts: "PCI vendor 0x1ed5 (Moore Threads)"},
	{name: "unknown_pci", layout: "lib", pci: []string{"0x1234", "0x1234"}, want: "unknown (PCI vendor 0x1234)", facts: "which no registered vendor makes"},
	{name: "machine_scan", layout: "lib", machine: []string{"0x1e3e"}, want: "Iluvatar CoreX", facts: "sysfs lists accelerators of PCI vendor 0x1e3e (Iluvatar CoreX) only"},
	{name: "nothing_says", layout: "lib", want: "unknown"},
	{name: "nvidia_names_without_pci", layout: "lib", env: []string{"FAKE_CUDA_DEVICE_NAMES=NVIDIA H200,NVIDIA H200"}, want: "NVIDIA",
		facts: `named "NVIDIA H200"`, presence: "unknown"},
}

const identCaseEnv = "IDENT_CASE"

func TestIdentify(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libcuda")
	}
	for _, c := range identCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := dltest.PrivateDir(t)
			dir := filepath.Join(base, c.layout)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			lib := filepath.Join(dir, "libcuda.so.1")
			if c.realAs != "" {
				real := filepath.Join(dir, c.realAs)
				suite.BuildIn(t, dir)
				require.NoError(t, os.Rename(lib, real))
				require.NoError(t, os.Symlink(c.realAs, lib))
			} else {
				suite.BuildIn(t, dir)
			}
			nvmlDir := filepath.Join(base, "nvml")
			require.NoError(t, os.MkdirAll(nvmlDir, 0o755))
			nvml := presencetest.Lib{Src: "testdata/fake_nvml.c"}.Build(t, nvmlDir, "libnvidia-ml.so.1")
			tr := presencetest.NewTree(t)
			for i, v := range c.pci {
				dev := []string{"0000:18:00.0", "0000:19:00.0"}[i]
				tr.File("sys/bus/pci/devices/"+dev+"/vendor", v+"\n").File("sys/bus/pci/devices/"+dev+"/class", "0x030200\n")
			}
			for i, v := range c.machine {
				dev := "0000:4" + string(rune('0'+i)) + ":00.0"
				tr.File("sys/bus/pci/devices/"+dev+"/vendor", v+"\n").File("sys/bus/pci/devices/"+dev+"/class", "0x120000\n")
			}
			env := append([]string{identCaseEnv + "=" + c.name, EnvVar + "=" + lib, NVMLEnvVar + "=" + nvml, "IDENT_ROOT=" + tr.Root}, c.env...)
			out := dltest.MustChild(t, "TestIdentifyChild", env...)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

func TestIdentifyChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestIdentify")
	}
	var c *identCase
	for i := range identCases {
		if identCases[i].name == os.Getenv(identCaseEnv) {
			c = &identCases[i]
		}
	}
	require.NotNil(t, c)
	makers := map[uint16]string{0x1ed5: "Moore Threads"} // another registered vendor's silicon
	root := os.Getenv("IDENT_ROOT")
	check := func(t *testing.T, b *driver.Backend) {
		info := b.Describe()
		require.True(t, b.Available().Available, b.Available().Reason)
		assert.Equal(t, c.want, info.Vendor, "facts: %v", info.VendorFacts)
		if c.want != "NVIDIA" {
			assert.NotEqual(t, "NVIDIA", info.Vendor, "never NVIDIA for another maker's runtime")
		}
		if c.facts != "" {
			assert.Contains(t, strings.Join(info.VendorFacts, "\n"), c.facts)
		}
		for i := range 2 {
			p, err := b.Properties(i)
			require.NoError(t, err)
			assert.Equal(t, c.want, p.Vendor, "device %d", i)
		}
	}
	t.Run("exact", func(t *testing.T) {
		check(t, New(driver.WithSysRoot(root), driver.WithMakers(makers)))
	})
	t.Run("isolated child's facts", func(t *testing.T) {
		f := New(driver.WithSysRoot(root), driver.WithMakers(makers)).ExactFacts(false)
		assert.Equal(t, c.want, f.Vendor)
		require.Len(t, f.Devices, 2)
		assert.Equal(t, c.want, f.Devices[1].Vendor)
	})
	t.Run("presence", func(t *testing.T) {
		want := c.presence
		if want == "" {
			want = c.want
		}
		e := presence.NewEnv(presence.WithRoot(root))
		b := New(driver.WithSysRoot(root), driver.WithMakers(makers), driver.WithPresence(e))
		info := b.Describe()
		require.True(t, b.Available().Available, b.Available().Reason)
		assert.Equal(t, "presence", info.Extra["tier"])
		assert.Equal(t, want, info.Vendor, "facts: %v", info.VendorFacts)
		p, err := b.Properties(1)
		require.NoError(t, err)
		assert.Equal(t, want, p.Vendor)
	})
}
