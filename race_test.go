package flagshim

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// TestEverythingAtOnce runs Init, Parse, Lookup, Live, Original, Redirect and
// its undo, Install and its undo from many goroutines at once. Under -race
// it proves the registries are safe to share; the assertions prove that no
// reader ever sees a half-applied state.
func TestEverythingAtOnce(t *testing.T) {
	t.Setenv(alias.EnvVar, "")
	s := newTestShim(t, noCUDA, flagos2)

	const workers = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	run := func(f func(i int)) {
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for range 100 {
					f(i)
				}
			}()
		}
	}
	run(func(int) {
		rep, err := s.init(context.Background())
		assert.NoError(t, err)
		assert.True(t, rep.Alias.Active)
	})
	run(func(int) {
		d, err := s.devs.Parse("cuda:1")
		if err != nil { // before the drivers step registered cuda
			assert.ErrorIs(t, err, device.ErrUnknownType)
			return
		}
		assert.Contains(t, []device.Type{device.CUDA, device.FlagOS}, d.Type)
		assert.Equal(t, 1, d.Index)
		if b, err := s.devs.Lookup(device.CUDA); err == nil {
			assert.Contains(t, []device.Type{device.CUDA, device.FlagOS}, b.Type())
		}
	})
	run(func(i int) {
		restore, err := s.probes.Redirect("cuda", fmt.Sprintf("compat%d", i), func() probe.Result {
			return probe.Result{Available: true, Devices: 1}
		})
		if err != nil { // before the drivers step registered the probe
			assert.ErrorIs(t, err, probe.ErrUnknown)
			return
		}
		assert.False(t, s.probes.Original("cuda").Available, "the original never changes")
		_ = s.probes.Live("cuda")
		restore()
	})
	run(func(int) {
		// Install on registries of its own, racing with the shared ones.
		devs := device.NewRegistry()
		probes := probe.New()
		require.NoError(t, devs.Register(flagos2))
		require.NoError(t, probes.Register("cuda", noCUDA.Available))
		require.NoError(t, probes.Register("flagos", flagos2.Available))
		d, undo, err := alias.Install(devs, probes, "")
		assert.NoError(t, err)
		assert.True(t, d.Active)
		undo()
		assert.Empty(t, devs.Aliases(), "undo removes what Install applied")
	})
	close(start)
	wg.Wait()

	d, err := s.devs.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: device.FlagOS, Index: 1}, d)
	assert.Equal(t, []string{alias.Writer}, s.probes.RedirectedBy("cuda"), "every compat redirect was undone; the alias's stays")
}
