package presencetest

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// TooMany checks the report of a source whose library claimed n devices,
// more than device.MaxDevices: the error is ErrTooManyDevices, the reason
// names n and the bound, and no device was kept.
func TooMany(t testing.TB, r presence.Report, n uint64) {
	t.Helper()
	assert.ErrorIs(t, r.Err, presence.ErrTooManyDevices)
	assert.Contains(t, r.Reason, strconv.FormatUint(n, 10), "the reason names the count")
	assert.Contains(t, r.Reason, strconv.Itoa(device.MaxDevices), "the reason names the bound")
	assert.Empty(t, r.Devices)
	assert.Zero(t, r.Total)
	assert.False(t, r.Available())
}

// Allocated runs f and returns the bytes the Go heap allocated meanwhile
// (runtime.MemStats.TotalAlloc, every goroutine's): to show that a source
// allocated nothing for a count it refused.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
