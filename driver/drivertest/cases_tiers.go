package drivertest

import (
	"os"
	"testing"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/probe"
)

// presenceLike answers as a presence tier would: what the library says
// without init, and two devices it found elsewhere.
func presenceLike(b *driver.Backend) tier.Facts {
	lib := b.LibraryInfo()
	return tier.Facts{
		Tier:          tier.Presence,
		Result:        probe.Result{Available: lib.Err == nil, Devices: 2, Reason: "presence: 2 devices from a management library"},
		Devices:       []device.Properties{{Name: "P0", TotalMemory: 1 << 30}, {Name: "P1", TotalMemory: 2 << 30}},
		PCIBusIDs:     []string{"0000:01:00.0", ""},
		FreeMemory:    []uint64{1 << 29, 0},
		Library:       lib.Path,
		DriverVersion: b.Vendor().FormatVersion(lib.Version),
	}
}

func factsTierLazy(t *testing.T, s *Suite, _ *driver.Backend) {
	logf := os.Getenv("FAKE_LOG")
	b := s.New(driver.WithFacts(presenceLike))
	assert.Equal(t, tier.Presence, b.Tier())
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	assert.Equal(t, 2, r.Devices)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	p, err := b.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, "P1", p.Name)
	require.NoError(t, b.SetCurrent(1))
	cur, _ := b.Current()
	assert.Equal(t, 1, cur)
	assert.ErrorIs(t, b.SetCurrent(2), device.ErrInvalidIndex)
	id, err := b.PCIBusID(0)
	require.NoError(t, err)
	assert.Equal(t, "0000:01:00.0", id)
	_, err = b.PCIBusID(1)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	free, total, err := b.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{1 << 29, 1 << 30}, [2]uint64{free, total}, "the tier's view, before any init")
	s.checkVersion(t, b)
	info := b.Describe()
	assert.Equal(t, "presence", info.Extra["tier"])
	assert.Equal(t, os.Getenv(libEnv), info.Library)
	lines := readLog(t, logf)
	assert.Equal(t, 1, count(lines, "load"), "the library was opened (its version): %v", lines)
	assert.Zero(t, count(lines, "init"), "nothing initialized the driver: %v", lines)

	// A call that needs a context initializes the driver, once.
	if s.supports("device memory") {
		ptr, err := b.Alloc(0, 64)
		require.NoError(t, err)
		require.NoError(t, b.Free(0, ptr))
	}
	require.NoError(t, b.Synchronize(-1))
	lines = readLog(t, logf)
	assert.Equal(t, 1, count(lines, "init"), "%v", lines)
	_, total, err = b.MemInfo(0)
	if s.binds(driver.OpMemGetInfo) {
		require.NoError(t, err)
		assert.NotEqual(t, uint64(1<<30), total, "after init MemInfo asks the driver")
	} else {
		assert.ErrorIs(t, err, device.ErrNotSupported, "after init MemInfo asks the driver, which cannot tell")
	}
	assert.Equal(t, "true", b.Describe().Extra["exact.available"])
}

func factsTierExactFails(t *testing.T, s *Suite, _ *driver.Backend) {
	b := s.New(driver.WithFacts(presenceLike))
	require.True(t, b.Available().Available, "the presence tier answers without init")
	err := b.Synchronize(0) // a call that needs a context
	require.Error(t, err)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	assert.ErrorIs(t, err, driver.ErrNoDevice)
	assert.ErrorContains(t, err, "the presence tier had answered")
	assert.ErrorContains(t, err, "FLAGOS_PROBE=exact")
	assert.True(t, b.Available().Available, "the probe keeps its tier's answer")
	assert.Equal(t, "false", b.Describe().Extra["exact.available"])
}
