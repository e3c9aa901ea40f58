package acme_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/examples/acme"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
)

// A registered vendor whose own Go code panics (its presence function, an
// adapter) must not take the host down, in any tier: the panic is that
// vendor's "not available" with the panic's message. acmepanic is Acme
// with such code, registered (in this binary's processes that the test
// starts, the isolated tier's children included) through the public call.

const (
	panickyEnv                = "ACME_TEST_PANICKY"
	panicky       device.Type = "acmepanic"
	panickyLibEnv             = "FLAGOS_LIBACMEPANIC_PATH"
	presencePanic             = "acmepanic's presence function breaks"
	namePanic                 = "acmepanic's name adapter breaks"
)

func init() {
	if os.Getenv(panickyEnv) == "" {
		return
	}
	v := *acme.Vendor()
	v.Type = panicky
	v.Library.EnvVar = panickyLibEnv
	v.VisibleEnv = nil
	v.DeviceNodes = presence.NodeSpec{}
	v.Presence = func(*presence.Env) []presence.Report { panic(presencePanic) }
	adapters := map[driver.Op]driver.Adapter{}
	for op, a := range v.Adapters {
		adapters[op] = a
	}
	adapters[driver.OpDeviceName] = func(*clib.Func, ...uintptr) int { panic(namePanic) }
	v.Adapters = adapters
	if err := vendors.Register(&v); err != nil {
		panic(err)
	}
}

func TestVendorCodePanics(t *testing.T) {
	lib := suite(t).Build(t)
	for _, tier := range []string{"exact", "presence", "isolated"} {
		t.Run(tier, func(t *testing.T) {
			inChild(t, "TestChildVendorCodePanics", "FLAGOS_PROBE="+tier, "WANT_TIER="+tier, panickyEnv+"=1",
				panickyLibEnv+"="+lib, "FAKE_ACME_DEVICE_COUNT=2", "FLAGOS_TEST_ROOT="+devRoot(t, 2))
		})
	}
}

// TestChildVendorCodePanics: Init and every question survive acmepanic's
// code; the free memory the isolated tier asks the presence function for
// (beside its child) included.
func TestChildVendorCodePanics(t *testing.T) {
	if os.Getenv(childVar) != t.Name() {
		t.Skipf("runs in a process of its own, started by the test that names it")
	}
	_, err := flagshim.Init(context.Background(), flagshim.WithFreeMemory(), flagshim.WithEveryProbe())
	require.NoError(t, err)
	b, err := device.Lookup(panicky)
	require.NoError(t, err)
	r := b.Available()
	switch os.Getenv("WANT_TIER") {
	case "presence":
		assert.False(t, r.Available)
		assert.Contains(t, r.Reason, presencePanic)
	case "exact":
		require.True(t, r.Available, r.Reason)
		_, err := b.Properties(0)
		assert.ErrorIs(t, err, driver.ErrPanic)
		assert.ErrorIs(t, err, device.ErrNotAvailable)
		assert.ErrorContains(t, err, namePanic)
	case "isolated":
		// The child answered (its adapter's panic is a note), and the
		// supervisor's question to the presence function for free
		// memory panicked in this process, recovered.
		require.True(t, r.Available, r.Reason)
		info := b.(device.Describer).Describe()
		assert.Contains(t, info.Extra["error.properties.0"], namePanic)
	default:
		t.Fatal("WANT_TIER unset")
	}
	acmeB, err := device.Lookup(acme.Type)
	require.NoError(t, err)
	assert.True(t, acmeB.Available().Available, "the other vendors are untouched: %s", acmeB.Available().Reason)
}
