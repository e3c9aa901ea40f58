package cuda

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestGPUNodes(t *testing.T) {
	info := func(uuid, bus, minor string) string {
		return "Model:           NVIDIA H100 80GB HBM3\nIRQ:             408\nGPU UUID:        " + uuid +
			"\nBus Type:        PCIe\nBus Location:    " + bus + "\nDevice Minor:    " + minor + "\nGPU Excluded:    No\n"
	}
	tr := presencetest.NewTree(t).
		File("proc/driver/nvidia/gpus/0000:18:00.0/information", info("GPU-aaaa", "0000:18:00.0", "3")).
		File("proc/driver/nvidia/gpus/0000:19:00.0/information", info("GPU-bbbb", "0000:19:00.0", "0")).
		File("proc/driver/nvidia/gpus/0000:1a:00.0/information", info("GPU-cccc", "0000:1a:00.0", "x")).
		Char("dev/nvidia3").Char("dev/nvidia0")
	e := presence.NewEnv(presence.WithRoot(tr.Root))

	got, err := gpuNodes1(e, driver.DeviceRef{UUID: "GPU-AAAA"})
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/nvidia3"}, got, "by UUID, whatever its case: the minor is not the index")
	got, err = gpuNodes1(e, driver.DeviceRef{PCIBusID: "00000000:19:00.0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/nvidia0"}, got, "by bus id, NVML's form")
	_, err = gpuNodes1(e, driver.DeviceRef{UUID: "GPU-cccc"})
	assert.ErrorContains(t, err, "is not a number")
	_, err = gpuNodes1(e, driver.DeviceRef{UUID: "GPU-dddd", PCIBusID: "0000:99:00.0"})
	assert.ErrorContains(t, err, "names UUID")

	_, err = gpuNodes1(presence.NewEnv(presence.WithRoot(presencetest.NewTree(t).Root)), driver.DeviceRef{UUID: "GPU-aaaa"})
	assert.ErrorContains(t, err, "lists no GPU")

	tr.File("proc/driver/nvidia/gpus/0000:1b:00.0/information", info("GPU-eeee", "0000:1b:00.0", "5"))
	_, err = gpuNodes1(e, driver.DeviceRef{UUID: "GPU-eeee"})
	assert.ErrorContains(t, err, "nvidia5 is missing", "a node that is not there is not injected")
}

func TestSameVersion(t *testing.T) {
	assert.Equal(t, []string{"/usr/lib/x86_64-linux-gnu/*.so.580.95.05"}, sameVersion("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"))
	assert.Nil(t, sameVersion("/opt/fake/libcuda.so.1"), "no driver version in the name")
	assert.Nil(t, sameVersion("/opt/fake/libcuda.so"))
	assert.Nil(t, sameVersion("/opt/fake/libcuda.so.5[8].1"), "no glob from a name")
}

func gpuNodes1(e *presence.Env, d driver.DeviceRef) ([]string, error) {
	nodes, errs := gpuNodes(e, []driver.DeviceRef{d})
	return nodes[0], errs[0]
}
