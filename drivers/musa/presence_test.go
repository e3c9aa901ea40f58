package musa

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestNodesMooreThreads(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/mtgpu.0").Char("dev/mtgpu.1").File("dev/mtgpu.x", "").Char("dev/mtgpu-ctl")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "1"))))
	require.NoError(t, r.Err)
	assert.Equal(t, 2, r.Total)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, tr.Path("dev/mtgpu.1"), r.Devices[0].Node)
	assert.Equal(t, "MUSA_VISIBLE_DEVICES=1", r.Visibility)
	assert.Empty(t, r.Notes, "MUSA names no control node")
}

func TestNodesMooreThreadsBothForms(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/mtgpu2").Char("dev/mtgpu.0")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup("CUDA_VISIBLE_DEVICES", "1"))))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 2, "CUDA_VISIBLE_DEVICES is not MUSA's")
	assert.Equal(t, tr.Path("dev/mtgpu.0"), r.Devices[0].Node, "/dev/mtgpu.N first")
	assert.Equal(t, tr.Path("dev/mtgpu2"), r.Devices[1].Node)
	assert.Equal(t, "/dev/mtgpu.* sees 2 devices", r.Reason)
}

// TestPresenceSources: MTML first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	presencetest.Fallback(t, presenceSources, presencetest.NewTree(t).Char("dev/mtgpu.0"), SourceMTML, presence.ErrNoLibrary, 1)
	assert.Equal(t, deviceNodes, Vendor().DeviceNodes)
}
