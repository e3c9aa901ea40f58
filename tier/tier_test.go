package tier

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// Check refuses per-device lists longer than the devices and indexes past
// the bound: an isolated child's record facts are checked too.
func TestCheckRecordFacts(t *testing.T) {
	ok := func() Facts {
		return Facts{Result: probe.Result{Available: true, Devices: 2}, Devices: make([]device.Properties, 2),
			Indexes: []int{0, -1}, Parents: []string{"", "GPU-1"}, ReservedMemory: []int64{480 << 20, -1}}
	}
	f := ok()
	assert.NoError(t, f.Check())
	f = ok()
	f.Indexes = []int{0, 1, 2}
	assert.ErrorContains(t, f.Check(), "3 indexes and 2 parents for 2 devices")
	f = ok()
	f.Parents = append(f.Parents, "x")
	assert.ErrorContains(t, f.Check(), "3 parents for 2 devices")
	f = ok()
	f.Indexes[1] = -2
	assert.ErrorContains(t, f.Check(), "device 1: index -2 is outside -1..4095")
	f = ok()
	f.Indexes[0] = device.MaxDevices
	assert.ErrorContains(t, f.Check(), "device 0: index 4096 is outside")
	f = ok()
	f.ReservedMemory = append(f.ReservedMemory, 0)
	assert.ErrorContains(t, f.Check(), "3 reserved-memory values")
	f = ok()
	f.ReservedMemory[1] = -2
	assert.ErrorContains(t, f.Check(), "device 1: -2 bytes reserved")
}
