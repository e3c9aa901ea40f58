package hip

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// kfdGPU writes a KFD GPU node with VRAM banks (and a system bank that
// must not count).
func kfdGPU(tr *presencetest.Tree, node int, name string, uniqueID uint64, gfx, domain, location int, vram ...uint64) *presencetest.Tree {
	dir := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", node)
	props := fmt.Sprintf("cpu_cores_count 0\nsimd_count 304\nmem_banks_count %d\ngfx_target_version %d\nvendor_id 4098\n"+
		"location_id %d\ndomain %d\ndrm_render_minor %d\nunique_id %d\nmax_engine_clk_ccompute 2400\n",
		len(vram)+1, gfx, location, domain, 128+node, uniqueID)
	tr.File(dir+"/properties", props).File(dir+"/gpu_id", fmt.Sprint(40000+node)).File(dir+"/name", name+"\n")
	for i, v := range vram {
		tr.File(fmt.Sprintf("%s/mem_banks/%d/properties", dir, i), fmt.Sprintf("heap_type %d\nsize_in_bytes %d\nflags 0\nwidth 4096\nmem_clk_max 1600\n", 1+i%2, v))
	}
	return tr.File(fmt.Sprintf("%s/mem_banks/%d/properties", dir, len(vram)), "heap_type 0\nsize_in_bytes 999999\n")
}

func kfdCPU(tr *presencetest.Tree, node int) *presencetest.Tree {
	dir := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", node)
	return tr.File(dir+"/properties", "cpu_cores_count 64\nsimd_count 0\nmem_banks_count 1\nunique_id 0\n").File(dir+"/gpu_id", "0").File(dir+"/name", "\n")
}

func env(root string, kv ...string) *presence.Env {
	return presence.NewEnv(presence.WithRoot(root), presence.WithLookupEnv(presencetest.Lookup(kv...)))
}

func TestKFD(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdCPU(tr, 0)
	kfdGPU(tr, 1, "gfx90a", 0x1234abcd5678ef01, 90010, 0, 0xc100, 32<<30, 32<<30)
	kfdGPU(tr, 2, "gfx942", 0, 90402, 1, 0x0308, 192<<30)
	tr.Char("dev/kfd").File("sys/module/amdgpu/version", "6.8.5\n")
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Equal(t, SourceKFD, r.Source)
	assert.Equal(t, tr.Path(kfdNodes), r.Library)
	assert.Equal(t, "6.8.5", r.DriverVersion)
	assert.Equal(t, 2, r.Total)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, presence.Device{Index: 0, SourceIndex: 1, Name: "gfx90a", UUID: "GPU-1234abcd5678ef01", PCIBusID: "0000:c1:00.0", TotalMemory: 64 << 30, Major: 9, Minor: 0}, r.Devices[0])
	assert.Equal(t, presence.Device{Index: 1, SourceIndex: 2, Name: "gfx942", PCIBusID: "0001:03:01.0", TotalMemory: 192 << 30, Major: 9, Minor: 4}, r.Devices[1], "unique_id 0: no UUID")
	assert.Equal(t, "KFD sees 2 devices", r.Reason)
	assert.True(t, r.Available())

	// Banks whose sizes overflow 64 bits together: the memory is unknown,
	// never their wrapped sum.
	over := presencetest.NewTree(t)
	kfdGPU(over, 1, "gfx90a", 0, 90010, 0, 0xc100, 1<<63, 1<<63+5)
	over.Char("dev/kfd")
	if r := KFD(env(over.Root)); assert.Len(t, r.Devices, 1) {
		assert.Zero(t, r.Devices[0].TotalMemory)
	}

	r = KFD(env(tr.Root, ROCRVisibleDevicesEnv, "GPU-1234ABCD", VisibleDevicesEnv, "0"))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 1, r.Devices[0].SourceIndex)
	assert.Equal(t, "ROCR_VISIBLE_DEVICES=GPU-1234ABCD then HIP_VISIBLE_DEVICES=0", r.Visibility)
	assert.Contains(t, r.Reason, "1 visible through ROCR_VISIBLE_DEVICES=GPU-1234ABCD")

	r = KFD(env(tr.Root, ROCRVisibleDevicesEnv, ""))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.False(t, r.Available())
}

func TestKFDHygonDriverVersion(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdGPU(tr, 1, "gfx928", 7, 90208, 0, 0x100, 64<<30)
	tr.Char("dev/kfd").File("sys/module/hydcu/version", "6.3.8-V1.5.2\n")
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Equal(t, "6.3.8-V1.5.2", r.DriverVersion)
}

func TestKFDNoTopology(t *testing.T) {
	r := KFD(env(t.TempDir()))
	assert.ErrorIs(t, r.Err, ErrNoTopology)
	assert.Contains(t, r.Reason, "amdgpu driver is not loaded")
	assert.Empty(t, r.Devices)
}

func TestKFDNoDevKFD(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdCPU(tr, 0)
	kfdGPU(tr, 1, "gfx90a", 1, 90010, 0, 0x100, 1<<30)
	tr.File("dev/kfd", "not a device")
	r := KFD(env(tr.Root))
	assert.ErrorIs(t, r.Err, presence.ErrNoDeviceNode)
	assert.Equal(t, 1, r.Total)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "--device=/dev/kfd")
}

func TestKFDCPUOnly(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdCPU(tr, 0)
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err, "a topology without GPUs answers: zero devices, /dev/kfd not needed")
	assert.Equal(t, 0, r.Total)
	assert.Equal(t, "KFD sees no device", r.Reason)
}

func TestKFDUndecidable(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdGPU(tr, 1, "gfx90a", 0, 90010, 0, 0x100, 1<<30)
	tr.Char("dev/kfd")
	r := KFD(env(tr.Root, ROCRVisibleDevicesEnv, "GPU-ABBA"))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "a UUID where no GPU has one")
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "ROCR_VISIBLE_DEVICES")
}

func TestKFDUnreadableNode(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file modes cannot make a node unreadable")
	}
	tr := presencetest.NewTree(t)
	kfdCPU(tr, 0)
	kfdGPU(tr, 1, "gfx90a", 1, 90010, 0, 0x100, 1<<30)
	kfdGPU(tr, 2, "gfx90a", 2, 90010, 0, 0x200, 1<<30)
	tr.Char("dev/kfd")
	require.NoError(t, os.Chmod(tr.Path("sys/class/kfd/kfd/topology/nodes/1/properties"), 0))
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 2, r.Devices[0].SourceIndex)
	assert.Contains(t, presencetest.Notes(r), "KFD node 1: not this process's")
}

func TestKFDBrokenNode(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdGPU(tr, 2, "gfx90a", 2, 90010, 0, 0x200, 1<<30)
	tr.File("sys/class/kfd/kfd/topology/nodes/1/name", "no properties file").Char("dev/kfd")
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Contains(t, presencetest.Notes(r), "KFD node 1: ")
}

// TestKFDTooManyNodes: an implausible topology is refused before any node
// is read (each of these would be a note: none has properties).
func TestKFDTooManyNodes(t *testing.T) {
	tr := presencetest.NewBigTree(t).Char("dev/kfd")
	dir := tr.Path(kfdNodes)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := range 2*4096 + 2 {
		require.NoError(t, os.Mkdir(fmt.Sprintf("%s/%d", dir, i), 0o755))
	}
	r := KFD(env(tr.Root))
	assert.ErrorIs(t, r.Err, presence.ErrTooManyDevices)
	assert.Contains(t, r.Reason, "4096")
	assert.Empty(t, r.Devices)
	assert.Empty(t, r.Notes, "no node was read")
}

func TestNodesAMD(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/kfd").Char("dev/dri/renderD128").Char("dev/dri/renderD129").Char("dev/dri/renderD130").Char("dev/dri/card0").
		Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu").
		Link("sys/class/drm/renderD129/device/driver", "../../../../bus/pci/drivers/i915")
	r := nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 128, r.Devices[0].SourceIndex)
	assert.Contains(t, presencetest.Notes(r), "renderD130: driver unknown")
	assert.Equal(t, "/dev/dri/renderD* of amdgpu sees 1 device", r.Reason)

	r = nodes(env(tr.Root, VisibleDevicesEnv, "1"))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices, "HIP index 1 is past the one GPU")

	r = nodes(env(tr.Root, ROCRVisibleDevicesEnv, "GPU-1234"))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "render nodes carry no UUID")
}

func TestNodesHygon(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/kfd").Char("dev/dri/renderD128").Char("dev/dri/renderD129").
		Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/hydcu").
		Link("sys/class/drm/renderD129/device/driver", "../../../../bus/pci/drivers/amdgpu")
	r := nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 2)
}

func TestNodesAMDNoKFD(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/dri/renderD128").Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu")
	r := nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "--device=/dev/kfd")
}

// TestPresenceSources: KFD first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/kfd").Char("dev/dri/renderD128").
		Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu")
	presencetest.Fallback(t, presenceSources, tr, SourceKFD, ErrNoTopology, 1)
}

// devsWith makes n devices with the given UUIDs (nil: none).
func devsWith(n int, uuids []string) []presence.Device {
	out := make([]presence.Device, n)
	for i := range out {
		out[i] = presence.Device{Index: i, SourceIndex: 10 + i}
		if uuids != nil {
			out[i].UUID = uuids[i]
		}
	}
	return out
}

func sources(ds []presence.Device) []int {
	out := []int{}
	for i, d := range ds {
		if d.Index != i {
			panic(fmt.Sprintf("device %d has Index %d", i, d.Index))
		}
		out = append(out, d.SourceIndex-10)
	}
	return out
}

// rocrUUIDs are the devices of the RvdFilter examples of ROCR-Runtime's
// amd_filter_device.h.
var rocrUUIDs = []string{"GPU-BABABABABABABABA", "GPU-ABBAABBAABBAABBA", "GPU-BABAABBAABBABABA", "GPU-ABBABABABABAABBA"}

// TestVisibleHIP: ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES (or
// CUDA_VISIBLE_DEVICES when HIP's is unset or empty) over ROCR's list.
func TestVisibleHIP(t *testing.T) {
	devs := devsWith(4, rocrUUIDs)
	for _, c := range []struct {
		name string
		env  []string
		want []int
		desc string
	}{
		{"nothing set", nil, []int{0, 1, 2, 3}, ""},
		{"ROCR then HIP indexes ROCR's list", []string{ROCRVisibleDevicesEnv, "3,1,2", VisibleDevicesEnv, "2,0"}, []int{2, 3}, "ROCR_VISIBLE_DEVICES=3,1,2 then HIP_VISIBLE_DEVICES=2,0"},
		{"ROCR empty: none", []string{ROCRVisibleDevicesEnv, "", VisibleDevicesEnv, "0"}, []int{}, "ROCR_VISIBLE_DEVICES= then HIP_VISIBLE_DEVICES=0"},
		{"HIP empty is unset", []string{VisibleDevicesEnv, ""}, []int{0, 1, 2, 3}, ""},
		{"CUDA when HIP is empty", []string{VisibleDevicesEnv, "", CUDAVisibleDevicesEnv, "1"}, []int{1}, "CUDA_VISIBLE_DEVICES=1"},
		{"CUDA when HIP is unset", []string{CUDAVisibleDevicesEnv, "3,0"}, []int{3, 0}, "CUDA_VISIBLE_DEVICES=3,0"},
		{"HIP over CUDA", []string{VisibleDevicesEnv, "2", CUDAVisibleDevicesEnv, "1"}, []int{2}, "HIP_VISIBLE_DEVICES=2"},
		{"HIP longer than ROCR", []string{ROCRVisibleDevicesEnv, "1", VisibleDevicesEnv, "0,1"}, []int{1}, "ROCR_VISIBLE_DEVICES=1 then HIP_VISIBLE_DEVICES=0,1"},
		{"HIP UUID over ROCR's list", []string{ROCRVisibleDevicesEnv, "2,3", VisibleDevicesEnv, "GPU-ABBAB"}, []int{3}, "ROCR_VISIBLE_DEVICES=2,3 then HIP_VISIBLE_DEVICES=GPU-ABBAB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, desc, err := vis(env("/", c.env...))(devs)
			require.NoError(t, err)
			assert.Equal(t, c.want, sources(got))
			assert.Equal(t, c.desc, desc)
		})
	}
	_, _, err := vis(env("/", ROCRVisibleDevicesEnv, "GPU-ABBA"))(devsWith(2, nil))
	assert.ErrorIs(t, err, presence.ErrUndecidable)
	assert.Contains(t, err.Error(), ROCRVisibleDevicesEnv)
	_, _, err = vis(env("/", VisibleDevicesEnv, "GPU-ABBA"))(devsWith(2, nil))
	assert.ErrorIs(t, err, presence.ErrUndecidable)
	assert.Contains(t, err.Error(), VisibleDevicesEnv)
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

// vis is the rules HIP's presence sources apply.
func vis(e *presence.Env) func([]presence.Device) ([]presence.Device, string, error) {
	return e.VisibleRules(Visibility)
}
