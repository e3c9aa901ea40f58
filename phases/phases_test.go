package phases_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flagos-ai/flagshim/phases"
)

func ph(name string, after ...string) phases.Phase {
	return phases.Phase{Name: name, After: after}
}

func ok(context.Context) error { return nil }

func TestOrder(t *testing.T) {
	tests := []struct {
		name   string
		phases []phases.Phase
		want   []string
	}{
		{"empty", nil, []string{}},
		{"single", []phases.Phase{ph("a")}, []string{"a"}},
		{"independent keep declaration order", []phases.Phase{ph("c"), ph("a"), ph("b")}, []string{"c", "a", "b"}},
		{"chain declared backwards", []phases.Phase{ph("c", "b"), ph("b", "a"), ph("a")}, []string{"a", "b", "c"}},
		{"diamond", []phases.Phase{ph("a"), ph("b", "a"), ph("c", "a"), ph("d", "b", "c")}, []string{"a", "b", "c", "d"}},
		{"diamond ties by declaration", []phases.Phase{ph("d", "b", "c"), ph("c", "a"), ph("b", "a"), ph("a")}, []string{"a", "c", "b", "d"}},
		{"tie prefers earlier declared ready phase", []phases.Phase{ph("x", "a"), ph("a"), ph("y")}, []string{"a", "x", "y"}},
		{"repeated dependency", []phases.Phase{ph("b", "a", "a"), ph("a")}, []string{"a", "b"}},
		{"flagshim-like", []phases.Phase{
			ph("env"), ph("drivers", "env"), ph("alias", "drivers"), ph("plugins", "alias"), ph("report", "plugins"),
		}, []string{"env", "drivers", "alias", "plugins", "report"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := phases.NewPlan(tt.phases...)
			require.NoError(t, p.Validate())
			got, err := p.Order()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			// Deterministic: the same plan always gives the same order.
			again, err := phases.NewPlan(tt.phases...).Order()
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name     string
		phases   []phases.Phase
		is       []error
		contains []string
	}{
		{"duplicate", []phases.Phase{ph("a"), ph("b"), ph("a")}, []error{phases.ErrDuplicatePhase}, []string{`"a"`, "#1", "#3"}},
		{"empty name", []phases.Phase{ph("a"), ph("")}, []error{phases.ErrInvalidPhase}, []string{"#2", "empty"}},
		{"unknown dependency", []phases.Phase{ph("a"), ph("b", "zz")}, []error{phases.ErrUnknownPhase}, []string{`"zz"`, `"b"`, `"a", "b"`}},
		{"self dependency", []phases.Phase{ph("a", "a")}, []error{phases.ErrCycle}, []string{"a -> a"}},
		{"two-cycle", []phases.Phase{ph("a", "b"), ph("b", "a")}, []error{phases.ErrCycle}, []string{"a -> b -> a"}},
		{"three-cycle", []phases.Phase{ph("a", "c"), ph("b", "a"), ph("c", "b")}, []error{phases.ErrCycle}, []string{"a -> c -> b -> a"}},
		{"cycle behind a bystander", []phases.Phase{ph("x", "a"), ph("ok"), ph("a", "b"), ph("b", "a")}, []error{phases.ErrCycle}, []string{"a -> b -> a"}},
		{"two disjoint cycles", []phases.Phase{ph("a", "b"), ph("b", "a"), ph("c", "d"), ph("d", "c")}, []error{phases.ErrCycle}, []string{"a -> b -> a", "c -> d -> c"}},
		{"all problems at once", []phases.Phase{ph("a", "a"), ph("a"), ph("b", "nope")},
			[]error{phases.ErrCycle, phases.ErrDuplicatePhase, phases.ErrUnknownPhase}, []string{"a -> a", `"nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := phases.NewPlan(tt.phases...)
			err := p.Validate()
			require.Error(t, err)
			for _, want := range tt.is {
				assert.ErrorIs(t, err, want)
			}
			for _, s := range tt.contains {
				assert.Contains(t, err.Error(), s)
			}
			order, oerr := p.Order()
			assert.Nil(t, order)
			assert.Equal(t, err.Error(), oerr.Error())

			// Run refuses, runs nothing, and leaves the plan unstarted.
			res, rerr := p.Run(context.Background())
			assert.Nil(t, res)
			assert.Equal(t, err.Error(), rerr.Error())
			assert.NotErrorIs(t, rerr, phases.ErrStarted)
		})
	}
}

func TestAddStepErrors(t *testing.T) {
	p := phases.NewPlan(ph("a"), ph("b"))
	require.NoError(t, p.AddStep("a", "s", ok))
	tests := []struct {
		name, phase, step string
		run               func(context.Context) error
		is                error
		contains          string
	}{
		{"unknown phase", "zz", "s", ok, phases.ErrUnknownPhase, `"zz"`},
		{"unknown lists known", "zz", "s", ok, phases.ErrUnknownPhase, `known: "a", "b"`},
		{"empty phase", "", "s", ok, phases.ErrUnknownPhase, `""`},
		{"empty step", "a", "", ok, phases.ErrInvalidStep, "empty step name"},
		{"nil run", "a", "t", nil, phases.ErrInvalidStep, "nil function"},
		{"duplicate step", "a", "s", ok, phases.ErrDuplicateStep, `"s" in phase "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.AddStep(tt.phase, tt.step, tt.run)
			require.ErrorIs(t, err, tt.is)
			assert.Contains(t, err.Error(), tt.contains)
		})
	}
	// The same step name in another phase is fine.
	require.NoError(t, p.AddStep("b", "s", ok))
	assert.Equal(t, map[string][]string{"a": {"s"}, "b": {"s"}}, p.Steps())
}

func TestStepOrderAndRows(t *testing.T) {
	p := phases.NewPlan(ph("late", "early"), ph("empty", "early"), ph("early"))
	var got []string
	rec := func(s string) func(context.Context) error {
		return func(context.Context) error { got = append(got, s); return nil }
	}
	for _, s := range []string{"3", "1", "2"} {
		require.NoError(t, p.AddStep("late", "l"+s, rec("late/l"+s)))
	}
	for _, s := range []string{"b", "a"} {
		require.NoError(t, p.AddStep("early", s, rec("early/"+s)))
	}
	assert.Equal(t, map[string][]string{"late": {"l3", "l1", "l2"}, "early": {"b", "a"}}, p.Steps())

	res, err := p.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"early/b", "early/a", "late/l3", "late/l1", "late/l2"}, got)

	var rows []string
	for i, r := range res {
		rows = append(rows, r.Phase+"/"+r.Step)
		assert.NoError(t, r.Err)
		assert.GreaterOrEqual(t, r.Duration, time.Duration(0))
		assert.False(t, r.Start.IsZero())
		if i > 0 {
			assert.False(t, r.Start.Before(res[i-1].Start), "row %d starts before row %d", i, i-1)
		}
	}
	assert.Equal(t, []string{"early/b", "early/a", "late/l3", "late/l1", "late/l2", "empty/"}, rows)
}

type codeErr struct{ code int }

func (e codeErr) Error() string { return fmt.Sprintf("code %d", e.code) }

func TestErrorsAndPanics(t *testing.T) {
	errBoom := errors.New("boom")
	errInner := errors.New("inner")
	p := phases.NewPlan(ph("one"), ph("two", "one"))
	var ran []string
	add := func(phase, name string, f func() error) {
		require.NoError(t, p.AddStep(phase, name, func(context.Context) error {
			ran = append(ran, phase+"/"+name)
			return f()
		}))
	}
	add("one", "fails", func() error { return errBoom })
	add("one", "panics", func() error { panic("kaput") })
	add("one", "fine", func() error { return nil })
	add("two", "panics-error", func() error { panic(fmt.Errorf("wrapped: %w", errInner)) })
	add("two", "typed", func() error { return codeErr{7} })
	add("two", "nil-panic", func() error { panic(nil) })

	res, err := p.Run(context.Background())
	require.Error(t, err)
	assert.Equal(t, []string{"one/fails", "one/panics", "one/fine", "two/panics-error", "two/typed", "two/nil-panic"}, ran, "errors and panics must not stop other steps")
	require.Len(t, res, 6)

	// Result rows keep the step's own error.
	assert.ErrorIs(t, res[0].Err, errBoom)
	assert.Equal(t, "boom", res[0].Err.Error())
	assert.NoError(t, res[2].Err)

	var pe *phases.PanicError
	require.ErrorAs(t, res[1].Err, &pe)
	assert.Equal(t, "kaput", pe.Value)
	assert.Contains(t, string(pe.Stack), "phases_test")
	assert.ErrorIs(t, res[1].Err, phases.ErrPanic)
	assert.Contains(t, res[1].Err.Error(), "kaput")

	assert.ErrorIs(t, res[3].Err, phases.ErrPanic)
	assert.ErrorIs(t, res[3].Err, errInner, "a panic with an error value unwraps to it")
	assert.ErrorIs(t, res[5].Err, phases.ErrPanic)

	// The joined error: every failure, each prefixed with phase/step.
	assert.ErrorIs(t, err, errBoom)
	assert.ErrorIs(t, err, phases.ErrPanic)
	assert.ErrorIs(t, err, errInner)
	var ce codeErr
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 7, ce.code)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, "one/fails: boom", lines[0])
	assert.Equal(t, "one/panics: panic: kaput", lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "two/panics-error: panic: wrapped: inner"), lines[2])
	assert.Equal(t, "two/typed: code 7", lines[3])
	assert.True(t, strings.HasPrefix(lines[4], "two/nil-panic: panic: "), lines[4])

	var se *phases.StepError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "one", se.Phase)
	assert.Equal(t, "fails", se.Step)
}

func TestContextCancel(t *testing.T) {
	t.Run("cancelled mid-run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := phases.NewPlan(ph("a"), ph("b", "a"), ph("c", "b"))
		var ran []string
		step := func(name string, f func()) {
			phase := name[:1]
			require.NoError(t, p.AddStep(phase, name, func(context.Context) error {
				ran = append(ran, name)
				if f != nil {
					f()
				}
				return nil
			}))
		}
		step("a1", nil)
		step("a2", cancel)
		step("a3", nil)
		step("b1", nil)
		res, err := p.Run(ctx)
		assert.Equal(t, []string{"a1", "a2"}, ran)
		require.Len(t, res, 5)
		assert.NoError(t, res[0].Err)
		assert.NoError(t, res[1].Err, "the step that cancelled had started and succeeded")
		for _, r := range res[2:] {
			assert.ErrorIs(t, r.Err, context.Canceled, "%s/%s", r.Phase, r.Step)
			assert.Zero(t, r.Duration)
		}
		assert.Equal(t, "c", res[4].Phase)
		assert.Equal(t, "", res[4].Step)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "a/a3: context canceled")
		assert.Contains(t, err.Error(), "b/b1: context canceled")
	})
	t.Run("cancelled before run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := phases.NewPlan(ph("a"))
		called := false
		require.NoError(t, p.AddStep("a", "s", func(context.Context) error { called = true; return nil }))
		res, err := p.Run(ctx)
		assert.False(t, called)
		require.Len(t, res, 1)
		assert.ErrorIs(t, res[0].Err, context.Canceled)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("step sees ctx", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "v")
		p := phases.NewPlan(ph("a"))
		var got any
		require.NoError(t, p.AddStep("a", "s", func(ctx context.Context) error { got = ctx.Value(key{}); return nil }))
		_, err := p.Run(ctx)
		require.NoError(t, err)
		assert.Equal(t, "v", got)
	})
}

func TestRunOnce(t *testing.T) {
	p := phases.NewPlan(ph("a"))
	n := 0
	require.NoError(t, p.AddStep("a", "s", func(context.Context) error { n++; return nil }))
	_, err := p.Run(context.Background())
	require.NoError(t, err)

	res, err := p.Run(context.Background())
	assert.ErrorIs(t, err, phases.ErrStarted)
	assert.Nil(t, res)
	assert.Equal(t, 1, n)

	err = p.AddStep("a", "late", ok)
	require.ErrorIs(t, err, phases.ErrStarted)
	assert.Contains(t, err.Error(), "steps must be added before Init runs")
	assert.Contains(t, err.Error(), `"late"`)
	assert.Equal(t, map[string][]string{"a": {"s"}}, p.Steps())
}

func TestAddStepDuringRun(t *testing.T) {
	// A step that adds a step: the plan has started, so it is refused.
	p := phases.NewPlan(ph("a"), ph("b", "a"))
	var inner error
	require.NoError(t, p.AddStep("a", "adder", func(context.Context) error {
		inner = p.AddStep("b", "late", ok)
		return nil
	}))
	res, err := p.Run(context.Background())
	require.NoError(t, err)
	assert.ErrorIs(t, inner, phases.ErrStarted)
	require.Len(t, res, 2)
	assert.Equal(t, "", res[1].Step)
}

func TestConcurrentAddStepAndRun(t *testing.T) {
	for round := range 20 {
		p := phases.NewPlan(ph("a"), ph("b", "a"))
		var mu sync.Mutex
		ran := map[string]bool{}
		var wg sync.WaitGroup
		const adders = 8
		accepted := make([][]string, adders)
		start := make(chan struct{})
		for g := range adders {
			wg.Go(func() {
				<-start
				for i := range 25 {
					name := fmt.Sprintf("g%d-%d", g, i)
					phase := []string{"a", "b"}[i%2]
					err := p.AddStep(phase, name, func(context.Context) error {
						mu.Lock()
						ran[phase+"/"+name] = true
						mu.Unlock()
						return nil
					})
					if err != nil {
						assert.ErrorIs(t, err, phases.ErrStarted)
						continue
					}
					accepted[g] = append(accepted[g], phase+"/"+name)
				}
			})
		}
		var res []phases.Result
		var runErr error
		wg.Go(func() {
			<-start
			res, runErr = p.Run(context.Background())
		})
		wg.Go(func() {
			<-start
			_ = p.Steps()
			_, _ = p.Order()
		})
		close(start)
		wg.Wait()
		require.NoError(t, runErr, "round %d", round)

		var all []string
		for _, a := range accepted {
			all = append(all, a...)
		}
		// Every accepted step ran and is in the report; nothing else ran.
		assert.Len(t, ran, len(all), "round %d", round)
		for _, s := range all {
			assert.True(t, ran[s], "accepted step %s did not run (round %d)", s, round)
		}
		stepRows := 0
		for _, r := range res {
			if r.Step != "" {
				stepRows++
			}
		}
		assert.Equal(t, len(all), stepRows)
	}
}

func TestLogger(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	p := phases.NewPlan(ph("a"), ph("b"))
	p.SetLogger(zap.New(core))
	require.NoError(t, p.AddStep("a", "good", ok))
	require.NoError(t, p.AddStep("a", "bad", func(context.Context) error { return errors.New("nope") }))
	require.NoError(t, p.AddStep("a", "panic", func(context.Context) error { panic("aargh") }))
	_, err := p.Run(context.Background())
	require.Error(t, err)

	entries := logs.All()
	require.Len(t, entries, 4)
	for _, e := range entries {
		assert.Equal(t, zap.DebugLevel, e.Level)
		m := e.ContextMap()
		assert.Contains(t, m, "phase")
		assert.Contains(t, m, "step")
		assert.Contains(t, m, "duration")
	}
	assert.Equal(t, "good", entries[0].ContextMap()["step"])
	assert.NotContains(t, entries[0].ContextMap(), "error")
	assert.Equal(t, "nope", entries[1].ContextMap()["error"])
	assert.Contains(t, entries[2].Stack, "phases_test", "a panic's stack goes in the entry's stack")
	assert.Empty(t, entries[1].Stack)
	assert.Equal(t, "b", entries[3].ContextMap()["phase"])
	assert.Equal(t, "", entries[3].ContextMap()["step"])
}

func TestZeroPlan(t *testing.T) {
	var p phases.Plan
	require.NoError(t, p.Validate())
	require.ErrorIs(t, p.AddStep("a", "s", ok), phases.ErrUnknownPhase)
	res, err := p.Run(context.Background())
	require.NoError(t, err)
	assert.Empty(t, res)
}

func TestNewPlanCopiesInput(t *testing.T) {
	after := []string{"a"}
	ps := []phases.Phase{ph("a"), {Name: "b", After: after}}
	p := phases.NewPlan(ps...)
	after[0] = "b" // would be a self-cycle if the plan shared the slice
	ps[0].Name = "x"
	got, err := p.Order()
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got)
}

func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := phases.NewPlan(ph("a"), ph("b", "a"), ph("c", "b"))
		for _, phase := range []string{"a", "b", "c"} {
			for _, s := range []string{"1", "2", "3"} {
				if err := p.AddStep(phase, s, ok); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := p.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAddStepAt(t *testing.T) {
	p := phases.NewPlan(phases.Phase{Name: "drivers"})
	noop := func(context.Context) error { return nil }
	require.NoError(t, p.AddStep("drivers", "plugin", noop))
	require.NoError(t, p.AddStepAt("drivers", 0, "cuda", noop))
	require.NoError(t, p.AddStepAt("drivers", 1, "musa", noop))
	require.NoError(t, p.AddStepAt("drivers", -1, "last", noop))
	require.NoError(t, p.AddStepAt("drivers", 99, "later", noop))
	assert.Equal(t, []string{"cuda", "musa", "plugin", "last", "later"}, p.Steps()["drivers"])
	assert.ErrorIs(t, p.AddStepAt("drivers", 0, "plugin", noop), phases.ErrDuplicateStep)
	_, err := p.Run(context.Background())
	require.NoError(t, err)
	assert.ErrorIs(t, p.AddStepAt("drivers", 0, "x", noop), phases.ErrStarted)
}
