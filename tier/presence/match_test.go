package presence_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// A driver's device is found among the management library's by UUID (case
// aside), else by a PCI address (any form) that no other device shares: a
// GPU and its MIG instances share one, which then names none.
func TestDevicesFind(t *testing.T) {
	gpu0 := presence.Device{UUID: "GPU-aaaa", PCIBusID: "00000000:18:00.0", FreeMemory: 1}
	gpu1 := presence.Device{UUID: "GPU-bbbb", PCIBusID: "00000000:19:00.0", FreeMemory: 2, Partitioned: true}
	mig := presence.Device{UUID: "MIG-cccc", PCIBusID: "00000000:19:00.0", FreeMemory: 3, Parent: "GPU-bbbb"}
	visibleOnly := presence.Device{UUID: "GPU-dddd", PCIBusID: "0000:1a:00.0", FreeMemory: 4}
	x := presence.IndexDevices([]presence.Report{
		{All: []presence.Device{gpu0, gpu1, mig}, Devices: []presence.Device{mig}},
		{Devices: []presence.Device{visibleOnly}}, // a source without All
	})
	for _, tt := range []struct {
		name, uuid, bus string
		want            uint64 // FreeMemory of the device found; 0 none
	}{
		{"by UUID", "GPU-aaaa", "", 1},
		{"by UUID, another case", "gpu-AAAA", "0000:77:00.0", 1},
		{"UUID first", "MIG-cccc", "0000:18:00.0", 3},
		{"by address, sysfs's form", "GPU-ffff", "0000:18:00.0", 1},
		{"by address, CUDA's form", "", "00000000:18:00.0", 1},
		{"a shared address names none", "GPU-ffff", "0000:19:00.0", 0},
		{"from Devices where a source gives no All", "", "0000:1A:00.0", 4},
		{"nothing matches", "GPU-ffff", "0000:99:00.0", 0},
		{"not an address", "", "bogus", 0},
		{"nothing given", "", "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := x.Find(tt.uuid, tt.bus)
			assert.Equal(t, tt.want != 0, ok)
			assert.Equal(t, tt.want, d.FreeMemory)
		})
	}
	_, ok := presence.IndexDevices(nil).Find("GPU-aaaa", "0000:18:00.0")
	assert.False(t, ok, "no reports: nothing found")
}
