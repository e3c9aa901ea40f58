package hooks_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
)

// fakeModule is an in-memory module: a label, a backend and a set of globals.
// Its handle is its own address, unless handle says otherwise.
type fakeModule struct {
	label     string
	backend   device.Type
	handle    uintptr
	globals   map[string]bool
	globalErr error

	unloaded atomic.Bool  // set by unload after Release, as a driver would
	busy     atomic.Int32 // hook calls running on it now
}

func newModule(label string, globals ...string) *fakeModule {
	m := &fakeModule{label: label, backend: device.CUDA, globals: map[string]bool{}}
	for _, g := range globals {
		m.globals[g] = true
	}
	return m
}

func (m *fakeModule) Backend() device.Type { return m.backend }
func (m *fakeModule) Handle() uintptr {
	if m.handle != 0 {
		return m.handle
	}
	return reflect.ValueOf(m).Pointer()
}
func (m *fakeModule) Label() string { return m.label }
func (m *fakeModule) Global(name string) (uintptr, uint64, bool, error) {
	if m.globalErr != nil {
		return 0, 0, false, m.globalErr
	}
	if m.globals[name] {
		return 0x2000, 8, true, nil
	}
	return 0, 0, false, nil
}

// recorder logs hook calls as "init a m1", "fini a m1".
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *recorder) hook(name string, scope hooks.Scope) hooks.Hook {
	return hooks.Hook{
		Name:     name,
		Scope:    scope,
		Init:     func(m device.Module) error { r.add("init " + name + " " + m.Label()); return nil },
		Finalize: func(m device.Module) error { r.add("fini " + name + " " + m.Label()); return nil },
	}
}

func mustRegister(t *testing.T, h *hooks.Hooks, hk hooks.Hook) func() error {
	t.Helper()
	remove, err := h.Register(hk)
	require.NoError(t, err)
	require.NotNil(t, remove)
	return remove
}

func TestHasGlobals(t *testing.T) {
	const a, b = "nvshmemi_device_lib_version_d", "nvshmemi_device_state_d"
	lookupErr := errors.New("CUDA_ERROR_INVALID_HANDLE")
	tests := []struct {
		name    string
		names   []string
		mod     *fakeModule
		want    bool
		wantErr error
		msg     []string // substrings of the error
	}{
		{name: "both", names: []string{a, b}, mod: newModule("nv.cubin", a, b, "other"), want: true},
		{name: "neither", names: []string{a, b}, mod: newModule("add.ptx", "other")},
		{name: "only version", names: []string{a, b}, mod: newModule("half.cubin", a), wantErr: hooks.ErrPartialGlobals,
			msg: []string{"half.cubin", "has " + a, "lacks " + b}},
		{name: "only state", names: []string{a, b}, mod: newModule("half.cubin", b), wantErr: hooks.ErrPartialGlobals,
			msg: []string{"has " + b, "lacks " + a}},
		{name: "lookup fails", names: []string{a}, mod: &fakeModule{label: "x", globalErr: lookupErr}, wantErr: lookupErr,
			msg: []string{a, "x"}},
		{name: "no names", mod: newModule("x"), wantErr: hooks.ErrInvalidHook},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hooks.HasGlobals(tt.names...)(tt.mod)
			assert.Equal(t, tt.want, got)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			for _, s := range tt.msg {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestScopeHelpers(t *testing.T) {
	cu := newModule("cu", "g")
	mu := newModule("mu", "g")
	mu.backend = device.MUSA
	fail := errors.New("boom")
	tests := []struct {
		name    string
		scope   hooks.Scope
		mod     *fakeModule
		want    bool
		wantErr error
	}{
		{"any", hooks.AnyModule(), cu, true, nil},
		{"on backend yes", hooks.OnBackend(device.CUDA), cu, true, nil},
		{"on backend no", hooks.OnBackend(device.CUDA), mu, false, nil},
		{"allof yes", hooks.AllOf(hooks.OnBackend(device.MUSA), hooks.HasGlobals("g")), mu, true, nil},
		{"allof no", hooks.AllOf(hooks.OnBackend(device.CUDA), hooks.HasGlobals("g")), mu, false, nil},
		{"allof stops at no", hooks.AllOf(hooks.OnBackend(device.MUSA), func(device.Module) (bool, error) { return false, fail }), cu, false, nil},
		{"allof error", hooks.AllOf(hooks.AnyModule(), func(device.Module) (bool, error) { return true, fail }), cu, false, fail},
		{"allof empty", hooks.AllOf(), cu, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.scope(tt.mod)
			assert.Equal(t, tt.want, got)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func TestRegisterValidation(t *testing.T) {
	initOK := func(device.Module) error { return nil }
	tests := []struct {
		name    string
		hook    hooks.Hook
		wantErr error
	}{
		{"empty name", hooks.Hook{Scope: hooks.AnyModule(), Init: initOK}, hooks.ErrInvalidHook},
		{"nil scope", hooks.Hook{Name: "h", Init: initOK}, hooks.ErrInvalidHook},
		{"nil init", hooks.Hook{Name: "h", Scope: hooks.AnyModule()}, hooks.ErrInvalidHook},
		{"duplicate", hooks.Hook{Name: "taken", Scope: hooks.AnyModule(), Init: initOK}, hooks.ErrDuplicateHook},
		{"ok without finalize", hooks.Hook{Name: "fresh", Scope: hooks.AnyModule(), Init: initOK}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hooks.NewHooks()
			mustRegister(t, h, hooks.Hook{Name: "taken", Scope: hooks.AnyModule(), Init: initOK})
			remove, err := h.Register(tt.hook)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, remove)
				assert.Equal(t, []string{"taken"}, h.Names())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"taken", tt.hook.Name}, h.Names())
		})
	}
}

func TestRemoveFreesName(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	remove := mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	require.NoError(t, remove())
	require.NoError(t, remove(), "remove is idempotent")
	assert.Empty(t, h.Names())
	mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	assert.Equal(t, []string{"a"}, h.Names())
}

func TestApplyOrderAndScope(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	mustRegister(t, h, r.hook("first", hooks.AnyModule()))
	mustRegister(t, h, r.hook("nv", hooks.HasGlobals("v", "s")))
	mustRegister(t, h, r.hook("last", hooks.AnyModule()))

	plain := newModule("add.ptx")
	nv := newModule("nv.cubin", "v", "s")
	require.NoError(t, h.Apply(plain))
	require.NoError(t, h.Apply(nv))
	assert.Equal(t, []string{"first", "last"}, h.Applied(plain))
	assert.Equal(t, []string{"first", "nv", "last"}, h.Applied(nv))
	assert.Equal(t, []string{
		"init first add.ptx", "init last add.ptx",
		"init first nv.cubin", "init nv nv.cubin", "init last nv.cubin",
	}, r.get())

	require.NoError(t, h.Release(nv))
	assert.Nil(t, h.Applied(nv))
	assert.Equal(t, []string{"fini last nv.cubin", "fini nv nv.cubin", "fini first nv.cubin"}, r.get()[5:])
	require.NoError(t, h.Release(nv), "second release is a no-op")
	assert.Len(t, r.get(), 8)
	assert.Equal(t, []string{"first", "last"}, h.Applied(plain), "other module untouched")
}

func TestApplyWithoutHooks(t *testing.T) {
	var h hooks.Hooks // the zero value works
	m := newModule("m")
	require.NoError(t, h.Apply(m))
	assert.Nil(t, h.Applied(m))
	require.NoError(t, h.Release(m))

	var nilHooks *hooks.Hooks
	require.NoError(t, nilHooks.Apply(m))
	require.NoError(t, nilHooks.Release(m))
	assert.Nil(t, nilHooks.Applied(m))
}

func TestApplyNoMatchForgetsModule(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	mustRegister(t, h, r.hook("nv", hooks.HasGlobals("v", "s")))
	m := newModule("add.ptx")
	require.NoError(t, h.Apply(m))
	require.NoError(t, h.Apply(m), "nothing was applied, so a second Apply is allowed")
	assert.Nil(t, h.Applied(m))
	assert.Empty(t, r.get(), "hook not called on a plain module")
}

func TestApplyAgainRunsNothing(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	m := newModule("m")
	require.NoError(t, h.Apply(m))
	require.NoError(t, h.Apply(m), "a second report of one load answers the recorded result")
	require.NoError(t, h.Apply(&wrapper{m}), "so does another value of the same module")
	assert.Equal(t, []string{"init a m"}, r.get(), "the hook ran once")
	assert.Equal(t, []string{"a"}, h.Applied(m))
	assert.Equal(t, []string{"a"}, h.Applied(&wrapper{m}), "a module is its backend and handle")

	require.NoError(t, h.Release(&wrapper{m}), "released through another value of it")
	assert.Equal(t, []string{"init a m", "fini a m"}, r.get())
	require.NoError(t, h.Apply(m), "after Release, the same handle is a new load")
	assert.Equal(t, []string{"init a m", "fini a m", "init a m"}, r.get())

	other := newModule("other")
	other.backend = device.MUSA
	other.handle = m.Handle()
	require.NoError(t, h.Apply(other))
	assert.Equal(t, "init a other", r.get()[3], "the same handle of another backend is another module")
}

// wrapper is a second Go value for a module that is already wrapped: what
// driver.Adopt returns on each call for one handle. It has the module's
// backend and handle, so it is the same module to the registry.
type wrapper struct{ *fakeModule }

// TestApplyOncePerLoad: however many goroutines report one load at once
// (each with the same value, or each with a wrapper of its own, as C and
// Python hosts do through driver.Adopt), a hook's Init runs once; every
// Apply returns only when that run is over, with its result; the module is
// finalized once.
func TestApplyOncePerLoad(t *testing.T) {
	const callers = 16
	planned := errors.New("nvshmemx_cumodule_init returned 7")
	for _, tt := range []struct {
		name    string
		wrap    bool  // each caller passes a value of its own
		initErr error // what the slow Init returns
	}{
		{name: "one value", wrap: false},
		{name: "a wrapper per caller", wrap: true},
		{name: "one value, init fails", wrap: false, initErr: planned},
		{name: "a wrapper per caller, init fails", wrap: true, initErr: planned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := hooks.NewHooks()
			var inits, finis atomic.Int32
			var finished atomic.Bool // the Init's run is over
			mustRegister(t, h, hooks.Hook{
				Name:  "slow",
				Scope: hooks.AnyModule(),
				Init: func(device.Module) error {
					inits.Add(1)
					time.Sleep(20 * time.Millisecond)
					finished.Store(true)
					return tt.initErr
				},
				Finalize: func(device.Module) error { finis.Add(1); return nil },
			})
			m := newModule("nv.cubin")
			value := func() device.Module {
				if tt.wrap {
					return &wrapper{m}
				}
				return m
			}

			start := make(chan struct{})
			errs := make([]error, callers)
			early := make([]bool, callers) // returned before the Init's run was over
			var wg sync.WaitGroup
			for i := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := value()
					<-start
					errs[i] = h.Apply(v)
					early[i] = !finished.Load()
				}()
			}
			close(start)
			wg.Wait()

			assert.Equal(t, int32(1), inits.Load(), "the hook's Init ran once for the load")
			assert.NotContains(t, early, true, "every Apply waited for the run")
			for i, err := range errs {
				if tt.initErr == nil {
					assert.NoError(t, err, "caller %d gets the run's result", i)
					continue
				}
				assert.ErrorIs(t, err, hooks.ErrHookFailed, "caller %d gets the run's result", i)
				assert.ErrorIs(t, err, planned, "caller %d", i)
				assert.Equal(t, errs[0].Error(), err.Error(), "caller %d: the same error", i)
			}
			if tt.initErr != nil {
				assert.Nil(t, h.Applied(m), "a failed load records nothing")
				assert.Zero(t, finis.Load(), "the failed hook is not finalized")
				// The driver unloads a module whose load failed; a later
				// load at that handle is a new one.
				require.ErrorIs(t, h.Apply(value()), planned)
				assert.Equal(t, int32(2), inits.Load())
				return
			}
			assert.Equal(t, []string{"slow"}, h.Applied(value()))
			require.NoError(t, h.Release(value()))
			require.NoError(t, h.Release(value()), "a second Release does nothing")
			assert.Equal(t, int32(1), finis.Load(), "finalized once")
			assert.Nil(t, h.Applied(m))
		})
	}
}

type valueModule struct{ _ []int } // a slice makes it non-comparable

// hashPanicModule is comparable, so the compiler lets it key a map, but
// hashing it panics: its interface field holds a slice.
type hashPanicModule struct{ v any }

func (hashPanicModule) Backend() device.Type                         { return device.CUDA }
func (hashPanicModule) Handle() uintptr                              { return 0 }
func (hashPanicModule) Label() string                                { return "h" }
func (hashPanicModule) Global(string) (uintptr, uint64, bool, error) { return 0, 0, false, nil }

func (valueModule) Backend() device.Type                         { return device.CUDA }
func (valueModule) Handle() uintptr                              { return 0 }
func (valueModule) Label() string                                { return "v" }
func (valueModule) Global(string) (uintptr, uint64, bool, error) { return 0, 0, false, nil }

// handlePanicModule's Handle panics.
type handlePanicModule struct{ fakeModule }

func (*handlePanicModule) Handle() uintptr { panic("no handle") }

func TestBadModules(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	tests := []struct {
		name string
		m    device.Module
	}{
		{"nil", nil},
		{"not comparable", valueModule{}},
		{"comparable but unhashable", hashPanicModule{v: []int{1}}},
		{"nil pointer", (*fakeModule)(nil)},
		{"Handle panics", &handlePanicModule{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, h.Apply(tt.m), hooks.ErrInvalidHook)
			assert.ErrorIs(t, h.Release(tt.m), hooks.ErrInvalidHook)
			assert.Nil(t, h.Applied(tt.m))
		})
	}
	assert.Empty(t, r.get())
	// The registry is still usable: no lock was left held.
	done := make(chan error, 1)
	go func() {
		_, err := h.Register(hooks.Hook{Name: "after", Scope: hooks.AnyModule(), Init: func(device.Module) error { return nil }})
		done <- err
	}()
	require.NoError(t, <-done)
	require.NoError(t, h.Apply(newModule("ok")))
}

func TestApplyFailure(t *testing.T) {
	cause := errors.New("cumodule_init returned 7")
	finiErr := errors.New("finalize broke")
	tests := []struct {
		name      string
		bad       hooks.Hook
		wantIs    []error
		wantStage string
		firstFini error // the first hook's finalize error during the rollback
	}{
		{
			name:      "init error",
			bad:       hooks.Hook{Name: "bad", Scope: hooks.AnyModule(), Init: func(device.Module) error { return cause }},
			wantIs:    []error{hooks.ErrHookFailed, cause},
			wantStage: "init",
		},
		{
			name:      "init panic",
			bad:       hooks.Hook{Name: "bad", Scope: hooks.AnyModule(), Init: func(device.Module) error { panic("kaboom") }},
			wantIs:    []error{hooks.ErrHookFailed, hooks.ErrHookPanic},
			wantStage: "init",
		},
		{
			name:      "scope error",
			bad:       hooks.Hook{Name: "bad", Scope: hooks.HasGlobals("v", "s"), Init: func(device.Module) error { return nil }},
			wantIs:    []error{hooks.ErrHookFailed, hooks.ErrPartialGlobals},
			wantStage: "scope",
		},
		{
			name:      "scope panic",
			bad:       hooks.Hook{Name: "bad", Scope: func(device.Module) (bool, error) { panic("scope kaboom") }, Init: func(device.Module) error { return nil }},
			wantIs:    []error{hooks.ErrHookFailed, hooks.ErrHookPanic},
			wantStage: "scope",
		},
		{
			name:      "rollback finalize error joined",
			bad:       hooks.Hook{Name: "bad", Scope: hooks.AnyModule(), Init: func(device.Module) error { return cause }},
			wantIs:    []error{hooks.ErrHookFailed, cause, finiErr},
			wantStage: "init",
			firstFini: finiErr,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hooks.NewHooks()
			var r recorder
			first := r.hook("first", hooks.AnyModule())
			if tt.firstFini != nil {
				first.Finalize = func(m device.Module) error { r.add("fini first " + m.Label()); return tt.firstFini }
			}
			mustRegister(t, h, first)
			mustRegister(t, h, r.hook("second", hooks.AnyModule()))
			// bad misbehaves on half.cubin only; "other" loads fine with it.
			bad := tt.bad
			badScope, badInit := bad.Scope, bad.Init
			bad.Scope = func(m device.Module) (bool, error) {
				if m.Label() == "other" {
					return true, nil
				}
				return badScope(m)
			}
			bad.Init = func(m device.Module) error {
				if m.Label() == "other" {
					return nil
				}
				return badInit(m)
			}
			mustRegister(t, h, bad)
			mustRegister(t, h, r.hook("after", hooks.AnyModule()))

			other := newModule("other", "v", "s")
			require.NoError(t, h.Apply(other))
			r.log = nil

			m := newModule("half.cubin", "v")
			err := h.Apply(m)
			require.Error(t, err)
			for _, want := range tt.wantIs {
				assert.ErrorIs(t, err, want)
			}
			var he *hooks.HookError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, "bad", he.Hook)
			assert.Equal(t, "half.cubin", he.Module)
			assert.Equal(t, tt.wantStage, he.Stage)
			assert.Contains(t, err.Error(), `hook "bad"`)
			assert.Contains(t, err.Error(), `module "half.cubin"`)

			assert.Equal(t, []string{
				"init first half.cubin", "init second half.cubin",
				"fini second half.cubin", "fini first half.cubin",
			}, r.get(), "applied hooks finalized in reverse; later hooks never run")
			assert.Nil(t, h.Applied(m))
			require.NoError(t, h.Release(m), "nothing left to release")
			assert.Len(t, r.get(), 4)

			assert.Equal(t, []string{"first", "second", "bad", "after"}, h.Applied(other), "other module untouched")
			assert.Equal(t, []string{"first", "second", "bad", "after"}, h.Names(), "hooks stay registered")

			// The module may be loaded again (a fresh load) once fixed.
			m.globals["s"] = true
			if tt.name == "scope error" {
				require.NoError(t, h.Apply(m))
				assert.Equal(t, []string{"first", "second", "bad", "after"}, h.Applied(m))
			}
		})
	}
}

func TestReleaseFinalizeErrors(t *testing.T) {
	h := hooks.NewHooks()
	e1, e2 := errors.New("e1"), errors.New("e2")
	var r recorder
	mustRegister(t, h, hooks.Hook{Name: "a", Scope: hooks.AnyModule(),
		Init: func(device.Module) error { return nil }, Finalize: func(device.Module) error { r.add("fini a"); return e1 }})
	mustRegister(t, h, hooks.Hook{Name: "b", Scope: hooks.AnyModule(),
		Init: func(device.Module) error { return nil }, Finalize: func(device.Module) error { r.add("fini b"); panic("p") }})
	mustRegister(t, h, hooks.Hook{Name: "c", Scope: hooks.AnyModule(),
		Init: func(device.Module) error { return nil }, Finalize: func(device.Module) error { r.add("fini c"); return e2 }})
	m := newModule("m")
	require.NoError(t, h.Apply(m))
	err := h.Release(m)
	assert.Equal(t, []string{"fini c", "fini b", "fini a"}, r.get(), "every finalize runs despite errors")
	for _, want := range []error{hooks.ErrHookFailed, e1, e2, hooks.ErrHookPanic} {
		assert.ErrorIs(t, err, want)
	}
	assert.Contains(t, err.Error(), `hook "b" failed in finalize on module "m"`)
	assert.Nil(t, h.Applied(m))
}

func TestRemoveFinalizesItsModules(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	removeNV := mustRegister(t, h, r.hook("nv", hooks.HasGlobals("v", "s")))
	m1, m2, plain := newModule("m1", "v", "s"), newModule("m2", "v", "s"), newModule("plain")
	for _, m := range []*fakeModule{m1, m2, plain} {
		require.NoError(t, h.Apply(m))
	}
	r.log = nil

	require.NoError(t, removeNV())
	assert.ElementsMatch(t, []string{"fini nv m1", "fini nv m2"}, r.get())
	assert.Equal(t, []string{"a"}, h.Applied(m1))
	assert.Equal(t, []string{"a"}, h.Names())
	require.NoError(t, removeNV())
	assert.Len(t, r.get(), 2, "second remove does nothing")

	m3 := newModule("m3", "v", "s")
	require.NoError(t, h.Apply(m3))
	require.NoError(t, h.Release(m1))
	assert.Equal(t, []string{"fini nv m1", "fini nv m2", "init a m3", "fini a m1"}, sortFirst2(r.get()))
}

// sortFirst2 orders the first two entries (remove finalizes modules in no
// particular order).
func sortFirst2(s []string) []string {
	if len(s) >= 2 && s[0] > s[1] {
		s[0], s[1] = s[1], s[0]
	}
	return s
}

func TestRemoveLastHookForgetsModule(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	remove := mustRegister(t, h, r.hook("a", hooks.AnyModule()))
	m := newModule("m")
	require.NoError(t, h.Apply(m))
	require.NoError(t, remove())
	assert.Nil(t, h.Applied(m))
	require.NoError(t, h.Release(m))
	assert.Equal(t, []string{"init a m", "fini a m"}, r.get())
}

func TestRemoveReportsFinalizeErrors(t *testing.T) {
	h := hooks.NewHooks()
	e := errors.New("nope")
	remove := mustRegister(t, h, hooks.Hook{Name: "a", Scope: hooks.AnyModule(),
		Init: func(device.Module) error { return nil }, Finalize: func(device.Module) error { return e }})
	require.NoError(t, h.Apply(newModule("m1")))
	require.NoError(t, h.Apply(newModule("m2")))
	err := remove()
	assert.ErrorIs(t, err, e)
	assert.ErrorIs(t, err, hooks.ErrHookFailed)
	assert.Contains(t, err.Error(), `"m1"`)
	assert.Contains(t, err.Error(), `"m2"`)
	assert.NoError(t, remove())
}

// blockingHook's Init signals entered and waits for release.
func blockingHook(name string, r *recorder, entered chan<- string, release <-chan struct{}) hooks.Hook {
	hk := r.hook(name, hooks.AnyModule())
	hk.Init = func(m device.Module) error {
		entered <- m.Label()
		<-release
		r.add("init " + name + " " + m.Label())
		return nil
	}
	return hk
}

func TestRemoveWhileInitRuns(t *testing.T) {
	for _, finiErr := range []error{nil, errors.New("late finalize failed")} {
		t.Run(fmt.Sprint("finalize error ", finiErr != nil), func(t *testing.T) {
			h := hooks.NewHooks()
			var r recorder
			entered, release := make(chan string), make(chan struct{})
			hk := blockingHook("slow", &r, entered, release)
			hk.Finalize = func(m device.Module) error { r.add("fini slow " + m.Label()); return finiErr }
			remove := mustRegister(t, h, hk)
			mustRegister(t, h, r.hook("after", hooks.AnyModule()))
			m := newModule("m")

			applied := make(chan error)
			go func() { applied <- h.Apply(m) }()
			require.Equal(t, "m", <-entered)

			removed := make(chan error)
			go func() { removed <- remove() }()
			// remove must wait for the Init in flight.
			require.Eventually(t, func() bool { return len(h.Names()) == 1 }, time.Second, time.Millisecond)
			select {
			case <-removed:
				t.Fatal("remove returned while the hook's Init was running")
			case <-time.After(20 * time.Millisecond):
			}
			close(release)
			require.NoError(t, <-applied)
			rerr := <-removed
			if finiErr != nil {
				assert.ErrorIs(t, rerr, finiErr)
			} else {
				assert.NoError(t, rerr)
			}
			assert.Equal(t, []string{"init slow m", "fini slow m", "init after m"}, r.get())
			assert.Equal(t, []string{"after"}, h.Applied(m), "removed hook not recorded")
			require.NoError(t, h.Release(m))
			assert.Equal(t, "fini after m", r.get()[3])
			assert.Len(t, r.get(), 4, "slow finalized exactly once")
		})
	}
}

func TestRemovedBeforeItsTurnIsSkipped(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	entered, release := make(chan string), make(chan struct{})
	mustRegister(t, h, blockingHook("first", &r, entered, release))
	remove := mustRegister(t, h, r.hook("second", hooks.AnyModule()))
	m := newModule("m")
	applied := make(chan error)
	go func() { applied <- h.Apply(m) }()
	<-entered
	require.NoError(t, remove(), "nothing of second runs anywhere, so remove returns at once")
	close(release)
	require.NoError(t, <-applied)
	assert.Equal(t, []string{"init first m"}, r.get())
	assert.Equal(t, []string{"first"}, h.Applied(m))
}

func TestRegisterDuringApplyNotApplied(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	entered, release := make(chan string), make(chan struct{})
	mustRegister(t, h, blockingHook("first", &r, entered, release))
	m := newModule("m")
	applied := make(chan error)
	go func() { applied <- h.Apply(m) }()
	<-entered
	mustRegister(t, h, r.hook("late", hooks.AnyModule()))
	close(release)
	require.NoError(t, <-applied)
	assert.Equal(t, []string{"first"}, h.Applied(m))
	m2 := newModule("m2")
	go func() { <-entered }()
	require.NoError(t, h.Apply(m2))
	assert.Equal(t, []string{"first", "late"}, h.Applied(m2))
}

func TestParallelLoadsDoNotWaitForSlowHook(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	entered, release := make(chan string), make(chan struct{})
	slow := blockingHook("slow", &r, entered, release)
	slow.Scope = hooks.HasGlobals("slow")
	mustRegister(t, h, slow)
	mustRegister(t, h, r.hook("fast", hooks.AnyModule()))

	a := newModule("a", "slow")
	applied := make(chan error)
	go func() { applied <- h.Apply(a) }()
	<-entered
	// While a's slow Init blocks, other modules load, release, and hooks come and go.
	b := newModule("b")
	require.NoError(t, h.Apply(b))
	assert.Equal(t, []string{"fast"}, h.Applied(b))
	assert.Nil(t, h.Applied(a), "a's Apply still running: nothing recorded yet")
	removeX := mustRegister(t, h, r.hook("x", hooks.AnyModule()))
	require.NoError(t, h.Release(b))
	require.NoError(t, removeX())
	close(release)
	require.NoError(t, <-applied)
	assert.Equal(t, []string{"slow", "fast"}, h.Applied(a))
}

func TestReleaseWaitsForApply(t *testing.T) {
	h := hooks.NewHooks()
	var r recorder
	entered, release := make(chan string), make(chan struct{})
	mustRegister(t, h, blockingHook("slow", &r, entered, release))
	m := newModule("m")
	applied := make(chan error)
	go func() { applied <- h.Apply(m) }()
	<-entered
	released := make(chan error)
	go func() { released <- h.Release(m) }()
	select {
	case <-released:
		t.Fatal("Release returned while Apply was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-applied)
	require.NoError(t, <-released)
	assert.Equal(t, []string{"init slow m", "fini slow m"}, r.get())
}

// TestConcurrentStress applies and releases many modules in parallel while
// hooks are registered and removed, and checks the invariants: every Init is
// finalized exactly once, never after the module is unloaded, never while
// another hook call runs on the same module, and nothing is left recorded.
func TestConcurrentStress(t *testing.T) {
	h := hooks.NewHooks()
	type key struct{ hook, mod string }
	var (
		mu         sync.Mutex
		live       = map[key]int{} // inits minus finalizes
		violations []string
		inits      atomic.Int64
	)
	bad := func(format string, args ...any) {
		mu.Lock()
		violations = append(violations, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	enter := func(m *fakeModule) {
		if m.unloaded.Load() {
			bad("call on unloaded module %s", m.label)
		}
		if m.busy.Add(1) != 1 {
			bad("two hook calls at once on %s", m.label)
		}
		time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
	}
	leave := func(m *fakeModule) { m.busy.Add(-1) }
	mkHook := func(name string, failEvery int) hooks.Hook {
		var n atomic.Int64
		return hooks.Hook{
			Name:  name,
			Scope: hooks.HasGlobals(name[:1]),
			Init: func(dm device.Module) error {
				m := dm.(*fakeModule)
				enter(m)
				defer leave(m)
				if failEvery > 0 && n.Add(1)%int64(failEvery) == 0 {
					return errors.New("planned failure")
				}
				mu.Lock()
				live[key{name, m.label}]++
				if live[key{name, m.label}] != 1 {
					violations = append(violations, "double init "+name+" "+m.label)
				}
				mu.Unlock()
				inits.Add(1)
				return nil
			},
			Finalize: func(dm device.Module) error {
				m := dm.(*fakeModule)
				enter(m)
				defer leave(m)
				mu.Lock()
				live[key{name, m.label}]--
				if live[key{name, m.label}] != 0 {
					violations = append(violations, "finalize without init "+name+" "+m.label)
				}
				mu.Unlock()
				return nil
			},
		}
	}

	stop := make(chan struct{})
	var wg, loaders sync.WaitGroup
	// Hook churn: letters a..e, each registered and removed repeatedly.
	for _, letter := range []string{"a", "b", "c", "d", "e"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				remove, err := h.Register(mkHook(fmt.Sprintf("%s%d", letter, i), 7))
				if err != nil {
					bad("register: %v", err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				if err := remove(); err != nil {
					bad("remove: %v", err)
				}
			}
		}()
	}
	// A hook present throughout.
	removeStable := mustRegister(t, h, mkHook("a-stable", 0))
	// Loaders: each loads, maybe checks, releases, "unloads".
	var loads, failed atomic.Int64
	for w := range 16 {
		loaders.Add(1)
		go func() {
			defer loaders.Done()
			for i := range 200 {
				m := newModule(fmt.Sprintf("w%d-%d", w, i), "a", "b", "c", "d", "e")
				if err := h.Apply(m); err != nil {
					if !errors.Is(err, hooks.ErrHookFailed) {
						bad("apply: %v", err)
					}
					failed.Add(1)
					m.unloaded.Store(true)
					continue
				}
				loads.Add(1)
				if err := h.Release(m); err != nil {
					bad("release: %v", err)
				}
				m.unloaded.Store(true)
			}
		}()
	}
	// Loaders finish first, then the churners are stopped.
	loaders.Wait()
	close(stop)
	wg.Wait()
	require.NoError(t, removeStable())

	assert.Empty(t, violations)
	for k, v := range live {
		assert.Zerof(t, v, "%v left initialized", k)
	}
	assert.Empty(t, h.Names())
	assert.Equal(t, int64(16*200), loads.Load()+failed.Load())
	assert.Greater(t, inits.Load(), int64(16*200), "hooks really ran")
	assert.Positive(t, failed.Load(), "failures were exercised")
	t.Logf("loads %d, failed loads %d, inits %d", loads.Load(), failed.Load(), inits.Load())
}

// TestConcurrentRemoveWithLiveModules removes hooks while their modules stay
// loaded and others are released concurrently: each Init is finalized once,
// before its module is unloaded.
func TestConcurrentRemoveWithLiveModules(t *testing.T) {
	h := hooks.NewHooks()
	var inits, finis atomic.Int64
	var unloadedFinalize atomic.Int64
	var removes []func() error
	for i := range 8 {
		removes = append(removes, mustRegister(t, h, hooks.Hook{
			Name:  fmt.Sprint("h", i),
			Scope: hooks.AnyModule(),
			Init:  func(device.Module) error { inits.Add(1); return nil },
			Finalize: func(dm device.Module) error {
				if dm.(*fakeModule).unloaded.Load() {
					unloadedFinalize.Add(1)
				}
				finis.Add(1)
				return nil
			},
		}))
	}
	mods := make([]*fakeModule, 64)
	for i := range mods {
		mods[i] = newModule(fmt.Sprint("m", i))
		require.NoError(t, h.Apply(mods[i]))
	}
	var wg sync.WaitGroup
	for _, remove := range removes {
		wg.Add(2)
		go func() { defer wg.Done(); assert.NoError(t, remove()) }()
		go func() { defer wg.Done(); assert.NoError(t, remove()) }()
	}
	for _, m := range mods[:32] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, h.Release(m))
			m.unloaded.Store(true)
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(8*64), inits.Load())
	assert.Equal(t, int64(8*64), finis.Load())
	assert.Zero(t, unloadedFinalize.Load())
	for _, m := range mods {
		assert.Nil(t, h.Applied(m))
	}
}
