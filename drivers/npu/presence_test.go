package npu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func env(root string, kv ...string) *presence.Env {
	return presence.NewEnv(presence.WithRoot(root), presence.WithLookupEnv(presencetest.Lookup(kv...)))
}

// A PCIe card machine: davinci0, 1, 2 and 5 with the control nodes.
func cardMachine(t *testing.T) *presencetest.Tree {
	tr := presencetest.NewTree(t)
	for _, n := range []string{"dev/davinci0", "dev/davinci1", "dev/davinci2", "dev/davinci5", "dev/davinci_manager", "dev/devmm_svm", "dev/hisi_hdc"} {
		tr.Char(n)
	}
	return tr.File("dev/davinci7", "a regular file is not a device")
}

func TestNodes(t *testing.T) {
	tr := cardMachine(t)
	r := Nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Equal(t, presence.SourceNodes, r.Source)
	assert.Equal(t, 4, r.Total)
	require.Len(t, r.Devices, 4)
	assert.Equal(t, presence.Device{Index: 3, SourceIndex: 5, Node: tr.Path("dev/davinci5")}, r.Devices[3])
	assert.Equal(t, "/dev/davinci* sees 4 devices", r.Reason)
	assert.Empty(t, r.Notes, "the control nodes are there; davinci_manager is no NPU")

	r = Nodes(env(tr.Root, VisibleDevicesEnv, "1,3"))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, [2]int{1, 5}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex}, "logical ids 1 and 3: the nodes in number order")
	assert.Equal(t, "ASCEND_RT_VISIBLE_DEVICES=1,3", r.Visibility)

	r = Nodes(env(tr.Root, VisibleDevicesEnv, "1,1"))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.Contains(t, presencetest.Notes(r), `"1,1" repeats device 1: the runtime sees no device`)

	r = Nodes(env(tr.Root, ContainerVisibleEnv, "0", "CUDA_VISIBLE_DEVICES", "0"))
	assert.Len(t, r.Devices, 4, "ASCEND_VISIBLE_DEVICES and CUDA's variable are not the runtime's")
}

func TestNodesControl(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/davinci0")
	r := Nodes(env(tr.Root))
	require.Len(t, r.Devices, 1)
	notes := presencetest.Notes(r)
	for _, n := range []string{"dev/davinci_manager", "dev/devmm_svm", "dev/hisi_hdc"} {
		assert.Contains(t, notes, tr.Path(n)+" is missing: the runtime needs it")
	}

	// The SoC form: davinci_manager and svm0 (a 310B host's manager node
	// is davinci_manager_docker).
	tr = presencetest.NewTree(t).Char("dev/davinci0").Char("dev/davinci_manager_docker").Char("dev/svm0")
	r = Nodes(env(tr.Root))
	require.Len(t, r.Devices, 1)
	assert.Empty(t, r.Notes)

	tr = presencetest.NewTree(t)
	r = Nodes(env(tr.Root))
	require.NoError(t, r.Err)
	assert.Empty(t, r.Devices)
	assert.Empty(t, r.Notes, "no NPU: nothing to say of control nodes")
	assert.Equal(t, "/dev/davinci* sees no device", r.Reason)
}

// Without DCMI, the presence tier answers from the nodes.
func TestPresenceSources(t *testing.T) {
	tr := cardMachine(t)
	e := presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libdcmi-presence-absent.so"}
		l.Dirs = nil
	}))
	rs := presenceSources(e)
	require.Len(t, rs, 2)
	assert.Equal(t, SourceDCMI, rs[0].Source)
	assert.ErrorIs(t, rs[0].Err, presence.ErrNoLibrary)
	assert.Equal(t, presence.SourceNodes, rs[1].Source)
	assert.True(t, rs[1].Available())
	assert.Len(t, rs[1].Devices, 4)
}
