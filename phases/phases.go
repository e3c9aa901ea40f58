package phases

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Errors of this package; test them with errors.Is.
var (
	// ErrStarted: the plan has already started running (a second Run, or an
	// AddStep after Run).
	ErrStarted = errors.New("phases: plan already started")
	// ErrDuplicatePhase: two phases share a name.
	ErrDuplicatePhase = errors.New("phases: duplicate phase")
	// ErrInvalidPhase: a phase with an empty name.
	ErrInvalidPhase = errors.New("phases: invalid phase")
	// ErrUnknownPhase: a name given in After or to AddStep names no phase.
	ErrUnknownPhase = errors.New("phases: unknown phase")
	// ErrCycle: the After dependencies form a cycle.
	ErrCycle = errors.New("phases: dependency cycle")
	// ErrDuplicateStep: a phase already has a step of that name.
	ErrDuplicateStep = errors.New("phases: duplicate step")
	// ErrInvalidStep: a step with an empty name or a nil function.
	ErrInvalidStep = errors.New("phases: invalid step")
	// ErrPanic: a step panicked; the error is a *PanicError.
	ErrPanic = errors.New("phases: step panicked")
)

// Phase declares one phase of a plan.
type Phase struct {
	Name  string   // unique, non-empty
	After []string // phases that must run before this one
}

// Result is one row of the report: one step, or one phase without steps.
type Result struct {
	Phase    string
	Step     string // "" for a phase that had no steps
	Start    time.Time
	Duration time.Duration // 0 for a step that did not run
	Err      error         // nil on success; a *PanicError for a panic; ctx.Err() when not run
}

// StepError is how Run reports the error of one step in its joined error.
type StepError struct {
	Phase, Step string
	Err         error
}

func (e *StepError) Error() string {
	if e.Step == "" {
		return e.Phase + ": " + e.Err.Error()
	}
	return e.Phase + "/" + e.Step + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// PanicError is the error recorded for a step that panicked. It matches
// ErrPanic with errors.Is, and, when the panic value is an error, that error
// too.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns ErrPanic and, when the panic value is an error, that error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

type step struct {
	name string
	run  func(context.Context) error
}

// Plan is a set of phases and their steps. Build it with NewPlan; the zero
// value is an empty plan. All methods are safe for concurrent use.
type Plan struct {
	mu      sync.Mutex
	phases  []Phase
	known   map[string]bool
	steps   map[string][]step
	started bool
	log     *zap.Logger
}

// NewPlan returns a plan of the given phases. It does not validate them:
// Validate, Order and Run do.
func NewPlan(ps ...Phase) *Plan {
	p := &Plan{
		phases: make([]Phase, len(ps)),
		known:  make(map[string]bool, len(ps)),
		steps:  make(map[string][]step, len(ps)),
	}
	for i, ph := range ps {
		p.phases[i] = Phase{Name: ph.Name, After: slices.Clone(ph.After)}
		p.known[ph.Name] = true
	}
	return p
}

// SetLogger makes the plan log each step at debug level (fields phase, step,
// duration and error; for a panic, the entry's stack is the panic's). nil restores the default, which
// logs nothing.
func (p *Plan) SetLogger(l *zap.Logger) {
	p.mu.Lock()
	p.log = l
	p.mu.Unlock()
}

// AddStep adds a step to the end of a phase. It fails when the phase is
// unknown, the name is empty or already used in that phase, run is nil, or
// the plan has started (an error wrapping ErrStarted).
func (p *Plan) AddStep(phase, name string, run func(context.Context) error) error {
	return p.AddStepAt(phase, -1, name, run)
}

// AddStepAt is AddStep that places the step at index of its phase (the
// steps from there on move one down); an index outside the phase's steps,
// -1 included, places it last. A program whose own steps must run first
// but are known only when the plan runs adds them at 0, 1, ... then.
func (p *Plan) AddStepAt(phase string, index int, name string, run func(context.Context) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return fmt.Errorf("%w: cannot add step %q to phase %q: steps must be added before Init runs", ErrStarted, name, phase)
	}
	if phase == "" || !p.known[phase] {
		return fmt.Errorf("%w %q for step %q (known: %s)", ErrUnknownPhase, phase, name, p.knownList())
	}
	if name == "" {
		return fmt.Errorf("%w: empty step name in phase %q", ErrInvalidStep, phase)
	}
	if run == nil {
		return fmt.Errorf("%w: step %q of phase %q has a nil function", ErrInvalidStep, name, phase)
	}
	for _, s := range p.steps[phase] {
		if s.name == name {
			return fmt.Errorf("%w %q in phase %q", ErrDuplicateStep, name, phase)
		}
	}
	if p.steps == nil {
		p.steps = make(map[string][]step)
	}
	st := p.steps[phase]
	if index < 0 || index > len(st) {
		index = len(st)
	}
	p.steps[phase] = append(st[:index], append([]step{{name: name, run: run}}, st[index:]...)...)
	return nil
}

// Steps returns the names of the steps of each phase, in the order added.
// Phases without steps are absent. The map is a copy.
func (p *Plan) Steps() map[string][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string][]string, len(p.steps))
	for ph, ss := range p.steps {
		names := make([]string, len(ss))
		for i, s := range ss {
			names[i] = s.name
		}
		out[ph] = names
	}
	return out
}

// Validate reports every problem of the plan's phases, joined: empty or
// duplicate names, unknown After names, and dependency cycles.
func (p *Plan) Validate() error {
	_, err := p.Order()
	return err
}

// Order returns the names of the phases in the order Run runs them:
// topological, ties broken by declaration order. It fails as Validate does.
func (p *Plan) Order() ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.order()
}

// knownList is the sorted, quoted list of phase names. p.mu must be held.
func (p *Plan) knownList() string {
	names := make([]string, 0, len(p.known))
	for n := range p.known {
		names = append(names, fmt.Sprintf("%q", n))
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// order validates and sorts the phases. p.mu must be held.
func (p *Plan) order() ([]string, error) {
	var errs []error
	n := len(p.phases)
	index := make(map[string]int, n) // name -> first declaration
	for i, ph := range p.phases {
		if ph.Name == "" {
			errs = append(errs, fmt.Errorf("%w: phase #%d has an empty name", ErrInvalidPhase, i+1))
			continue
		}
		if j, dup := index[ph.Name]; dup {
			errs = append(errs, fmt.Errorf("%w %q (declared as #%d and #%d)", ErrDuplicatePhase, ph.Name, j+1, i+1))
			continue
		}
		index[ph.Name] = i
	}
	// deps[i]: distinct declaration indexes phase i runs after, in After order.
	deps := make([][]int, n)
	for i, ph := range p.phases {
		if j, ok := index[ph.Name]; !ok || j != i {
			continue // empty or duplicate: reported above
		}
		for _, a := range ph.After {
			j, ok := index[a]
			if !ok {
				errs = append(errs, fmt.Errorf("%w %q in After of phase %q (known: %s)", ErrUnknownPhase, a, ph.Name, p.knownList()))
				continue
			}
			if !slices.Contains(deps[i], j) {
				deps[i] = append(deps[i], j)
			}
		}
	}

	// Kahn's algorithm; among ready phases the first declared goes first.
	pending := make([]int, n) // unmet dependencies
	users := make([][]int, n) // users[j]: phases that run after j
	for i := range deps {
		pending[i] = len(deps[i])
		for _, j := range deps[i] {
			users[j] = append(users[j], i)
		}
	}
	done := make([]bool, n)
	order := make([]string, 0, n)
	for {
		next := -1
		for i := range n {
			if !done[i] && pending[i] == 0 && isFirst(index, p.phases[i].Name, i) {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		done[next] = true
		order = append(order, p.phases[next].Name)
		for _, u := range users[next] {
			pending[u]--
		}
	}
	errs = append(errs, p.cycles(index, deps, done)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return order, nil
}

func isFirst(index map[string]int, name string, i int) bool {
	j, ok := index[name]
	return ok && j == i
}

// cycles names the cycles among the phases that Kahn's algorithm could not
// place. It walks them depth-first in declaration order, so the result is
// deterministic.
func (p *Plan) cycles(index map[string]int, deps [][]int, placed []bool) []error {
	const (
		white = iota
		grey
		black
	)
	n := len(deps)
	color := make([]int, n)
	var errs []error
	var path []int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		path = append(path, i)
		for _, j := range deps[i] {
			switch color[j] {
			case white:
				visit(j)
			case grey:
				k := slices.Index(path, j)
				names := make([]string, 0, len(path)-k+1)
				for _, c := range path[k:] {
					names = append(names, p.phases[c].Name)
				}
				names = append(names, p.phases[j].Name)
				errs = append(errs, fmt.Errorf("%w: %s (\"x -> y\": x runs after y)", ErrCycle, strings.Join(names, " -> ")))
			}
		}
		path = path[:len(path)-1]
		color[i] = black
	}
	for i := range n {
		if !placed[i] && color[i] == white && isFirst(index, p.phases[i].Name, i) {
			visit(i)
		}
	}
	return errs
}

// Run validates the plan, then runs every phase in Order, and the steps of
// each phase in the order added, on the calling goroutine. It returns one
// Result per step (one per phase without steps) in the order run, and the
// errors of all steps joined, each a *StepError. An invalid plan runs
// nothing and stays unstarted. A plan runs once: a later Run returns
// ErrStarted. Once ctx is done, steps not yet started are not run and their
// rows hold ctx.Err().
func (p *Plan) Run(ctx context.Context) ([]Result, error) {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: a plan runs only once", ErrStarted)
	}
	order, err := p.order()
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	p.started = true
	steps := p.steps // never written again once started
	log := p.log
	p.mu.Unlock()

	if log == nil {
		log = zap.NewNop()
	}
	rows := 0
	for _, ph := range order {
		rows += max(1, len(steps[ph]))
	}
	results := make([]Result, 0, rows)
	var errs []error
	for _, ph := range order {
		ss := steps[ph]
		if len(ss) == 0 {
			r := Result{Phase: ph, Start: time.Now(), Err: ctx.Err()}
			results = append(results, r)
			if r.Err != nil {
				errs = append(errs, &StepError{Phase: ph, Err: r.Err})
			}
			logStep(log, r)
			continue
		}
		for _, s := range ss {
			r := Result{Phase: ph, Step: s.name, Start: time.Now()}
			if r.Err = ctx.Err(); r.Err == nil {
				r.Err = call(ctx, s.run)
				r.Duration = time.Since(r.Start)
			}
			results = append(results, r)
			if r.Err != nil {
				errs = append(errs, &StepError{Phase: ph, Step: s.name, Err: r.Err})
			}
			logStep(log, r)
		}
	}
	return results, errors.Join(errs...)
}

// call runs f, turning a panic into a *PanicError.
func call(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return f(ctx)
}

func logStep(log *zap.Logger, r Result) {
	ce := log.Check(zapcore.DebugLevel, "phase step")
	if ce == nil {
		return
	}
	var pe *PanicError
	if errors.As(r.Err, &pe) {
		ce.Stack = string(pe.Stack) // the panicking goroutine's stack, printed after the entry
	}
	ce.Write(
		zap.String("phase", r.Phase),
		zap.String("step", r.Step),
		zap.Duration("duration", r.Duration),
		zap.Error(r.Err),
	)
}
