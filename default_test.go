package flagshim

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/vendors"
)

// The first device.Parse on device.Default runs Init: the answer for cuda
// comes only after the alias has been decided.
func TestDefaultRegistryInitialisesOnFirstParse(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), alias.EnvVar+"=")
		return
	}
	assert.Empty(t, probe.Default.Names(), "linking flagshim probes nothing")
	// Every reader of device.Default runs Init first, Types included.
	want := []device.Type{device.CPU, device.FlagOS}
	for _, v := range vendors.All() {
		want = append(want, v.Type)
	}
	slices.Sort(want)
	assert.Equal(t, want, device.Default.Types(), "cpu, flagos and every built-in vendor, sorted")

	_, err := device.Parse("cpu:0")
	require.NoError(t, err)
	rep, err := Init(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, rep.Phases, "Parse ran Init")
	assert.Equal(t, PhaseDrivers, rep.Phases[0].Phase)
	assert.Equal(t, device.CUDA, rep.Alias.From, "the alias was decided")
	assert.NotEmpty(t, rep.Alias.Reason)

	err = AddStep(PhaseVendorCompat, "late", func(context.Context) error { return nil })
	require.ErrorIs(t, err, ErrInitDone)
}
