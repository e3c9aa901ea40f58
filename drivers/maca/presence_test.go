package maca

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
		presence.WithSearch(func(l *clib.Library) { l.Sonames, l.Dirs = []string{"libmxsml-presence-absent.so"}, nil }))
}

// metaxNodes is a machine with /dev/mxcd, two metax render nodes, an
// Intel one and one whose driver is unknown.
func metaxNodes(t *testing.T) *presencetest.Tree {
	return presencetest.NewTree(t).Char("dev/mxcd").
		Char("dev/dri/renderD128").Char("dev/dri/renderD129").Char("dev/dri/renderD130").Char("dev/dri/renderD131").Char("dev/dri/card0").
		Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/metax").
		Link("sys/class/drm/renderD129/device/driver", "../../../../bus/pci/drivers/i915").
		Link("sys/class/drm/renderD131/device/driver", "../../../../bus/pci/drivers/metax")
}

func TestNodes(t *testing.T) {
	tr := metaxNodes(t)
	r := nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, [2]int{128, 131}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
	assert.Equal(t, tr.Path("dev/dri/renderD131"), r.Devices[1].Node)
	assert.Contains(t, presencetest.Notes(r), "renderD130: driver unknown")
	assert.Equal(t, "/dev/dri/renderD* of metax sees 2 devices", r.Reason)

	r = nodes(env(tr.Root, CUDAVisibleDevicesEnv, "1"))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 1)
	assert.Equal(t, 131, r.Devices[0].SourceIndex)
	assert.Equal(t, "CUDA_VISIBLE_DEVICES=1", r.Visibility)

	r = nodes(env(tr.Root, CUDAVisibleDevicesEnv, "GPU-1234"))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "a UUID: not documented (and render nodes carry none)")

	r = nodes(env(tr.Root, VisibleDevicesEnv, "0"))
	assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "how the runtime reads MACA_VISIBLE_DEVICES is not confirmed")
	assert.Contains(t, r.Reason, "MACA_VISIBLE_DEVICES")
	assert.Empty(t, r.Devices)
}

func TestNodesNoControlDevice(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/dri/renderD128").Link("sys/class/drm/renderD128/device/driver", "../../../../bus/pci/drivers/metax")
	r := nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.Contains(t, r.Reason, "--device=/dev/mxcd --device=/dev/dri")
}

// TestPresenceSources: MXSML first, the nodes as the fallback.
func TestPresenceSources(t *testing.T) {
	presencetest.Fallback(t, presenceSources, metaxNodes(t), SourceMXSML, presence.ErrNoLibrary, 2)
}

func TestVisible(t *testing.T) {
	devs := []presence.Device{{SourceIndex: 10, UUID: "GPU-aa"}, {SourceIndex: 11, UUID: "GPU-bb"}, {SourceIndex: 12, UUID: "GPU-cc"}}
	for _, c := range []struct {
		name      string
		env       []string
		want      []int
		desc      string
		undecided bool
	}{
		{"nothing set", nil, []int{10, 11, 12}, "", false},
		{"CUDA ordinals", []string{CUDAVisibleDevicesEnv, "2,0"}, []int{12, 10}, "CUDA_VISIBLE_DEVICES=2,0", false},
		{"CUDA empty: not documented", []string{CUDAVisibleDevicesEnv, ""}, nil, "CUDA_VISIBLE_DEVICES=", true},
		{"CUDA UUID: not documented", []string{CUDAVisibleDevicesEnv, "GPU-bb"}, nil, "CUDA_VISIBLE_DEVICES=GPU-bb", true},
		{"MACA set, even empty", []string{VisibleDevicesEnv, "", CUDAVisibleDevicesEnv, "0"}, nil, "MACA_VISIBLE_DEVICES=", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, desc, err := env("/", c.env...).VisibleRules(Visibility)(devs)
			assert.Equal(t, c.desc, desc)
			if c.undecided {
				assert.ErrorIs(t, err, presence.ErrUndecidable)
				return
			}
			require.NoError(t, err)
			ids := []int{}
			for i, d := range got {
				assert.Equal(t, i, d.Index)
				ids = append(ids, d.SourceIndex)
			}
			assert.Equal(t, c.want, ids)
		})
	}
}
