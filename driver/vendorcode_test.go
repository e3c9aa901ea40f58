package driver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// Code a vendor description carries (its presence function, its adapters)
// runs behind the driver core's recovery and deadline in every tier: a
// panic is that vendor's "not available" with the panic's message, and a
// presence source that hangs is "not available: timed out" within the init
// timeout, its thread left behind. Without them, the panic ended the host
// and the hang blocked it forever.

// libcVendor is a vendor whose "driver" is the C library every test
// process has loaded (its abs(0) is the init, which returns 0) and whose
// other operations are adapters, written in Go: no fixture to build.
// panicOn's adapter panics.
func libcVendor(panicOn Op) *Vendor {
	ok := func(*clib.Func, ...uintptr) int { return 0 }
	put := func(n int32) Adapter {
		return func(_ *clib.Func, args ...uintptr) int {
			*(*int32)(clib.Ptr(args[0])) = n
			return 0
		}
	}
	v := &Vendor{
		Type: "acme", Name: "Acme", ErrorPrefix: "ACME_", VersionBase: 1000, Context: CurrentDevice,
		Library: clib.Library{Name: "libc", Sonames: []string{"libc.so.6"}},
		Symbols: map[Op][]string{OpInit: {"abs"}},
		Adapters: map[Op]Adapter{
			OpDriverVersion: put(13000), OpDeviceCount: put(1), OpDeviceGet: ok, OpDeviceName: ok,
			OpDeviceAttribute: ok, OpSynchronize: ok, OpSetDevice: ok,
		},
	}
	if panicOn != numOps {
		v.Adapters[panicOn] = func(*clib.Func, ...uintptr) int { panic("acme's adapter breaks") }
	}
	return v
}

func TestAdapterPanicsExact(t *testing.T) {
	b := New(libcVendor(numOps))
	if r := b.Available(); !r.Available {
		t.Skipf("the C library cannot serve as a driver here: %s", r.Reason)
	}
	require.NoError(t, b.Synchronize(0))

	t.Run("init", func(t *testing.T) {
		b := New(libcVendor(OpInit))
		r := b.Available()
		assert.False(t, r.Available)
		assert.Contains(t, r.Reason, "acme's adapter breaks")
		_, err := b.DeviceCount()
		assert.ErrorIs(t, err, ErrPanic)
		assert.ErrorIs(t, err, device.ErrNotAvailable)
	})
	t.Run("after init", func(t *testing.T) {
		b := New(libcVendor(OpSynchronize))
		require.True(t, b.Available().Available)
		err := b.Synchronize(0)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrPanic)
		assert.ErrorIs(t, err, device.ErrNotAvailable)
		assert.Contains(t, err.Error(), "acme's adapter breaks")
		assert.Contains(t, err.Error(), "OpSynchronize", "names the operation whose adapter panicked")
		assert.Error(t, b.Synchronize(0), "a second call is refused the same way, not a crash")
	})
}

func TestPresencePanics(t *testing.T) {
	v := libcVendor(numOps)
	v.Presence = func(*presence.Env) []presence.Report { panic("acme's presence breaks") }
	b := New(v, WithPresence(presence.NewEnv()))
	r := b.Available()
	assert.False(t, r.Available)
	assert.Contains(t, r.Reason, "acme's presence breaks")
	assert.False(t, b.Loaded(), "the presence tier loads nothing")

	reports := v.PresenceReports(presence.NewEnv())
	require.Len(t, reports, 1)
	assert.ErrorIs(t, reports[0].Err, presence.ErrPanic)
	assert.ErrorIs(t, reports[0].Err, ErrPanic)
	assert.Contains(t, reports[0].Reason, "acme's presence breaks")
}

func TestPresenceHangs(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	v := libcVendor(numOps)
	v.Presence = func(e *presence.Env) []presence.Report {
		e.Step("ACME-ML: init")
		<-release // a management library that never returns
		return nil
	}
	b := New(v, WithPresence(presence.NewEnv()), WithInitTimeout(200*time.Millisecond))
	start := time.Now()
	r := b.Available()
	// The bound is the timeout: generous, never the hang.
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.False(t, r.Available)
	assert.Contains(t, r.Reason, "acme: presence: ACME-ML: init did not return within 200ms (FLAGOS_PROBE_TIMEOUT)")
	assert.Contains(t, r.Reason, "its thread is left behind")
	assert.Equal(t, "presence", b.Describe().Extra["tier"])
}

// TestImplausibleValues: what a driver answers is checked for the
// invariants every answer keeps: more memory free than there is is an
// error (ErrImplausible), a negative capability is unknown (0).
func TestImplausibleValues(t *testing.T) {
	v := libcVendor(numOps)
	v.Attributes = Attributes{MultiprocessorCount: 16, ComputeCapabilityMajor: 75, ComputeCapabilityMinor: 76}
	v.Adapters[OpDeviceAttribute] = func(_ *clib.Func, args ...uintptr) int {
		*(*int32)(clib.Ptr(args[0])) = -3
		return 0
	}
	v.Symbols[OpMemGetInfo] = []string{"abs"} // resolved, so the feature is on; the adapter answers
	v.Adapters[OpMemGetInfo] = func(_ *clib.Func, args ...uintptr) int {
		*(*uint64)(clib.Ptr(args[0])) = 2 << 30 // free
		*(*uint64)(clib.Ptr(args[1])) = 1 << 30 // total
		return 0
	}
	b := New(v)
	if r := b.Available(); !r.Available {
		t.Skipf("the C library cannot serve as a driver here: %s", r.Reason)
	}
	p, err := b.Properties(0)
	require.NoError(t, err)
	assert.Zero(t, p.Major)
	assert.Zero(t, p.Minor)
	assert.Zero(t, p.MultiProcessors)
	_, _, err = b.MemInfo(0)
	assert.ErrorIs(t, err, ErrImplausible)
	assert.ErrorContains(t, err, "2147483648 bytes free of 1073741824")
}

// TestContainerPanics: the container facts' functions (for CDI specs) are
// vendor code too: a panic is an error matching ErrPanic.
func TestContainerPanics(t *testing.T) {
	c := Container{
		Nodes:      func(*presence.Env, []DeviceRef) ([][]string, []error) { panic("acme's nodes break") },
		Companions: func(string) []string { panic("acme's companions break") },
	}
	_, _, err := c.NodesOf(presence.NewEnv(), []DeviceRef{{Index: 0}})
	assert.ErrorIs(t, err, ErrPanic)
	assert.ErrorContains(t, err, "acme's nodes break")
	_, err = c.CompanionsOf("/usr/lib/libacme.so.1")
	assert.ErrorIs(t, err, ErrPanic)
	assert.ErrorContains(t, err, "acme's companions break")
	var none Container
	nodes, errs, err := none.NodesOf(presence.NewEnv(), nil)
	assert.Nil(t, nodes)
	assert.Nil(t, errs)
	assert.NoError(t, err)
}
