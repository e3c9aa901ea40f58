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

	"github.com/flagos-ai/flagshim/tier"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/logging"
	"github.com/flagos-ai/flagshim/phases"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/tier/isolated"
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
	// Probe is the tier that answered the vendor backends' probes
	// (FLAGOS_PROBE, or WithProbe).
	Probe tier.Tier
}

// Option configures Init.
type Option func(*config)

type config struct {
	log        *zap.Logger
	tier       tier.Tier // WithProbe: beats FLAGOS_PROBE
	defTier    tier.Tier // WithDefaultProbe: when FLAGOS_PROBE is unset
	noChildren bool
	probeAll   bool   // WithEveryProbe
	freeMemory bool   // WithFreeMemory
	oneCPU     bool   // WithOneCPU
	noShutdown bool   // WithoutShutdown
	isoBehind  bool   // WithIsolatedFallback
	childExe   string // tests: the isolated tier's child binary
}

// WithLogger sets the logger flagshim and its drivers log to. Without it the
// level comes from FLAGOS_LOG, and the default is silence.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) { c.log = l }
}

// WithProbe selects the probe tier, whatever FLAGOS_PROBE says (the CLI's
// --probe): tier.Exact, TierPresence or TierIsolated.
func WithProbe(t tier.Tier) Option { return func(c *config) { c.tier = t } }

// WithDefaultProbe sets the tier used when FLAGOS_PROBE is unset: exact for
// Go programs (the default), isolated for the CLI, presence for the C
// library and Python, whose hosts fork.
func WithDefaultProbe(t tier.Tier) Option { return func(c *config) { c.defTier = t } }

// WithIsolatedFallback makes the presence tier ask the isolated tier about
// a vendor whose driver library is there but whose presence sources found
// no device (no management library and no device node answered): that
// vendor's answer is then the driver's own, from a child process, instead
// of "not available". Where presence can see, its answer stands, at the
// management library's speed; where it cannot, the answer is still exact
// and a crashing or hanging driver still costs only a child. For hosts
// that want both (the CLI's list, compared with nvidia-smi -L). It changes
// nothing outside the presence tier, nor where child processes are refused
// (WithoutChildProcesses).
func WithIsolatedFallback() Option { return func(c *config) { c.isoBehind = true } }

// WithoutChildProcesses tells Init the process is not a Go program of its
// own (the C shared library inside a Python or C++ host): the isolated
// tier, which re-executes the program, is then refused with a clear error.
func WithoutChildProcesses() Option { return func(c *config) { c.noChildren = true } }

// WithEveryProbe makes Init start each built-in vendor backend's probe
// (cuda, musa, ...) as soon as its driver step has registered it, each on
// a goroutine of its own, instead of when the probe is first asked: for
// hosts that will show every backend (the CLI's info, list and explain),
// which then wait for the slowest driver rather than for all of them one
// after the other. flagos still decides its route when first asked, once
// every driver step (plugins' included) has registered its backend. Under
// the exact tier this loads every vendor's library in the process even when
// CUDA answers; without it, Init asks only what the alias rule needs (cuda,
// then flagos's route when there is no CUDA).
func WithEveryProbe() Option { return func(c *config) { c.probeAll = true } }

// WithFreeMemory makes the isolated and exact tiers learn each device's
// free memory and the memory its driver and firmware reserve (which the
// driver's total leaves out: nvidia-smi's memory.total is the record's
// total_memory + reserved_memory), for hosts that show them (the CLI's
// info and query). Both are asked of the vendor's management library
// (NVML, MTML, ...), in this process, never of the driver (which would
// create each device's context: about 150 ms a GPU on an H200), and
// matched to the devices by UUID, else PCI address: the isolated tier asks
// while the child initializes the driver, so that MemInfo answers free
// memory without initializing the driver here; the exact tier asks when a
// device record first needs them (driver.WithManagementMemory), MemInfo
// still asking the driver. A device no management library describes keeps
// them unknown. The presence tier has them from the management library
// anyway.
func WithFreeMemory() Option { return func(c *config) { c.freeMemory = true } }

// WithOneCPU is for a program that initializes drivers and exits soon after
// (a command, like the flagshim CLI): in the exact tier, which initializes
// every driver in this process, Init first keeps the whole process on the
// CPU it runs on, for the rest of its life. A process that initialized CUDA
// pays at its exit for every CPU it ran on, about 1.5-2 ms each on an H200,
// and a Go program runs on several: on one CPU flagshim info's exit takes
// what a C program's does (docs/benchmarks.md). The isolated tier's children
// always keep to one CPU each; the parent, which initializes no driver, is
// left as it is, and so is a presence-tier process (its exit is cheap
// anyway, 0.3 ms on the H200, and 1.8 ms on one CPU). Best effort: where
// the affinity cannot be set, Init goes on (FLAGOS_LOG=debug says why). A
// long-running host must not use it.
func WithOneCPU() Option { return func(c *config) { c.oneCPU = true } }

// WithoutShutdown is for a program that exits soon after Init (a command,
// like the flagshim CLI): the management libraries the presence tier reads
// (and the isolated tier, for WithFreeMemory) are left initialized for the
// process's exit to release, rather than shut down while the user waits:
// nvmlShutdown is about 3 ms of the 30 that flagshim list takes on an
// H100. A library asked again in the process ends the session left open
// first, so no more than one is ever open. The C library passes it too: its
// first answer is part of every host's start, and PyTorch's own fork-safe
// NVML count leaves NVML initialized as well (a child forked afterwards
// inits its own).
func WithoutShutdown() Option { return func(c *config) { c.noShutdown = true } }

// shim is one set of registries with its plan: the process has one (std);
// tests make their own so that cases share no state.
type shim struct {
	devs    *device.Registry
	probes  *probe.Registry
	plan    *phases.Plan
	drivers bool // whether Init adds the built-in driver steps
	getenv  func(string) string

	start  sync.Once
	done   chan struct{} // closed when the run is over
	log    *zap.Logger
	cfg    config
	set    settings
	report *Report
	err    error
	// aliasErr is the alias step's own error, or errAliasNotRun until the
	// step has run: while it is set, cuda has no decided meaning and
	// device.Default must not answer.
	aliasErr error
	// settingsErr is the error of bad settings; device.Default does not
	// answer while it is set.
	settingsErr error
	// note is what a failing cuda call adds to its error (see cudaNote).
	note atomic.Pointer[string]
	iso  *isolated.Supervisor
}

func newShim(devs *device.Registry, probes *probe.Registry, drivers bool) *shim {
	s := &shim{
		devs:    devs,
		probes:  probes,
		drivers: drivers,
		getenv:  os.Getenv,
		done:    make(chan struct{}),
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
	// in the order they are added. The vendors' driver steps are added when
	// Init runs (addDriverSteps): vendors of other modules register from
	// their packages' init, which may run after this one.
	if err := s.plan.AddStep(PhaseEcosystem, StepAlias, s.installAlias); err != nil {
		panic(fmt.Sprintf("flagshim: built-in step %s/%s: %v", PhaseEcosystem, StepAlias, err)) // a bug in this file
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

// ErrInitPending is wrapped by Init's error when its context ended before
// the run was over: the run goes on (see Init), and a later Init, or
// device.Default, waits for it and gets its report.
var ErrInitPending = errors.New("flagshim: Init is still running")

// Init runs the default plan once per process and returns its report.
// Concurrent callers wait for the one run; later calls return the first
// report and error, and their options are ignored. The error joins every
// step's error; the report is complete even then.
//
// ctx bounds how long the caller waits, not the run: the run is detached
// from the caller's cancellation, so a cancelled or expired first Init never
// leaves the process without a decided alias. When ctx ends first, Init
// returns nil and an error wrapping ErrInitPending and ctx.Err(). What bounds
// the run is FLAGOS_PROBE_TIMEOUT (default 30s): a driver whose load or
// init takes longer is "not available: timed out", its stuck thread left
// behind, and the run goes on.
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
	s.start.Do(func() {
		for _, o := range opts {
			o(&s.cfg)
		}
		runCtx := context.WithoutCancel(ctx)
		go func() {
			defer close(s.done)
			s.err = s.run(runCtx)
		}()
	})
	select {
	case <-s.done:
		return s.report, s.err
	case <-ctx.Done():
		select {
		case <-s.done: // finished meanwhile: the report is better than an error
			return s.report, s.err
		default:
		}
		return nil, fmt.Errorf("%w: the caller's context ended first (%w); the run goes on, and a later flagshim.Init or device.Parse waits for it", ErrInitPending, ctx.Err())
	}
}

// errAliasNotRun stands for the alias decision until its step has run.
var errAliasNotRun = errors.New("the ecosystem/alias step did not run")

func (s *shim) initForDefault() error {
	_, err := s.init(context.Background())
	cause := s.settingsErr
	if s.aliasErr != nil && (cause == nil || !strings.Contains(cause.Error(), s.aliasErr.Error())) {
		cause = errors.Join(cause, s.aliasErr)
	}
	if cause == nil {
		return nil
	}
	if errors.Is(cause, errAliasNotRun) && err != nil {
		cause = err
	}
	return fmt.Errorf("flagshim: the cuda alias could not be decided, so device.Default will not answer: %w", cause)
}

func (s *shim) run(ctx context.Context) error {
	var errs []error
	def := s.cfg.defTier
	if def == "" {
		def = tier.Exact
	}
	set, err := readSettings(s.getenv, def)
	if s.cfg.tier != "" {
		set.tier = s.cfg.tier
	}
	if set.tier == tier.Isolated && s.cfg.noChildren {
		err = errors.Join(err, fmt.Errorf("%w: %s=isolated: the isolated tier re-executes the program, and this process is not a Go program of flagshim's (a shared library in another host): use presence or exact", ErrBadSetting, EnvProbe))
	}
	s.set, s.settingsErr = set, err
	s.report.Probe = set.tier
	errs = append(errs, err)
	s.log = s.cfg.log
	if s.log == nil {
		if s.log, err = logging.New(set.logLevel); err != nil {
			s.log = zap.NewNop() // reported above with the other settings
		}
	}
	s.plan.SetLogger(s.log)
	var trace *zap.Logger
	if set.trace {
		trace = s.traceLogger()
		clib.SetTracer(trace) // before the drivers phase: cuInit is traced
	}
	s.startTier(set, trace)

	if s.drivers {
		errs = append(errs, s.addDriverSteps())
	}
	start := time.Now()
	results, err := s.plan.Run(ctx)
	s.report.Phases = results
	errs = append(errs, err)
	if s.iso != nil {
		errs = append(errs, s.iso.Err())
	}
	s.logProbes()
	s.log.Info("flagshim initialised",
		zap.Duration("duration", time.Since(start)),
		zap.String("probe", string(set.tier)),
		zap.Bool("alias", s.report.Alias.Active),
		zap.String("alias_reason", s.report.Alias.Reason),
		zap.Error(err))
	return errors.Join(errs...)
}

// traceLogger is where FLAGOS_TRACE's calls go: Init's logger where it
// logs info, else stderr at info level (the trace asked for is shown
// whatever FLAGOS_LOG says).
func (s *shim) traceLogger() *zap.Logger {
	l := s.log
	if !l.Core().Enabled(zap.InfoLevel) {
		if l, _ = logging.New("info"); l == nil {
			return zap.NewNop()
		}
	}
	return l.Named("trace")
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
	if err := s.checkRoute(); err != nil {
		s.aliasErr = err
		d, _ := alias.Decide(s.probes, s.set.aliasEnv)
		s.report.Alias = d
		return err
	}
	env := s.set.aliasEnv
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
