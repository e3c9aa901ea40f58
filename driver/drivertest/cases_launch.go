package drivertest

import (
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// echo3Image has a kernel that copies its two 8-byte arguments into out.
const echo3Image = `fake-module
function echo3 echo ptr u64 u64
function echo4 echo ptr f32 u32 u64
`

// lacksParamInfo says why a vendor's launches are never checked: it binds
// no function that tells a kernel's parameters.
func lacksParamInfo(s *Suite) string {
	if !s.binds(driver.OpFuncGetParamInfo) {
		return "the vendor binds no function that tells a kernel's parameters (OpFuncGetParamInfo)"
	}
	return ""
}

// launchUncheckedSetup builds the fake without the parameter query where
// the vendor binds one (a driver too old to tell).
func launchUncheckedSetup(t *testing.T, s *Suite) []string {
	var defines []string
	if lacksParamInfo(s) == "" {
		defines = []string{"-DFAKE_NO_PARAM_INFO"}
	}
	return withOverride(defines)(t, s)
}

func echoModule(t *testing.T, b *driver.Backend) (device.LoadedModule, device.Ptr) {
	t.Helper()
	require.True(t, b.Available().Available, b.Available().Reason)
	m, err := b.LoadModule(0, []byte(echo3Image), "echo3")
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Unload() })
	out, err := b.Alloc(0, 64)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Free(0, out) })
	return m, out
}

// launchChecked: where the driver tells a kernel's parameters, a launch
// with another count, or an argument of another size, is refused before it
// reaches the driver.
func launchChecked(t *testing.T, s *Suite, b *driver.Backend) {
	m, out := echoModule(t, b)
	one := [3]uint32{1, 1, 1}
	echo3, err := m.Function("echo3")
	require.NoError(t, err)
	err = b.Launch(0, echo3, one, one, 0, out, uint64(5))
	require.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, `Launch "echo3": the kernel takes 3 argument(s), Launch was given 2`)
	err = b.Launch(0, echo3, one, one, 0, out, uint64(5), uint64(7), uint64(9))
	assert.ErrorContains(t, err, "the kernel takes 3 argument(s), Launch was given 4")
	echo4, err := m.Function("echo4")
	require.NoError(t, err)
	err = b.Launch(0, echo4, one, one, 0, out, float64(1.5), uint32(2), uint64(3))
	require.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "argument 1 is 8 byte(s) (float64) but the kernel's parameter 1 is 4 byte(s)")
	require.NoError(t, b.Launch(0, echo4, one, one, 0, out, float32(1.5), uint32(2), uint64(3)), "the right arguments launch")
	require.NoError(t, b.Synchronize(0))
}

// launchUncheckedReadsZeros: where the count cannot be checked, a kernel
// given fewer arguments than it takes reads zeros for the missing ones,
// never the previous launch's values.
func launchUncheckedReadsZeros(t *testing.T, s *Suite, b *driver.Backend) {
	m, out := echoModule(t, b)
	one := [3]uint32{1, 1, 1}
	echo3, err := m.Function("echo3")
	require.NoError(t, err)
	require.NoError(t, b.Launch(0, echo3, one, one, 0, out, uint64(5), uint64(7)))
	require.NoError(t, b.Launch(0, echo3, one, one, 0, out, uint64(6)), "unchecked: the launch is queued")
	require.NoError(t, b.Synchronize(0))
	got := make([]byte, 16)
	require.NoError(t, b.CopyDtoH(0, got, out))
	assert.Equal(t, uint64(6), binary.LittleEndian.Uint64(got[0:]))
	assert.Equal(t, uint64(0), binary.LittleEndian.Uint64(got[8:]), "the missing argument reads zero, not the 7 of the launch before")
}

// launchTurns: goroutines that launch on one stream (one they made, and
// the device's default stream) take turns before the driver: the fake,
// which dwells in each launch (FAKE_LAUNCH_DWELL_US), never finds two
// launches of one stream in the call at once.
func launchTurns(t *testing.T, s *Suite, b *driver.Backend) {
	m, out := echoModule(t, b)
	echo3, err := m.Function("echo3")
	require.NoError(t, err)
	st, err := b.NewStream(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Destroy() })
	one := [3]uint32{1, 1, 1}
	const goroutines, each = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines*each)
	for g := range goroutines {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range each {
				errs <- st.Launch(echo3, one, one, 0, out, uint64(g), uint64(1))
			}
		}()
		go func() {
			defer wg.Done()
			for range each {
				errs <- b.Launch(0, echo3, one, one, 0, out, uint64(g), uint64(2))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, st.Synchronize())
	require.NoError(t, b.Synchronize(0))
	log, err := os.ReadFile(os.Getenv("FAKE_LOG"))
	require.NoError(t, err)
	assert.Equal(t, 2*goroutines*each, strings.Count(string(log), "launch dwell\n"), "every launch dwelt in the fake, alone")
	assert.Zero(t, strings.Count(string(log), "launch overlap"), "two launches of one stream met in the driver")
}
