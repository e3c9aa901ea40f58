package gcu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestNodesEnflame(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/gcu0").Char("dev/gcu1").Char("dev/gcu2").File("dev/gcu3", "").
		Char("dev/gcuctl").Char("dev/vgcu0")
	r := nodes(presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "2,0"))))
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	assert.Equal(t, 3, r.Total, "a regular file, the control node and virtual GCUs are not GCUs")
	require.Len(t, r.Devices, 2)
	assert.Equal(t, tr.Path("dev/gcu2"), r.Devices[0].Node)
	assert.Equal(t, tr.Path("dev/gcu0"), r.Devices[1].Node)
	assert.Equal(t, "TOPS_VISIBLE_DEVICES=2,0", r.Visibility)
	assert.Empty(t, r.Notes, "/dev/gcuctl is there")
}

func TestNodesEnflameNoControl(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/gcu0")
	r := nodes(presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup("ENFLAME_VISIBLE_DEVICES", "3"))))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1, "ENFLAME_VISIBLE_DEVICES is the container toolkit's")
	assert.Equal(t, "/dev/gcu* sees 1 device", r.Reason)
	assert.Contains(t, presencetest.Notes(r), tr.Path("dev/gcuctl")+" is missing")
}

func TestNodesEnflameDRS(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/gcu0").Char("dev/gcuctl")
	r := nodes(presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "DRS-1234"))))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "DRS partition")
}

// TestPresenceSources: EFML first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/gcu0").Char("dev/gcuctl")
	rs := presencetest.Fallback(t, presenceSources, tr, SourceEFML, presence.ErrNoLibrary, 1)
	assert.Equal(t, deviceNodes, Vendor().DeviceNodes)
	// The core's own node fallback (a vendor without Presence) reads the
	// same nodes.
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	assert.Equal(t, rs[1].Total, r.Total)
}
