package gcu

import (
	"strings"
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
	e := presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(EFMLEnvVar, "relative/libefml.so")))
	rs := presenceSources(e)
	require.Len(t, rs, 2)
	assert.Equal(t, SourceEFML, rs[0].Source)
	assert.ErrorIs(t, rs[0].Err, presence.ErrBadOverride)
	assert.Equal(t, presence.SourceNodes, rs[1].Source)
	assert.True(t, rs[1].Available())
	assert.Equal(t, deviceNodes, Vendor().DeviceNodes)
	// The core's own node fallback (a vendor without Presence) reads the
	// same nodes.
	r := presence.Nodes(deviceNodes, e)
	assert.Equal(t, rs[1].Total, r.Total)
}

func TestNodesRealRoot(t *testing.T) {
	// On the real root the answer is whatever this machine has; it must be
	// consistent, not panic, and keep Index in order.
	r := nodes(presence.NewEnv())
	for i, d := range r.Devices {
		assert.Equal(t, i, d.Index)
		assert.True(t, strings.HasPrefix(d.Node, "/dev/"), d.Node)
	}
	assert.NotEmpty(t, r.Reason)
}
