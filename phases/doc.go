// Package phases runs named phases of work in a validated, deterministic
// order and reports what each step did.
//
// A [Plan] is built from [Phase] values, each with a name and the names of
// the phases it must run After. Steps, small functions that do the work, are
// added to phases with [Plan.AddStep] before the plan runs:
//
//	p := phases.NewPlan(
//		phases.Phase{Name: "drivers"},
//		phases.Phase{Name: "alias", After: []string{"drivers"}},
//	)
//	_ = p.AddStep("drivers", "cuda", registerCUDA)
//	results, err := p.Run(ctx)
//
// # Validation
//
// [Plan.Validate] (and Run, which validates first and runs nothing when the
// plan is invalid) rejects empty or duplicate phase names, After names that
// name no phase, and dependency cycles. Every error names its culprits; a
// cycle is written "a -> b -> a", where "x -> y" reads "x runs after y".
// Test the kind with errors.Is against [ErrInvalidPhase], [ErrDuplicatePhase],
// [ErrUnknownPhase] and [ErrCycle].
//
// # Order
//
// Phases run in topological order. Where several phases are ready at once,
// the one declared first runs first, so the order depends only on the plan
// ([Plan.Order] tells it without running anything). Steps of a phase run in
// the order they were added, one at a time, on the goroutine that called Run.
//
// # Errors and the report
//
// A step's error does not stop the plan: every step runs (unless ctx is
// cancelled) and gets one [Result] row with its start time, its duration
// (measured on the monotonic clock) and its error. A panicking step is
// recovered; its row holds a [*PanicError] that carries the panic value and
// stack and matches [ErrPanic] with errors.Is. A phase without steps still
// gets one row with an empty Step, so the report shows that it ran.
//
// Run returns all step errors joined with errors.Join, each wrapped in a
// [*StepError] whose message starts with "phase/step: ". Once ctx is
// cancelled, steps not yet started are not run; their rows hold ctx.Err().
//
// # Concurrency
//
// A plan runs once: a second Run returns [ErrStarted], and so does an
// AddStep that comes after Run has started. AddStep and Run may be called
// from different goroutines; a step added concurrently either lands before
// the run and runs, or gets ErrStarted, never silently dropped.
//
// # Logging
//
// The plan is silent by default. [Plan.SetLogger] gives it a zap logger, on
// which each step is logged at debug level with the fields phase, step,
// duration and error; for a panic, the entry carries the panic's stack.
package phases
