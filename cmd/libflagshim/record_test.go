package main

import (
	"encoding/json"
	"fmt"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeGPUs is the environment of a machine with two fake GPUs that the
// fake libcuda and the fake NVML describe alike, in a sysfs tree.
func fakeGPUs(t *testing.T, extra ...string) []string {
	dir := dltest.PrivateDir(t)
	tr := presencetest.NewTree(t)
	for i := 0; i < 2; i++ {
		d := fmt.Sprintf("sys/bus/pci/devices/0000:%02x:00.0/", 0x18+i)
		tr.File(d+"vendor", "0x10de\n").File(d+"device", "0x2330\n").File(d+"class", "0x030200\n").File(d+"numa_node", "0\n")
	}
	return append([]string{
		"FLAGOS_LIBCUDA_PATH=" + vendorstest.Driver(t, cuda.Vendor(), dir),
		"FLAGOS_LIBNVML_PATH=" + vendorstest.Management(t, "nvml", dir),
		"FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1", "FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6",
		"FLAGOS_TEST_ROOT=" + tr.Root,
		"FAKE_NVML_NAMES=Fake H100,Fake H100", "FAKE_CUDA_DEVICE_NAMES=Fake H100,Fake H100",
		"FAKE_NVML_UUIDS=GPU-10111213-1415-1617-1819-1a1b1c1d1e1f,GPU-20212223-2425-2627-2829-2a2b2c2d2e2f",
	}, extra...)
}

// What flagshim_device_json and flagshim_mem_get_info answer, in the C
// library's default tier (presence: NVML, no driver initialized) and in
// the exact tier; each in a child (Init runs once per process).
func TestDeviceRecords(t *testing.T) {
	if !dltest.IsChild(t) {
		for _, tier := range []string{"presence", "exact"} {
			t.Run(tier, func(t *testing.T) {
				dltest.MustChild(t, "TestDeviceRecords", fakeGPUs(t, "FLAGOS_PROBE="+tier)...)
			})
		}
		return
	}
	s, f := deviceJSON("cuda:1")
	require.Equal(t, failNone, f, errorMessage())
	var r device.Record
	require.NoError(t, json.Unmarshal([]byte(s), &r))
	assert.Equal(t, "cuda:1", r.Device)
	assert.Equal(t, "Fake H100", r.Name)
	assert.Equal(t, "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f", r.UUID)
	assert.Equal(t, "0000:19:00.0", r.PCIBusID)
	assert.Equal(t, uint64(80<<30), r.TotalMemory)
	assert.Equal(t, [2]int{9, 0}, [2]int{r.Major, r.Minor})
	assert.Equal(t, "nvidia", r.Vendor)
	assert.Equal(t, 1, r.Index)
	assert.True(t, r.Usable)

	s, f = deviceJSON("cuda")
	require.Equal(t, failNone, f, errorMessage())
	assert.Contains(t, s, `"device":"cuda:0"`, "the current device")

	free, total, f := memGetInfo("cuda:0")
	require.Equal(t, failNone, f, errorMessage())
	assert.Equal(t, uint64(80<<30), total)
	if r.Tier == "presence" {
		assert.Equal(t, uint64(79<<30), free, "NVML's answer (the fake uses 1 GiB)")
	} else {
		assert.Positive(t, free)
		assert.LessOrEqual(t, free, total)
	}

	for _, c := range []struct {
		dev  string
		want failure
		msg  string
	}{
		{"cuda:2", failNoDev, "cuda:2 is out of range"},
		{"cuda:x", failDevice, `invalid device string "cuda:x"`},
		{"cpu", failBackend, "the cpu backend has no device records"},
		{"musa:0", failNoDev, "musa"},
	} {
		_, f := deviceJSON(c.dev)
		assert.Equal(t, c.want, f, c.dev)
		assert.Contains(t, errorMessage(), c.msg, c.dev)
	}
	_, _, f = memGetInfo("cuda:7")
	assert.Equal(t, failNoDev, f)
	_, _, f = memGetInfo("cpu")
	assert.Equal(t, failBackend, f)
}
