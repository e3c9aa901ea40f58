package presence

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// tree builds a fake root: files (path -> content), char devices (symlinks
// to /dev/null, which stat follows) and symlinks.
type tree struct {
	t    *testing.T
	root string
}

func newTree(t *testing.T) *tree {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/dev/null", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Skip("/dev/null is not a character device here: the device-node tests stand on it")
	}
	return &tree{t: t, root: t.TempDir()}
}

func (tr *tree) file(p, content string) *tree {
	tr.t.Helper()
	full := filepath.Join(tr.root, p)
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(tr.t, os.WriteFile(full, []byte(content), 0o644))
	return tr
}

func (tr *tree) char(p string) *tree { return tr.link(p, "/dev/null") }

func (tr *tree) link(p, target string) *tree {
	tr.t.Helper()
	full := filepath.Join(tr.root, p)
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(tr.t, os.Symlink(target, full))
	return tr
}

// kfdGPU writes a KFD GPU node with VRAM banks (and a system bank that
// must not count).
func (tr *tree) kfdGPU(node int, name string, uniqueID uint64, gfx, domain, location int, vram ...uint64) *tree {
	dir := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", node)
	props := fmt.Sprintf("cpu_cores_count 0\nsimd_count 304\nmem_banks_count %d\ngfx_target_version %d\nvendor_id 4098\n"+
		"location_id %d\ndomain %d\ndrm_render_minor %d\nunique_id %d\nmax_engine_clk_ccompute 2400\n",
		len(vram)+1, gfx, location, domain, 128+node, uniqueID)
	tr.file(dir+"/properties", props).file(dir+"/gpu_id", fmt.Sprint(40000+node)).file(dir+"/name", name+"\n")
	for i, v := range vram {
		tr.file(fmt.Sprintf("%s/mem_banks/%d/properties", dir, i), fmt.Sprintf("heap_type %d\nsize_in_bytes %d\nflags 0\nwidth 4096\nmem_clk_max 1600\n", 1+i%2, v))
	}
	return tr.file(fmt.Sprintf("%s/mem_banks/%d/properties", dir, len(vram)), "heap_type 0\nsize_in_bytes 999999\n")
}

func (tr *tree) kfdCPU(node int) *tree {
	dir := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", node)
	return tr.file(dir+"/properties", "cpu_cores_count 64\nsimd_count 0\nmem_banks_count 1\nunique_id 0\n").file(dir+"/gpu_id", "0").file(dir+"/name", "\n")
}

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestKFD(t *testing.T) {
	tr := newTree(t).kfdCPU(0).kfdGPU(1, "gfx90a", 0x1234abcd5678ef01, 90010, 0, 0xc100, 32<<30, 32<<30).
		kfdGPU(2, "gfx942", 0, 90402, 1, 0x0308, 192<<30).char("dev/kfd").
		file("sys/module/amdgpu/version", "6.8.5\n")
	r := KFD(WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	assert.Equal(t, SourceKFD, r.Source)
	assert.Equal(t, filepath.Join(tr.root, kfdNodes), r.Library)
	assert.Equal(t, "6.8.5", r.DriverVersion)
	assert.Equal(t, 2, r.Total)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, Device{Index: 0, SourceIndex: 1, Name: "gfx90a", UUID: "GPU-1234abcd5678ef01", PCIBusID: "0000:c1:00.0", TotalMemory: 64 << 30, Major: 9, Minor: 0}, r.Devices[0])
	assert.Equal(t, Device{Index: 1, SourceIndex: 2, Name: "gfx942", PCIBusID: "0001:03:01.0", TotalMemory: 192 << 30, Major: 9, Minor: 4}, r.Devices[1], "unique_id 0: no UUID")
	assert.Equal(t, "KFD sees 2 devices", r.Reason)
	assert.True(t, r.Available())

	r = KFD(WithRoot(tr.root), WithLookupEnv(env(ROCRVisibleEnv, "GPU-1234ABCD", HIPVisibleEnv, "0")))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 1, r.Devices[0].SourceIndex)
	assert.Equal(t, "ROCR_VISIBLE_DEVICES=GPU-1234ABCD then HIP_VISIBLE_DEVICES=0", r.Visibility)
	assert.Contains(t, r.Reason, "1 visible through ROCR_VISIBLE_DEVICES=GPU-1234ABCD")

	r = KFD(WithRoot(tr.root), WithLookupEnv(env(ROCRVisibleEnv, "")))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.False(t, r.Available())
}

func TestKFDNoTopology(t *testing.T) {
	r := KFD(WithRoot(t.TempDir()))
	assert.ErrorIs(t, r.Err, ErrNoTopology)
	assert.Contains(t, r.Reason, "amdgpu driver is not loaded")
	assert.Empty(t, r.Devices)
}

func TestKFDNoDevKFD(t *testing.T) {
	tr := newTree(t).kfdCPU(0).kfdGPU(1, "gfx90a", 1, 90010, 0, 0x100, 1<<30).file("dev/kfd", "not a device")
	r := KFD(WithRoot(tr.root), WithLookupEnv(env()))
	assert.ErrorIs(t, r.Err, ErrNoDeviceNode)
	assert.Equal(t, 1, r.Total)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "--device=/dev/kfd")
}

func TestKFDCPUOnly(t *testing.T) {
	tr := newTree(t).kfdCPU(0)
	r := KFD(WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err, "a topology without GPUs answers: zero devices, /dev/kfd not needed")
	assert.Equal(t, 0, r.Total)
	assert.Equal(t, "KFD sees no device", r.Reason)
}

func TestKFDUnreadableNode(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file modes cannot make a node unreadable")
	}
	tr := newTree(t).kfdCPU(0).kfdGPU(1, "gfx90a", 1, 90010, 0, 0x100, 1<<30).kfdGPU(2, "gfx90a", 2, 90010, 0, 0x200, 1<<30).char("dev/kfd")
	require.NoError(t, os.Chmod(filepath.Join(tr.root, "sys/class/kfd/kfd/topology/nodes/1/properties"), 0))
	r := KFD(WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 2, r.Devices[0].SourceIndex)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "KFD node 1: not this process's")
}

func TestNodesNVIDIA(t *testing.T) {
	tr := newTree(t).char("dev/nvidia0").char("dev/nvidia1").char("dev/nvidia10").file("dev/nvidia2", "leftover file").
		char("dev/nvidiactl").char("dev/nvidia-uvm").char("dev/nvidia-modeset").file("dev/nvidia-caps/nvidia-cap1", "")
	r := Nodes(NVIDIA, WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	assert.Equal(t, SourceNodes, r.Source)
	require.Len(t, r.Devices, 3)
	for i, n := range []int{0, 1, 10} {
		assert.Equal(t, Device{Index: i, SourceIndex: n, Node: filepath.Join(tr.root, fmt.Sprintf("dev/nvidia%d", n))}, r.Devices[i])
	}
	assert.Empty(t, r.Notes)

	r = Nodes(NVIDIA, WithRoot(tr.root), WithLookupEnv(env(CUDAVisibleEnv, "2,0")))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, []int{10, 0}, []int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})

	r = Nodes(NVIDIA, WithRoot(tr.root), WithLookupEnv(env(CUDAVisibleEnv, "GPU-8a1f")))
	assert.ErrorIs(t, r.Err, ErrUndecidable)
	assert.Contains(t, r.Reason, "CUDA_VISIBLE_DEVICES=GPU-8a1f")
}

func TestNodesNVIDIANoCtl(t *testing.T) {
	tr := newTree(t).char("dev/nvidia0")
	r := Nodes(NVIDIA, WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 1)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "nvidiactl is missing")
}

func TestNodesMooreThreads(t *testing.T) {
	tr := newTree(t).char("dev/mtgpu.0").char("dev/mtgpu.1").file("dev/mtgpu.x", "").char("dev/mtgpu-ctl")
	r := Nodes(MooreThreads, WithRoot(tr.root), WithLookupEnv(env(MUSAVisibleEnv, "1")))
	require.NoError(t, r.Err)
	assert.Equal(t, 2, r.Total)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, filepath.Join(tr.root, "dev/mtgpu.1"), r.Devices[0].Node)
	assert.Equal(t, "MUSA_VISIBLE_DEVICES=1", r.Visibility)
}

func TestNodesAMD(t *testing.T) {
	tr := newTree(t).char("dev/kfd").char("dev/dri/renderD128").char("dev/dri/renderD129").char("dev/dri/renderD130").char("dev/dri/card0").
		link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu").
		link("sys/class/drm/renderD129/device/driver", "../../../../bus/pci/drivers/i915")
	r := Nodes(AMD, WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 128, r.Devices[0].SourceIndex)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "renderD130: driver unknown")

	r = Nodes(AMD, WithRoot(tr.root), WithLookupEnv(env(HIPVisibleEnv, "1")))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices, "HIP index 1 is past the one GPU")
}

func TestNodesAMDNoKFD(t *testing.T) {
	tr := newTree(t).char("dev/dri/renderD128").link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu")
	r := Nodes(AMD, WithRoot(tr.root), WithLookupEnv(env()))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "--device=/dev/kfd")
}

func TestNodesUnknownVendor(t *testing.T) {
	r := Nodes("intel")
	assert.ErrorIs(t, r.Err, ErrUnknownVendor)
	assert.Contains(t, r.Reason, `"intel"`)
}

func TestNodesRealRoot(t *testing.T) {
	// On the real root the answer is whatever this machine has; it must be
	// consistent, not panic, and keep Index in order.
	for _, v := range []Vendor{NVIDIA, MooreThreads, AMD} {
		r := Nodes(v)
		for i, d := range r.Devices {
			assert.Equal(t, i, d.Index)
			assert.True(t, strings.HasPrefix(d.Node, "/dev/"), d.Node)
		}
		assert.NotEmpty(t, r.Reason, v)
	}
}

func TestParseProps(t *testing.T) {
	got := parseProps("simd_count 304\nunique_id 18446744073709551615\n  domain 1 \nbad line\nneg -1\nhex 0x10\n\nsimd_count 8\n")
	assert.Equal(t, map[string]uint64{"simd_count": 8, "unique_id": 1<<64 - 1, "domain": 1}, got)
}

// FuzzParseProps: any file content parses without panic, into names with
// no space.
func FuzzParseProps(f *testing.F) {
	f.Add("simd_count 304\nunique_id 123\n")
	f.Add("a 1\n\n b  2\n")
	f.Add(" \x00 9")
	f.Fuzz(func(t *testing.T, s string) {
		for k := range parseProps(s) {
			if k == "" || strings.ContainsAny(k, " \n") {
				t.Fatalf("bad name %q from %q", k, s)
			}
		}
	})
}

// FuzzDecimal: decimal accepts exactly the canonical non-negative int32s
// and leading zeros.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{"0", "12", "007", "", "+1", " 1", "2147483648", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := decimal(s)
		if !ok {
			return
		}
		if v < 0 || strings.TrimLeft(s, "0") != strings.TrimLeft(fmt.Sprint(v), "0") {
			t.Fatalf("decimal(%q) = %d", s, v)
		}
	})
}
