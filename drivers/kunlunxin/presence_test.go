package kunlunxin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func env(root string, kv ...string) *presence.Env {
	return presence.NewEnv(presence.WithRoot(root), presence.WithLookupEnv(presencetest.Lookup(kv...)),
		presence.WithSearch(func(l *clib.Library) { l.Sonames, l.Dirs = []string{"libxpuml-presence-absent.so.1"}, nil }))
}

func TestNodes(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/xpuctrl").Char("dev/xpu0").Char("dev/xpu1").Char("dev/xpu3").File("dev/xpu2", "not a device")
	r := presence.Nodes(deviceNodes, env(tr.Root))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 3, "xpuctrl is not numbered; a regular file is not a device")
	assert.Equal(t, [3]int{0, 1, 3}, [3]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex, r.Devices[2].SourceIndex})
	assert.Equal(t, "/dev/xpu* sees 3 devices", r.Reason)
	assert.Empty(t, r.Notes)

	r = presence.Nodes(deviceNodes, env(tr.Root, VisibleDevicesEnv, "2"))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 3, r.Devices[0].SourceIndex)
}

func TestNodesNoControl(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/xpu0")
	r := presence.Nodes(deviceNodes, env(tr.Root))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 1)
	assert.Contains(t, presencetest.Notes(r), "xpuctrl is missing")
}

// TestPresenceSources: XPUML first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	presencetest.Fallback(t, presenceSources, presencetest.NewTree(t).Char("dev/xpuctrl").Char("dev/xpu0"), SourceXPUML, presence.ErrNoLibrary, 1)
}

// TestVisibility: XPU_VISIBLE_DEVICES as lists of indexes (an all-space
// value hides every XPU, as Paddle reads it); XPULINK_VISIBLE_DEVICES,
// read first, and CUDA_DEVICE_ORDER=OAM_ID cannot be decided.
func TestVisibility(t *testing.T) {
	devs := []presence.Device{{SourceIndex: 0}, {SourceIndex: 1}, {SourceIndex: 2}}
	look := func(kv ...string) *presence.Env {
		return presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(kv...)))
	}
	got, applied, err := look(VisibleDevicesEnv, "2,0").VisibleRules(Visibility)(devs)
	require.NoError(t, err)
	assert.Equal(t, "XPU_VISIBLE_DEVICES=2,0", applied)
	require.Len(t, got, 2)
	assert.Equal(t, [2]int{2, 0}, [2]int{got[0].SourceIndex, got[1].SourceIndex})
	got, _, err = look(VisibleDevicesEnv, "  ").VisibleRules(Visibility)(devs)
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, kv := range [][]string{
		{VisibleDevicesEnv, "-1"},
		{VisibleDevicesEnv, "1,1"},
		{LinkVisibleDevicesEnv, "0", VisibleDevicesEnv, "1"},
		{VisibleDevicesEnv, "1", "CUDA_DEVICE_ORDER", "OAM_ID"},
	} {
		_, _, err = look(kv...).VisibleRules(Visibility)(devs)
		assert.ErrorIs(t, err, presence.ErrUndecidable, "%v", kv)
	}
	got, _, err = look("CUDA_DEVICE_ORDER", "OAM_ID").VisibleRules(Visibility)(devs)
	require.NoError(t, err, "every XPU: the order is unknown, the set is not")
	assert.Len(t, got, 3)
}
