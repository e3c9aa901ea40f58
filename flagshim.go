package flagshim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/logging"
	"github.com/flagos-ai/flagshim/phases"
	"github.com/flagos-ai/flagshim/probe"
)

// The phases of the default plan, in order.
const (
	PhaseDrivers      = "drivers"
	PhaseVendorCompat = "vendor_compat"
	PhaseEcosystem    = "ecosystem"
)

// StepAlias is the ecosystem step that installs the cuda->flagos alias.
const StepAlias = "alias"

// ErrInitDone is returned by AddStep once Init has started.
var ErrInitDone = errors.New("flagshim: Init has already run")

// Report says what Init did.
type Report struct {
	Phases []phases.Result
	Alias  alias.Decision
}

// Option configures Init.
type Option func(*config)

type config struct {
	log *zap.Logger
}

// WithLogger sets the logger flagshim and its drivers log to. Without it the
// level comes from FLAGOS_LOG, and the default is silence.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) { c.log = l }
}

// shim is one set of registries with its plan: the process has one (std);
// tests make their own so that cases share no state.
type shim struct {
	devs    *device.Registry
	probes  *probe.Registry
	plan    *phases.Plan
	drivers bool // whether Init adds the built-in driver steps

	once   sync.Once
	log    *zap.Logger
	report *Report
	err    error
	// aliasErr is the alias step's own error, or errAliasNotRun until the
	// step has run: while it is set, cuda has no decided meaning and
	// device.Default must not answer.
	aliasErr error
	// note is what a failing cuda call adds to its error (see cudaNote).
	note atomic.Pointer[string]
}

func newShim(devs *device.Registry, probes *probe.Registry, drivers bool) *shim {
	s := &shim{
		devs:    devs,
		probes:  probes,
		drivers: drivers,
		log:     zap.NewNop(),
		plan: phases.NewPlan(
			phases.Phase{Name: PhaseDrivers},
			phases.Phase{Name: PhaseVendorCompat, After: []string{PhaseDrivers}},
			phases.Phase{Name: PhaseEcosystem, After: []string{PhaseVendorCompat}},
		),
		report:   &Report{},
		aliasErr: errAliasNotRun,
	}
	// flagshim's own steps come first in their phases; plugin steps follow
	// in the order they are added.
	var steps []step
	if drivers {
		steps = s.driverSteps()
	}
	steps = append(steps, step{PhaseEcosystem, StepAlias, s.installAlias})
	for _, st := range steps {
		if err := s.plan.AddStep(st.phase, st.name, st.run); err != nil {
			panic(fmt.Sprintf("flagshim: built-in step %s/%s: %v", st.phase, st.name, err)) // a bug in this file
		}
	}
	return s
}

type step struct {
	phase, name string
	run         func(context.Context) error
}

// std is the process-wide shim behind Init, AddStep and device.Default.
var std = newShim(device.Default, probe.Default, true)

func init() {
	// Hand device.Default its initializer. This does no I/O: Init runs on
	// the first Parse or Lookup, if ever.
	device.Default.OnFirstUse(std.initForDefault)
}

// Init runs the default plan once per process and returns its report.
// Concurrent callers wait for the one run; later calls return the first
// report and error, and their options are ignored. The error joins every
// step's error; the report is complete even then.
func Init(ctx context.Context, opts ...Option) (*Report, error) {
	return std.init(ctx, opts...)
}

// AddStep adds a step to a phase of the default plan ("drivers",
// "vendor_compat" or "ecosystem"). Steps run in the order added, after the
// built-in steps of their phase. Call it before Init, typically from the
// package that provides a backend or a compatibility shim; once Init has
// started it returns an error wrapping ErrInitDone.
func AddStep(phase, name string, run func(context.Context) error) error {
	return std.addStep(phase, name, run)
}

func (s *shim) addStep(phase, name string, run func(context.Context) error) error {
	err := s.plan.AddStep(phase, name, run)
	if errors.Is(err, phases.ErrStarted) {
		return fmt.Errorf("%w: step %s/%s comes too late; add steps (open plugins) before flagshim.Init or the first device.Parse/Lookup", ErrInitDone, phase, name)
	}
	return err
}

func (s *shim) init(ctx context.Context, opts ...Option) (*Report, error) {
	s.once.Do(func() { s.err = s.run(ctx, opts) })
	return s.report, s.err
}

// errAliasNotRun stands for the alias decision until its step has run (a
// cancelled Init may never run it).
var errAliasNotRun = errors.New("the ecosystem/alias step did not run")

func (s *shim) initForDefault() error {
	_, err := s.init(context.Background())
	if s.aliasErr != nil {
		return fmt.Errorf("flagshim: the cuda alias could not be decided, so device.Default will not answer: %w", errors.Join(s.aliasErr, err))
	}
	return nil
}

func (s *shim) run(ctx context.Context, opts []Option) error {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	var errs []error
	s.log = cfg.log
	if s.log == nil {
		var err error
		if s.log, err = logging.FromEnv(); err != nil {
			// A bad FLAGOS_LOG is reported, and flagshim runs silent.
			s.log = zap.NewNop()
			errs = append(errs, fmt.Errorf("flagshim: %w", err))
		}
	}
	s.plan.SetLogger(s.log)

	start := time.Now()
	results, err := s.plan.Run(ctx)
	s.report.Phases = results
	errs = append(errs, err)
	s.logProbes()
	s.log.Info("flagshim initialised",
		zap.Duration("duration", time.Since(start)),
		zap.Bool("alias", s.report.Alias.Active),
		zap.String("alias_reason", s.report.Alias.Reason),
		zap.Error(err))
	return errors.Join(errs...)
}

// logProbes logs, at debug level, what each probe answers now: the original,
// the live answer and who redirected it.
func (s *shim) logProbes() {
	if ce := s.log.Check(zap.DebugLevel, "probe"); ce == nil {
		return
	}
	for _, name := range s.probes.Names() {
		orig, live := s.probes.Original(name), s.probes.Live(name)
		s.log.Debug("probe",
			zap.String("name", name),
			zap.Bool("original_available", orig.Available),
			zap.Int("original_devices", orig.Devices),
			zap.String("original_reason", orig.Reason),
			zap.Bool("live_available", live.Available),
			zap.Int("live_devices", live.Devices),
			zap.String("live_reason", live.Reason),
			zap.Strings("redirected_by", s.probes.RedirectedBy(name)))
	}
}

func (s *shim) installAlias(context.Context) error {
	env := os.Getenv(alias.EnvVar)
	d, _, err := alias.Install(s.devs, s.probes, env)
	s.report.Alias = d
	s.aliasErr = err
	if err != nil {
		return err
	}
	s.log.Debug("alias decided", zap.Bool("active", d.Active), zap.Bool("blocked", d.Blocked),
		zap.String("from", string(d.From)), zap.String("to", string(d.To)), zap.String("reason", d.Reason))
	if d.Blocked {
		flagos := s.probes.Original(string(d.To))
		note := fmt.Sprintf("The %s->%s alias is off (%s=%s) although %s has %d device(s); unset %s to run %s code on %s.",
			d.From, d.To, alias.EnvVar, strings.TrimSpace(env), d.To, flagos.Devices, alias.EnvVar, d.From, d.To)
		s.note.Store(&note)
	}
	return nil
}
