package flagshim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
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
	assert.Equal(t, []device.Type{device.CPU, device.CUDA, device.FlagOS, device.HIP, device.Type("kunlunxin"), device.Type("maca"), device.MUSA}, device.Default.Types())

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
