package cuda

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestNodesNVIDIA(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/nvidia0").Char("dev/nvidia1").Char("dev/nvidia10").File("dev/nvidia2", "leftover file").
		Char("dev/nvidiactl").Char("dev/nvidia-uvm").Char("dev/nvidia-modeset").File("dev/nvidia-caps/nvidia-cap1", "")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	require.Len(t, r.Devices, 3)
	for i, n := range []int{0, 1, 10} {
		assert.Equal(t, presence.Device{Index: i, SourceIndex: n, Node: tr.Path(fmt.Sprintf("dev/nvidia%d", n))}, r.Devices[i])
	}
	assert.Empty(t, r.Notes)
	assert.Equal(t, "/dev/nvidia* sees 3 devices", r.Reason)

	// A node's number is the driver's minor number, not CUDA's index, and
	// the nodes tell no model or bus id to order by: indexes cannot be
	// resolved; a list that shows nothing can.
	r = presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "2,0"))))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
	assert.Contains(t, r.Reason, "CUDA_DEVICE_ORDER")
	r = presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "-1"))))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	one := presencetest.NewTree(t).Char("dev/nvidia3").Char("dev/nvidiactl")
	r = presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(one.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "0"))))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1, "one GPU has one order")
	assert.Equal(t, 3, r.Devices[0].SourceIndex)

	r = presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup(VisibleDevicesEnv, "GPU-8a1f"))))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
	assert.Contains(t, r.Reason, "CUDA_VISIBLE_DEVICES=GPU-8a1f")
}

func TestNodesNVIDIANoCtl(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/nvidia0")
	r := presence.Nodes(deviceNodes, presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup())))
	require.NoError(t, r.Err)
	assert.Len(t, r.Devices, 1)
	assert.Contains(t, presencetest.Notes(r), "nvidiactl is missing")
}

// TestPresenceSources: NVML first, the nodes as the fallback (the kit's
// presence cases prove a refused override is never searched past).
func TestPresenceSources(t *testing.T) {
	presencetest.Fallback(t, presenceSources, presencetest.NewTree(t).Char("dev/nvidia0").Char("dev/nvidiactl"), SourceNVML, presence.ErrNoLibrary, 1)
	assert.Equal(t, deviceNodes, Vendor().DeviceNodes)
}
