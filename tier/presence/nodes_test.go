package presence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeNodes is a made-up vendor's nodes: /dev/fakegpu.N or /dev/fakegpuN,
// a control node, and a visibility variable with CUDA_VISIBLE_DEVICES'
// rules.
var fakeNodes = presence.NodeSpec{
	What:     "/dev/fakegpu*",
	Dir:      "/dev",
	Prefixes: []string{"fakegpu.", "fakegpu"},
	Control:  []string{"/dev/fakegpuctl"},
	Visible:  "FAKEGPU_VISIBLE_DEVICES",
}

func fakeTree(t *testing.T) *presencetest.Tree {
	return presencetest.NewTree(t).Char("dev/fakegpu.1").Char("dev/fakegpu.0").Char("dev/fakegpu3").
		File("dev/fakegpu2", "a leftover regular file").File("dev/fakegpu.x", "").Char("dev/fakegpu.").
		Char("dev/fakegpuctl").Char("dev/fakegpu-uvm").Char("dev/otherfakegpu4").File("dev/fakegpu-caps/fakegpu5", "")
}

func TestNodes(t *testing.T) {
	tr := fakeTree(t)
	e := presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup()))
	r := presence.Nodes(fakeNodes, e)
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	assert.Equal(t, 3, r.Total)
	require.Len(t, r.Devices, 3, "character devices only, numbered only; each prefix in turn")
	for i, n := range []string{"fakegpu.0", "fakegpu.1", "fakegpu3"} {
		assert.Equal(t, tr.Path("dev/"+n), r.Devices[i].Node)
		assert.Equal(t, i, r.Devices[i].Index)
	}
	assert.Equal(t, []int{0, 1, 3}, sourceIndexes(r.Devices))
	assert.Equal(t, "", r.Visibility)
	assert.Equal(t, "/dev/fakegpu* sees 3 devices", r.Reason)
	assert.Empty(t, r.Notes)
	assert.True(t, r.Available())

	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(fakeNodes.Visible, "2,0"))))
	require.NoError(t, r.Err)
	assert.Equal(t, []int{3, 0}, sourceIndexes(r.Devices))
	assert.Equal(t, []int{0, 1}, []int{r.Devices[0].Index, r.Devices[1].Index})
	assert.Equal(t, "FAKEGPU_VISIBLE_DEVICES=2,0", r.Visibility)
	assert.Equal(t, "/dev/fakegpu* sees 3 devices, 2 visible through FAKEGPU_VISIBLE_DEVICES=2,0", r.Reason)

	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(fakeNodes.Visible, ""))))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices, "set and empty: none")
	assert.Equal(t, 3, r.Total)
	assert.False(t, r.Available())

	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(fakeNodes.Visible, "GPU-8a1f"))))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "nodes carry no UUID")
	assert.Empty(t, r.Devices)
	assert.Equal(t, 3, r.Total)
	assert.Contains(t, r.Reason, "3 /dev/fakegpu* nodes, but FAKEGPU_VISIBLE_DEVICES=GPU-8a1f cannot be resolved from device nodes")

	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(fakeNodes.Visible, "MIG-1"))))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
}

func TestNodesControlMissing(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/fakegpu0")
	r := presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 1)
	assert.Equal(t, []string{tr.Path("dev/fakegpuctl") + " is missing: the runtime needs it"}, r.Notes)

	tr = presencetest.NewTree(t).File("dev/fakegpuctl", "not a device").Char("dev/fakegpu0")
	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	assert.Len(t, r.Notes, 1, "a control node must be a character device")

	tr = presencetest.NewTree(t)
	r = presence.Nodes(fakeNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	require.NoError(t, r.Err, "no node, no folder: an answer of zero devices")
	assert.Empty(t, r.Notes, "without devices a missing control node is not news")
	assert.Equal(t, 0, r.Total)
	assert.Equal(t, "/dev/fakegpu* sees no device", r.Reason)
}

func TestNodesNoVisibilityVariable(t *testing.T) {
	tr := fakeTree(t)
	spec := fakeNodes
	spec.Visible = ""
	r := presence.Nodes(spec, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup("FAKEGPU_VISIBLE_DEVICES", "0", "CUDA_VISIBLE_DEVICES", "0"))))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 3, "a vendor without a variable hides nothing")
	assert.Equal(t, "", r.Visibility)
}

func TestNodesOf(t *testing.T) {
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()))
	devs := []presence.Device{{SourceIndex: 128, Node: "/dev/dri/renderD128"}, {SourceIndex: 130, Node: "/dev/dri/renderD130"}}
	var seen []int
	keepLast := func(all []presence.Device) ([]presence.Device, string, error) {
		for _, d := range all {
			seen = append(seen, d.Index)
		}
		return presence.Renumber(all[1:]), "FAKE=1", nil
	}
	r := presence.NodesOf("/dev/fake*", devs, []string{"a note"}, keepLast, e)
	require.NoError(t, r.Err)
	assert.Equal(t, []int{0, 1}, seen, "the devices are numbered before the visibility rules see them")
	assert.Equal(t, presence.SourceNodes, r.Source)
	assert.Equal(t, 2, r.Total)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, presence.Device{Index: 0, SourceIndex: 130, Node: "/dev/dri/renderD130"}, r.Devices[0])
	assert.Equal(t, "FAKE=1", r.Visibility)
	assert.Equal(t, []string{"a note"}, r.Notes)
	assert.Equal(t, "/dev/fake* sees 2 devices, 1 visible through FAKE=1", r.Reason)

	fail := func([]presence.Device) ([]presence.Device, string, error) {
		return nil, "FAKE=GPU-1", fmt.Errorf("FAKE: %w", presence.ErrUndecidable)
	}
	r = presence.NodesOf("/dev/fake*", devs, nil, fail, e)
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
	assert.Empty(t, r.Devices)
	assert.Equal(t, "FAKE=GPU-1", r.Visibility)
	assert.Contains(t, r.Reason, "2 /dev/fake* nodes, but FAKE=GPU-1 cannot be resolved from device nodes")

	boom := func([]presence.Device) ([]presence.Device, string, error) { panic("boom") }
	r = presence.NodesOf("/dev/fake*", devs, nil, boom, e)
	assert.ErrorIs(t, r.Err, presence.ErrPanic, "a panic is the report's error, not the caller's")
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "boom")
}

// TestNodesOfTooMany: a node count above device.MaxDevices is refused
// before the devices are numbered or filtered.
func TestNodesOfTooMany(t *testing.T) {
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()))
	called := false
	all := func(d []presence.Device) ([]presence.Device, string, error) { called = true; return d, "", nil }
	r := presence.NodesOf("/dev/fake*", make([]presence.Device, 4097), nil, all, e)
	presencetest.TooMany(t, r, 4097)
	assert.False(t, called, "nothing is done with a refused count")

	r = presence.NodesOf("/dev/fake*", make([]presence.Device, 4096), nil, all, e)
	require.NoError(t, r.Err, "4096 is the bound, allowed")
	assert.Len(t, r.Devices, 4096)
	assert.Equal(t, 4095, r.Devices[4095].Index)
}

func TestCharNodesAndNumbered(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/dri/renderD129").Char("dev/dri/renderD128").Char("dev/dri/card0").
		File("dev/dri/renderD130", "").Char("dev/dri/renderD0012").Char("dev/dri/renderD+1").Char("dev/dri/renderD99999999999")
	e := presence.NewEnv(presence.WithRoot(tr.Root))
	got := e.CharNodes("/dev/dri", "renderD")
	assert.Equal(t, []presence.Device{
		{SourceIndex: 12, Node: tr.Path("dev/dri/renderD0012")},
		{SourceIndex: 128, Node: tr.Path("dev/dri/renderD128")},
		{SourceIndex: 129, Node: tr.Path("dev/dri/renderD129")},
	}, got)
	assert.Nil(t, e.CharNodes("/dev/none", "renderD"), "no folder: none")

	ents, err := e.Numbered("/dev/dri", "renderD")
	require.NoError(t, err)
	assert.Equal(t, []presence.Numbered{{N: 12, Name: "renderD0012"}, {N: 128, Name: "renderD128"}, {N: 129, Name: "renderD129"}, {N: 130, Name: "renderD130"}}, ents,
		"Numbered lists any entry, sorted by number")
	_, err = e.Numbered("/dev/none", "")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestSysfsHelpers(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/kfd").File("dev/notdev", "").File("sys/module/amdgpu/version", "  6.8.5\n\n").
		Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/amdgpu/").
		Link("dev/dangling", "/nonexistent/device")
	e := presence.NewEnv(presence.WithRoot(tr.Root))
	assert.True(t, e.IsCharDevice("/dev/kfd"))
	assert.False(t, e.IsCharDevice("/dev/notdev"))
	assert.False(t, e.IsCharDevice("/dev/dangling"))
	assert.False(t, e.IsCharDevice("/dev/absent"))

	v, err := e.ReadAttr("/sys/module/amdgpu/version")
	require.NoError(t, err)
	assert.Equal(t, "6.8.5", v)
	_, err = e.ReadAttr("/sys/module/absent/version")
	assert.ErrorIs(t, err, os.ErrNotExist)

	tr.File("sys/big", string(make([]byte, 1<<20)))
	v, err = e.ReadAttr("/sys/big")
	require.NoError(t, err)
	assert.Less(t, len(v), 1<<20, "a sysfs attribute is read up to a bound")

	drv, err := e.DriverOf("/sys/class/drm/renderD128/device/driver")
	require.NoError(t, err)
	assert.Equal(t, "amdgpu", drv)
	_, err = e.DriverOf("/sys/class/drm/renderD129/device/driver")
	assert.Error(t, err)
}

func TestEnv(t *testing.T) {
	e := presence.NewEnv()
	assert.Equal(t, "/dev/kfd", e.Path("/dev/kfd"), "the default root is /")
	assert.NotNil(t, e.Log())
	t.Setenv("PRESENCE_TEST_SET", "")
	v, ok := e.Lookup("PRESENCE_TEST_SET")
	assert.True(t, ok, "the default lookup is the process's environment, telling empty from unset")
	assert.Equal(t, "", v)
	_, ok = e.Lookup("PRESENCE_TEST_UNSET_" + t.Name())
	assert.False(t, ok)

	e = presence.NewEnv(nil, presence.WithRoot(""), presence.WithLookupEnv(nil), presence.WithLogger(nil))
	assert.Equal(t, "/dev/kfd", e.Path("/dev/kfd"), "an empty root is /")
	assert.NotNil(t, e.Log())
	_, ok = e.Lookup("PRESENCE_TEST_SET")
	assert.True(t, ok, "a nil lookup is os.LookupEnv")

	e = presence.NewEnv(presence.WithRoot("/tmp/root"), presence.WithLookupEnv(presencetest.Lookup("A", "1", "B", "")))
	assert.Equal(t, filepath.Join("/tmp/root", "dev/kfd"), e.Path("/dev/kfd"))
	assert.Equal(t, "1", e.Getenv("A"))
	v, ok = e.Lookup("B")
	assert.True(t, ok)
	assert.Equal(t, "", v)
	assert.Equal(t, "", e.Getenv("C"))
	_, ok = e.Lookup("PRESENCE_TEST_SET")
	assert.False(t, ok, "WithLookupEnv replaces the environment")
}

func sourceIndexes(ds []presence.Device) []int {
	out := []int{}
	for _, d := range ds {
		out = append(out, d.SourceIndex)
	}
	return out
}
