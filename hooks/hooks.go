package hooks

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/flagos-ai/flagshim/device"
)

// Hook is a piece of per-module initialisation that a library needs on the
// modules carrying its device code (NVSHMEM's nvshmemx_cumodule_init, say).
type Hook struct {
	Name     string                    // unique within a Hooks
	Scope    Scope                     // which modules it applies to
	Init     func(device.Module) error // runs right after such a module is loaded
	Finalize func(device.Module) error // optional: runs before it is unloaded, or when the hook is removed
}

// Errors of the hook registry; test them with errors.Is.
var (
	ErrInvalidHook   = errors.New("hooks: invalid hook")
	ErrDuplicateHook = errors.New("hooks: hook already registered")
	ErrHookFailed    = errors.New("hooks: module hook failed")
	ErrHookPanic     = errors.New("hooks: module hook panicked")
	// Deprecated: Apply no longer returns it. A second Apply of a module
	// whose hooks are applied returns the recorded result and runs nothing.
	ErrModuleApplied = errors.New("hooks: hooks already applied to this module")
)

// HookError is the error of one hook on one module. It matches
// [ErrHookFailed] and its cause with errors.Is.
type HookError struct {
	Hook   string // the hook's name
	Module string // the module's label
	Stage  string // "scope", "init" or "finalize"
	Err    error  // the cause
}

func (e *HookError) Error() string {
	return fmt.Sprintf("hooks: hook %q failed in %s on module %q: %v", e.Hook, e.Stage, e.Module, e.Err)
}

// Unwrap gives [ErrHookFailed] and the cause.
func (e *HookError) Unwrap() []error { return []error{ErrHookFailed, e.Err} }

// DefaultHooks is the registry the drivers apply when they are given no other.
var DefaultHooks = NewHooks()

// Hooks is a registry of module hooks. Drivers call [Hooks.Apply] right after
// loading a module and [Hooks.Release] right before unloading it. Hooks
// compose: each one that matches a module runs, in registration order, and
// none replaces another.
//
// Once per load. A module is its backend and its driver handle
// (Module.Backend, Module.Handle), not the Go value that carries them: two
// values with the same backend and non-zero handle (driver.Adopt returns a
// new one on each call; a C host reports one module from several threads)
// are one module. Its hooks run once per load however many callers report
// it: the first Apply runs them; an Apply while that run is in progress waits
// for it and returns its result (nil, or the same error); an Apply after it,
// while the hooks are applied, runs nothing and returns nil ([Hooks.Applied]
// names the hooks). After Release, or after an Apply that failed (the driver
// unloads such a module), the next Apply of that handle is a new load. A
// module on which no hook matched is not remembered: a later Apply asks the
// scopes again.
//
// Locking. One registry mutex guards the hook list and the bookkeeping (which
// hook is applied to which module); it is never held while a hook's code
// runs. Each module has its own mutex, held for the whole of Apply, of
// Release and of a removal's finalize on that module, so the hooks of one
// module run one at a time, and a Finalize always runs before the driver
// unloads the module; an Apply that finds the module's run in progress waits
// on that mutex. Loads of different modules run their hooks in parallel and
// never wait behind each other's slow hooks. The lock order is module, then
// registry.
//
// Apply takes a snapshot of the registered hooks when it starts: a hook
// registered during an Apply does not run on that module (hooks never run on
// modules already loaded). A hook removed during an Apply is skipped if it
// has not started there; if its Init is running, Apply finalizes it on that
// module when Init returns and does not record it. The remove function waits
// until no call into the hook is in flight and every module it initialized
// is finalized; the name is free again when it returns.
//
// A hook's Scope, Init and Finalize must not call Apply or Release for the
// module they are given (or any value of it), nor the remove function of a
// hook applied to it (they would wait for themselves). They may register
// hooks and read [Hooks.Applied].
//
// Keys. A device.Module must be a pointer (drivers' are); any other value is refused
// with ErrInvalidHook. The registry keys a module by its backend and handle,
// or, where Handle is 0 (a module without a driver handle), by the pointer's
// address; it never hashes the value itself, and a Backend or Handle method
// that panics is refused (ErrInvalidHook), so no module value can panic the
// registry. Release and Applied may be given any value of the module; hooks
// are given the value of the Apply that ran them. A host that unloads a
// module must call Release first: a handle still recorded when the driver
// reuses it for another module would make that load look already done.
//
// Hooks run on the goroutine that calls Apply or Release; a hook that needs a
// particular CUDA/MUSA context current makes it current itself on a locked
// OS thread (plugins/nvshmem does), since the caller's thread may hold
// another one.
type Hooks struct {
	mu    sync.Mutex
	idle  *sync.Cond            // on mu; broadcast when a removed hook's last call ends
	order []*hookEntry          // live hooks in registration order; replaced, never edited in place
	names map[string]*hookEntry // names taken, including hooks being removed
	mods  map[modKey]*modState  // modules with hooks applied, or an Apply in progress
}

type hookEntry struct {
	hook     Hook
	removed  bool
	running  int                    // calls into the hook in flight outside remove
	mods     map[*modState]struct{} // modules where it is applied and recorded
	lateErrs []error                // finalize errors of Inits that ended after removal
}

type modState struct {
	mu      sync.Mutex    // held through Apply, Release and a removal's finalize
	m       device.Module // immutable
	key     modKey        // immutable
	applied []*hookEntry  // in order of application; guarded by Hooks.mu
	gone    bool          // released, rolled back or emptied; guarded by Hooks.mu
	err     error         // the Apply's result; written under mu by that Apply
}

// NewHooks returns an empty registry. The zero Hooks is also ready to use.
func NewHooks() *Hooks {
	h := &Hooks{}
	h.lazyInit()
	return h
}

// lazyInit makes the zero value usable; call with h.mu held or before h is
// shared.
func (h *Hooks) lazyInit() {
	if h.names == nil {
		h.idle = sync.NewCond(&h.mu)
		h.names = map[string]*hookEntry{}
		h.mods = map[modKey]*modState{}
	}
}

// Register adds a hook after those already registered and returns the
// function that removes it. An empty name, a nil Scope or Init
// ([ErrInvalidHook]) and a name already taken ([ErrDuplicateHook]) are
// errors.
//
// remove finalizes the hook on every module it initialized (in no
// particular order across modules), waits for calls into it in flight, frees
// its name and returns their finalize errors joined. Calling it again is a
// no-op that returns nil.
func (h *Hooks) Register(hk Hook) (remove func() error, err error) {
	switch {
	case hk.Name == "":
		return nil, fmt.Errorf("%w: empty name", ErrInvalidHook)
	case hk.Scope == nil:
		return nil, fmt.Errorf("%w: hook %q has no scope", ErrInvalidHook, hk.Name)
	case hk.Init == nil:
		return nil, fmt.Errorf("%w: hook %q has no init", ErrInvalidHook, hk.Name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lazyInit()
	if _, dup := h.names[hk.Name]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateHook, hk.Name)
	}
	e := &hookEntry{hook: hk, mods: map[*modState]struct{}{}}
	h.names[hk.Name] = e
	h.order = append(slices.Clip(h.order), e)
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() { err = h.remove(e) })
		return err
	}, nil
}

func (h *Hooks) remove(e *hookEntry) error {
	h.mu.Lock()
	e.removed = true
	h.order = slices.DeleteFunc(slices.Clone(h.order), func(x *hookEntry) bool { return x == e })
	for e.running > 0 {
		h.idle.Wait()
	}
	mods := make([]*modState, 0, len(e.mods))
	for ms := range e.mods {
		mods = append(mods, ms)
	}
	h.mu.Unlock()

	var errs []error
	for _, ms := range mods {
		ms.mu.Lock()
		h.mu.Lock()
		_, still := e.mods[ms] // else Release or a rollback finalized it meanwhile
		last := false
		if still {
			delete(e.mods, ms)
			ms.applied = slices.DeleteFunc(slices.Clone(ms.applied), func(x *hookEntry) bool { return x == e })
			if len(ms.applied) == 0 && !ms.gone {
				ms.gone = true
				last = true
			}
		}
		h.mu.Unlock()
		if still {
			if err := call(e, ms.m, "finalize", e.hook.Finalize); err != nil {
				errs = append(errs, err)
			}
		}
		if last {
			// Forgotten only after its finalize: a Release meanwhile
			// finds it, waits on ms.mu for the finalize, and returns
			// after it (the driver unloads the module only then).
			h.mu.Lock()
			if h.mods[ms.key] == ms {
				delete(h.mods, ms.key)
			}
			h.mu.Unlock()
		}
		ms.mu.Unlock()
	}

	h.mu.Lock()
	errs = append(errs, e.lateErrs...)
	e.lateErrs = nil
	if h.names[e.hook.Name] == e {
		delete(h.names, e.hook.Name)
	}
	h.mu.Unlock()
	return errors.Join(errs...)
}

// begin counts a call into e unless e is removed.
func (h *Hooks) begin(e *hookEntry) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e.removed {
		return false
	}
	e.running++
	return true
}

// endLocked ends a call counted by begin (or by running++); h.mu held.
func (h *Hooks) endLocked(e *hookEntry) {
	e.running--
	if e.running == 0 && e.removed {
		h.idle.Broadcast()
	}
}

func (h *Hooks) end(e *hookEntry) {
	h.mu.Lock()
	h.endLocked(e)
	h.mu.Unlock()
}

// modKey identifies a module: by its backend and driver handle, or, for a
// module whose handle is 0, by its dynamic type and address (t and p). Keying
// the registry's map by the device.Module interface itself would hash the dynamic
// value, which panics for a comparable type holding, say, a slice in an
// interface field; a string, a type and two addresses always hash.
type modKey struct {
	backend device.Type
	handle  uintptr
	t       reflect.Type
	p       uintptr
}

// keyOf checks m and returns its key: a module is its backend and handle
// (every Go value wrapping one driver module is that module); one without a
// handle is its address, since modules are pointers.
func keyOf(m device.Module) (key modKey, err error) {
	if m == nil {
		return modKey{}, fmt.Errorf("%w: nil module", ErrInvalidHook)
	}
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer {
		return modKey{}, fmt.Errorf("%w: module of type %T is not a pointer; a device.Module must be a pointer (a module without a driver handle is known by its address)", ErrInvalidHook, m)
	}
	if v.IsNil() {
		return modKey{}, fmt.Errorf("%w: nil %T module", ErrInvalidHook, m)
	}
	defer func() {
		if r := recover(); r != nil {
			key, err = modKey{}, fmt.Errorf("%w: module of type %T panicked telling its backend or handle: %v", ErrInvalidHook, m, r)
		}
	}()
	if h := m.Handle(); h != 0 {
		return modKey{backend: m.Backend(), handle: h}, nil
	}
	return modKey{t: v.Type(), p: v.Pointer()}, nil
}

// Apply runs the matching hooks' Init on m, in registration order, once per
// load of m (see "Once per load" on [Hooks]). Drivers call it right after
// loading m. If a scope cannot decide, or an Init fails or panics, the hooks
// already applied to m are finalized in reverse order and Apply returns a
// [*HookError] naming the hook and the module (joined with any finalize
// errors); the driver then unloads m. Other modules and hooks are untouched.
//
// An Apply of a module whose Apply is running waits for it and returns its
// result; an Apply of a module whose hooks are applied runs nothing and
// returns nil. A nil *Hooks applies nothing.
func (h *Hooks) Apply(m device.Module) error {
	if h == nil {
		return nil
	}
	key, err := keyOf(m)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.lazyInit()
	if old := h.mods[key]; old != nil {
		// Reported again: wait for the run in progress (or a Release or a
		// removal's finalize) to end, and answer what the run answered.
		h.mu.Unlock()
		old.mu.Lock()
		defer old.mu.Unlock()
		return old.err
	}
	if len(h.order) == 0 {
		h.mu.Unlock()
		return nil
	}
	ms := &modState{m: m, key: key}
	ms.mu.Lock() // no other goroutine has ms yet: this never waits
	defer ms.mu.Unlock()
	h.mods[key] = ms
	hooks := h.order // never edited in place
	h.mu.Unlock()

	var failure error
	for _, e := range hooks {
		if !h.begin(e) {
			continue // removed since the snapshot
		}
		match, err := scope(e, m)
		if err == nil && match {
			err = call(e, m, "init", e.hook.Init)
		}
		if err != nil {
			h.end(e)
			failure = err
			break
		}
		if !match {
			h.end(e)
			continue
		}
		h.mu.Lock()
		if e.removed {
			// Removed while its Init ran: undo it here; remove is waiting
			// for this call and reports the finalize error.
			h.mu.Unlock()
			ferr := call(e, m, "finalize", e.hook.Finalize)
			h.mu.Lock()
			if ferr != nil {
				e.lateErrs = append(e.lateErrs, ferr)
			}
			h.endLocked(e)
			h.mu.Unlock()
			continue
		}
		ms.applied = append(slices.Clip(ms.applied), e)
		e.mods[ms] = struct{}{}
		h.endLocked(e)
		h.mu.Unlock()
	}

	if failure != nil {
		// Set before ms.mu is released: the callers waiting on it get it.
		ms.err = errors.Join(append([]error{failure}, h.unwind(ms)...)...)
		return ms.err
	}
	h.mu.Lock()
	if len(ms.applied) == 0 {
		ms.gone = true
		delete(h.mods, key)
	}
	h.mu.Unlock()
	return nil
}

// unwind forgets ms and finalizes its hooks in reverse; ms.mu held.
func (h *Hooks) unwind(ms *modState) []error {
	h.mu.Lock()
	applied := ms.applied
	ms.applied = nil
	ms.gone = true
	delete(h.mods, ms.key)
	for _, e := range applied {
		delete(e.mods, ms)
		e.running++ // a removal waits for this finalize
	}
	h.mu.Unlock()
	var errs []error
	for i := len(applied) - 1; i >= 0; i-- {
		e := applied[i]
		if err := call(e, ms.m, "finalize", e.hook.Finalize); err != nil {
			errs = append(errs, err)
		}
		h.end(e)
	}
	return errs
}

// Release finalizes the hooks applied to m, in reverse order of
// application, and forgets m. Drivers call it right before unloading m; the
// finalize errors come back joined (the driver still unloads). Releasing a
// module with no hooks applied does nothing. An Apply of m in progress is
// waited for first.
func (h *Hooks) Release(m device.Module) error {
	if h == nil {
		return nil
	}
	key, err := keyOf(m)
	if err != nil {
		return err
	}
	h.mu.Lock()
	ms := h.mods[key]
	h.mu.Unlock()
	if ms == nil {
		return nil
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	h.mu.Lock()
	gone := ms.gone
	h.mu.Unlock()
	if gone {
		return nil
	}
	return errors.Join(h.unwind(ms)...)
}

// Applied gives the names of the hooks applied to m, in order of
// application, for diagnostics; nil when none.
func (h *Hooks) Applied(m device.Module) []string {
	if h == nil {
		return nil
	}
	key, err := keyOf(m)
	if err != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ms := h.mods[key]
	if ms == nil || len(ms.applied) == 0 {
		return nil
	}
	names := make([]string, len(ms.applied))
	for i, e := range ms.applied {
		names[i] = e.hook.Name
	}
	return names
}

// Names gives the registered hooks' names in registration order.
func (h *Hooks) Names() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	names := make([]string, len(h.order))
	for i, e := range h.order {
		names[i] = e.hook.Name
	}
	return names
}

func scope(e *hookEntry, m device.Module) (match bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			match, err = false, &HookError{Hook: e.hook.Name, Module: m.Label(), Stage: "scope", Err: fmt.Errorf("%w: %v", ErrHookPanic, r)}
		}
	}()
	match, err = e.hook.Scope(m)
	if err != nil {
		return false, &HookError{Hook: e.hook.Name, Module: m.Label(), Stage: "scope", Err: err}
	}
	return match, nil
}

// call runs f (Init or Finalize; nil does nothing), turning an error or a
// panic into a *HookError.
func call(e *hookEntry, m device.Module, stage string, f func(device.Module) error) (err error) {
	if f == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrHookPanic, r)
		}
		if err != nil {
			err = &HookError{Hook: e.hook.Name, Module: m.Label(), Stage: stage, Err: err}
		}
	}()
	return f(m)
}
