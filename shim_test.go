package flagshim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// stubBackend is a backend whose true probe gives a fixed answer.
type stubBackend struct {
	typ    device.Type
	n      int
	reason string
}

func (s stubBackend) Type() device.Type { return s.typ }
func (s stubBackend) Available() probe.Result {
	return probe.Result{Available: s.n > 0, Devices: s.n, Reason: s.reason}
}
func (s stubBackend) DeviceCount() (int, error)                 { return s.n, nil }
func (s stubBackend) Current() (int, error)                     { return 0, nil }
func (s stubBackend) SetCurrent(int) error                      { return nil }
func (s stubBackend) Synchronize(int) error                     { return nil }
func (s stubBackend) Properties(int) (device.Properties, error) { return device.Properties{}, nil }

// newTestShim is a shim with fresh registries and no built-in drivers: the
// test registers its backends through AddStep("drivers", ...), as a plugin
// would.
func newTestShim(t *testing.T, backends ...stubBackend) *shim {
	t.Helper()
	s := newShim(device.NewRegistry(), probe.New(), false)
	for _, b := range backends {
		require.NoError(t, s.addStep(PhaseDrivers, string(b.typ), func(context.Context) error {
			if err := s.devs.Register(b); err != nil {
				return err
			}
			return s.probes.Register(string(b.typ), b.Available)
		}))
	}
	return s
}

var (
	noCUDA   = stubBackend{device.CUDA, 0, "libcuda.so.1: cannot open shared object file: No such file or directory"}
	realCUDA = stubBackend{device.CUDA, 8, "8 devices"}
	flagos2  = stubBackend{device.FlagOS, 2, "routes to musa (2 devices)"}
)

// redirectCUDAToAvailable is the vendor-compat step of the bug report: it
// makes "is cuda available?" answer yes before the ecosystem phase runs.
func redirectCUDAToAvailable(s *shim) func(context.Context) error {
	return func(context.Context) error {
		_, err := s.probes.Redirect("cuda", "vendor_compat", func() probe.Result {
			return probe.Result{Available: true, Devices: 2, Reason: "redirected by vendor compat"}
		})
		return err
	}
}

// TestAliasSurvivesAnEarlierRedirect is the regression test for the reported
// bug: an alias guard read a probe that the vendor_compat phase had already
// redirected, so the alias silently never installed.
func TestAliasSurvivesAnEarlierRedirect(t *testing.T) {
	tests := []struct {
		name       string
		env        string
		cuda       stubBackend
		wantActive bool
		wantDevice device.Device
		wantLookup device.Type
	}{
		{"no cuda runtime: alias installs", "", noCUDA, true, device.Device{Type: device.FlagOS, Index: 1}, device.FlagOS},
		{"FLAGOS_ALIAS_CUDA=0: no alias", "0", noCUDA, false, device.Device{Type: device.CUDA, Index: 1}, device.CUDA},
		{"true cuda runtime: no alias", "", realCUDA, false, device.Device{Type: device.CUDA, Index: 1}, device.CUDA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(alias.EnvVar, tt.env)
			s := newTestShim(t, tt.cuda, flagos2)
			require.NoError(t, s.addStep(PhaseVendorCompat, "redirect_cuda", redirectCUDAToAvailable(s)))

			rep, err := s.init(context.Background())
			require.NoError(t, err)
			require.True(t, s.probes.Live("cuda").Available || !tt.wantActive, "the compat redirect ran")
			assert.Equal(t, tt.wantActive, rep.Alias.Active, rep.Alias.Reason)

			d, err := s.devs.Parse("cuda:1")
			require.NoError(t, err)
			assert.Equal(t, tt.wantDevice, d)
			b, err := s.devs.Lookup(device.CUDA)
			require.NoError(t, err)
			assert.Equal(t, tt.wantLookup, b.Type())

			if tt.wantActive {
				assert.Equal(t, []string{"vendor_compat", alias.Writer}, s.probes.RedirectedBy("cuda"))
				assert.Contains(t, s.probes.Live("cuda").Reason, "alias of flagos")
			} else {
				assert.Equal(t, []string{"vendor_compat"}, s.probes.RedirectedBy("cuda"))
			}
			assert.Equal(t, tt.cuda.Available(), s.probes.Original("cuda"), "the original probe is never touched")
		})
	}
}

func TestInitRunsPhasesInOrderOnce(t *testing.T) {
	t.Setenv(alias.EnvVar, "")
	s := newTestShim(t, noCUDA, flagos2)
	var mu sync.Mutex
	var trail []string
	record := func(name string) func(context.Context) error {
		return func(context.Context) error { mu.Lock(); trail = append(trail, name); mu.Unlock(); return nil }
	}
	// Added out of order on purpose: the plan, not the order of AddStep,
	// decides which phase runs first.
	require.NoError(t, s.addStep(PhaseEcosystem, "eco", record("ecosystem")))
	require.NoError(t, s.addStep(PhaseVendorCompat, "compat", record("vendor_compat")))
	require.NoError(t, s.addStep(PhaseDrivers, "drv", record("drivers")))

	var wg sync.WaitGroup
	reports := make([]*Report, 8)
	for i := range reports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.init(context.Background())
			assert.NoError(t, err)
			reports[i] = r
		}()
	}
	wg.Wait()
	assert.Equal(t, []string{"drivers", "vendor_compat", "ecosystem"}, trail, "each step ran once, in phase order")
	for _, r := range reports {
		assert.Same(t, reports[0], r, "every caller gets the one report")
	}

	var got [][2]string
	for _, r := range reports[0].Phases {
		got = append(got, [2]string{r.Phase, r.Step})
		assert.GreaterOrEqual(t, r.Duration.Nanoseconds(), int64(0))
	}
	assert.Equal(t, [][2]string{
		{PhaseDrivers, "cuda"}, {PhaseDrivers, "flagos"}, {PhaseDrivers, "drv"},
		{PhaseVendorCompat, "compat"},
		{PhaseEcosystem, StepAlias}, {PhaseEcosystem, "eco"},
	}, got, "built-in steps come first in their phase")
	assert.True(t, reports[0].Alias.Active)

	err := s.addStep(PhaseEcosystem, "late", record("late"))
	require.ErrorIs(t, err, ErrInitDone)
	assert.Contains(t, err.Error(), "before flagshim.Init")
}

func TestInitReportsStepErrorsAndGoesOn(t *testing.T) {
	t.Setenv(alias.EnvVar, "")
	s := newTestShim(t, noCUDA, flagos2)
	boom := errors.New("vendor lib missing")
	require.NoError(t, s.addStep(PhaseVendorCompat, "broken", func(context.Context) error { return boom }))
	require.NoError(t, s.addStep(PhaseVendorCompat, "panics", func(context.Context) error { panic("oops") }))

	rep, err := s.init(context.Background())
	require.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "vendor_compat/broken")
	assert.ErrorContains(t, err, "oops")
	assert.True(t, rep.Alias.Active, "an unrelated failure does not stop the alias")
	require.NoError(t, s.initForDefault(), "device.Default still answers: the alias was decided")
}

func TestBadAliasVariableFailsInitAndDefault(t *testing.T) {
	t.Setenv(alias.EnvVar, "perhaps")
	s := newTestShim(t, noCUDA, flagos2)
	_, err := s.init(context.Background())
	require.ErrorIs(t, err, alias.ErrBadEnv)
	err = s.initForDefault()
	require.ErrorIs(t, err, alias.ErrBadEnv)
	assert.ErrorContains(t, err, "FLAGOS_ALIAS_CUDA")
}

func TestAddStepValidates(t *testing.T) {
	s := newTestShim(t)
	require.Error(t, s.addStep("nope", "x", func(context.Context) error { return nil }))
	require.Error(t, s.addStep(PhaseDrivers, "", func(context.Context) error { return nil }))
	require.Error(t, s.addStep(PhaseDrivers, "x", nil))
	require.NoError(t, s.addStep(PhaseDrivers, "x", func(context.Context) error { return nil }))
	require.Error(t, s.addStep(PhaseDrivers, "x", func(context.Context) error { return nil }), "duplicate step")
}

func TestBadLogLevelIsReportedAndInitGoesOn(t *testing.T) {
	t.Setenv(alias.EnvVar, "")
	t.Setenv("FLAGOS_LOG", "loud")
	s := newTestShim(t, noCUDA, flagos2)
	rep, err := s.init(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, `FLAGOS_LOG="loud"`)
	assert.True(t, rep.Alias.Active, "a bad log level does not stop the plan")
}

// An Init whose context is cancelled before the ecosystem phase never
// decides the alias; device.Default must then refuse to answer rather than
// give cuda without a decision.
// TestCancelledInitDoesNotCount: the caller's context bounds its wait, not
// the run. A first Init whose context is cancelled (before or during the
// run) or expires (while a step is slow) returns ErrInitPending; the run
// goes on, and device.Default then answers with the alias decided.
func TestCancelledInitDoesNotCount(t *testing.T) {
	t.Run("cancelled during the run", func(t *testing.T) {
		s := newTestShim(t, noCUDA, flagos2)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, s.addStep(PhaseVendorCompat, "cancel", func(context.Context) error { cancel(); return nil }))
		if _, err := s.init(ctx); err != nil {
			require.ErrorIs(t, err, ErrInitPending)
			require.ErrorIs(t, err, context.Canceled)
		}
		require.NoError(t, s.initForDefault())
		assert.Equal(t, map[device.Type]device.Type{device.CUDA: device.FlagOS}, s.devs.Aliases())
	})
	t.Run("cancelled before", func(t *testing.T) {
		s := newTestShim(t, noCUDA, flagos2)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.init(ctx); err != nil {
			require.ErrorIs(t, err, ErrInitPending)
		}
		require.NoError(t, s.initForDefault())
		rep, err := s.init(context.Background())
		require.NoError(t, err)
		assert.True(t, rep.Alias.Active)
	})
	t.Run("deadline while a step hangs", func(t *testing.T) {
		s := newTestShim(t, noCUDA, flagos2)
		release := make(chan struct{})
		require.NoError(t, s.addStep(PhaseDrivers, "slow", func(context.Context) error { <-release; return nil }))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		rep, err := s.init(ctx)
		assert.Nil(t, rep)
		require.ErrorIs(t, err, ErrInitPending)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "the run goes on")
		close(release)
		rep, err = s.init(context.Background())
		require.NoError(t, err, "a later Init waits for the run")
		assert.True(t, rep.Alias.Active)
		require.NoError(t, s.initForDefault())
	})
}
