package mlu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestNodesCambricon(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/cambricon_dev0").Char("dev/cambricon_dev1").Char("dev/cambricon_dev3").
		File("dev/cambricon_dev2", "").Char("dev/cambricon_ctl").Char("dev/cambricon_ipcm0").Char("dev/cambricon-caps/cap_dev0_mi1")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "2,0"))))
	require.NoError(t, r.Err)
	assert.Equal(t, 3, r.Total, "a regular file, the control node, IPCM and MIM instances are not MLUs")
	require.Len(t, r.Devices, 2)
	assert.Equal(t, tr.Path("dev/cambricon_dev3"), r.Devices[0].Node, "ordinal 2 is the third node")
	assert.Equal(t, tr.Path("dev/cambricon_dev0"), r.Devices[1].Node)
	assert.Equal(t, "MLU_VISIBLE_DEVICES=2,0", r.Visibility)
	assert.Empty(t, r.Notes, "/dev/cambricon_ctl is there")
}

func TestNodesCambriconNoControl(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/cambricon_dev0")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup("MUSA_VISIBLE_DEVICES", ""))))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1, "MUSA_VISIBLE_DEVICES is not the MLU's")
	assert.Equal(t, "/dev/cambricon_dev* sees 1 device", r.Reason)
	assert.Contains(t, presencetest.Notes(r), tr.Path("dev/cambricon_ctl")+" is missing")
}

// TestPresenceSources: CNDev first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	presencetest.Fallback(t, presenceSources, presencetest.NewTree(t).Char("dev/cambricon_dev0").Char("dev/cambricon_ctl"), SourceCNDev, presence.ErrNoLibrary, 1)
	assert.Equal(t, deviceNodes, Vendor().DeviceNodes)
}
