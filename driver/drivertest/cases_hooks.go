package drivertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/hooks"
)

// events records hook calls.
type events struct {
	mu sync.Mutex
	l  []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.l = append(e.l, s)
	e.mu.Unlock()
}

func (e *events) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.l
	e.l = nil
	return l
}

func hookScope(t *testing.T, s *Suite, _ *driver.Backend) {
	hs := hooks.NewHooks()
	b := s.New(driver.WithHooks(hs))
	assert.Same(t, hs, b.Hooks())
	var ev events
	var seen []device.Module
	_, err := hs.Register(hooks.Hook{
		Name:  "xy",
		Scope: hooks.HasGlobals("x", "y"),
		Init: func(m device.Module) error {
			ev.add("init " + m.Label())
			seen = append(seen, m)
			return nil
		},
		Finalize: func(m device.Module) error { ev.add("fini " + m.Label()); return nil },
	})
	require.NoError(t, err)

	plain, err := b.LoadModule(0, []byte(AddImage), "plain")
	require.NoError(t, err)
	live := counter(t, "fake_live_modules")
	assert.Nil(t, hs.Applied(plain))
	assert.Empty(t, ev.take(), "the hook does not run on a module without its globals")

	both, err := b.LoadModule(1, []byte("fake-module\nglobal x 4\nglobal y 8\nfunction nop nop\n"), "both")
	require.NoError(t, err)
	assert.Equal(t, []string{"xy"}, hs.Applied(both))
	assert.Equal(t, []string{"xy"}, both.(*driver.Module).Applied())
	assert.Equal(t, []string{"init both"}, ev.take())
	require.Len(t, seen, 1)
	assert.Same(t, both.(*driver.Module), seen[0].(*driver.Module), "hooks get the module LoadModule returns")

	one, err := b.LoadModule(0, []byte("fake-module\nglobal x 4\n"), "one")
	assert.Nil(t, one)
	assert.ErrorIs(t, err, hooks.ErrPartialGlobals)
	assert.ErrorIs(t, err, hooks.ErrHookFailed)
	assert.ErrorContains(t, err, `hook "xy"`)
	assert.ErrorContains(t, err, `module "one" on device 0 was unloaded`)
	assert.Equal(t, 2, live(), "the module with one of the two globals was unloaded")
	assert.Empty(t, ev.take())

	require.NoError(t, both.Unload())
	assert.Equal(t, []string{"fini both"}, ev.take())
	assert.Nil(t, hs.Applied(both))
	require.NoError(t, plain.Unload())
	assert.Empty(t, ev.take())
	assert.Zero(t, live())
}

func hookFailure(t *testing.T, s *Suite, _ *driver.Backend) {
	hs := hooks.NewHooks()
	b := s.New(driver.WithHooks(hs))
	var ev events
	reg := func(name string, init func(m device.Module) error) {
		_, err := hs.Register(hooks.Hook{
			Name:  name,
			Scope: hooks.AnyModule(),
			Init: func(m device.Module) error {
				ev.add(name + ".init " + m.Label())
				return init(m)
			},
			Finalize: func(m device.Module) error { ev.add(name + ".fini " + m.Label()); return nil },
		})
		require.NoError(t, err)
	}
	reg("A", func(device.Module) error { return nil })
	reg("B", func(m device.Module) error {
		if m.Label() == "bad" {
			return errors.New("hook B refuses")
		}
		return nil
	})
	reg("C", func(m device.Module) error {
		if m.Label() == "panic" {
			panic("C blew up")
		}
		return nil
	})

	good, err := b.LoadModule(0, []byte(AddImage), "good")
	require.NoError(t, err)
	live := counter(t, "fake_live_modules")
	assert.Equal(t, []string{"A", "B", "C"}, good.(*driver.Module).Applied())
	assert.Equal(t, []string{"A.init good", "B.init good", "C.init good"}, ev.take())

	_, err = b.LoadModule(0, []byte(AddImage), "bad")
	var he *hooks.HookError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "B", he.Hook)
	assert.ErrorIs(t, err, hooks.ErrHookFailed)
	assert.ErrorContains(t, err, "B refuses")
	assert.Equal(t, []string{"A.init bad", "B.init bad", "A.fini bad"}, ev.take())
	assert.Equal(t, 1, live())

	_, err = b.LoadModule(1, []byte(AddImage), "panic")
	assert.ErrorIs(t, err, hooks.ErrHookPanic)
	assert.ErrorContains(t, err, `hook "C"`)
	assert.ErrorContains(t, err, "C blew up")
	assert.Equal(t, []string{"A.init panic", "B.init panic", "C.init panic", "B.fini panic", "A.fini panic"}, ev.take())
	assert.Equal(t, 1, live())

	assert.Equal(t, []string{"A", "B", "C"}, good.(*driver.Module).Applied(), "other modules are untouched")
	s.roundTrip(t, b, good, 0, 10)
	require.NoError(t, good.Unload())
	assert.Equal(t, []string{"C.fini good", "B.fini good", "A.fini good"}, ev.take(), "unload finalizes in reverse")
	assert.Zero(t, live())
}

func hookRemove(t *testing.T, s *Suite, _ *driver.Backend) {
	hs := hooks.NewHooks()
	b := s.New(driver.WithHooks(hs))
	var ev events
	remove, err := hs.Register(hooks.Hook{
		Name:     "r",
		Scope:    hooks.HasGlobals("x"),
		Init:     func(m device.Module) error { ev.add("init " + m.Label()); return nil },
		Finalize: func(m device.Module) error { ev.add("fini " + m.Label()); return nil },
	})
	require.NoError(t, err)
	var mods []device.LoadedModule
	for i := range 3 {
		m, err := b.LoadModule(i%2, []byte("fake-module\nglobal x 4\n"), fmt.Sprint("m", i))
		require.NoError(t, err)
		mods = append(mods, m)
	}
	plain, err := b.LoadModule(0, []byte(AddImage), "plain")
	require.NoError(t, err)
	assert.Len(t, ev.take(), 3)
	require.NoError(t, remove())
	assert.ElementsMatch(t, []string{"fini m0", "fini m1", "fini m2"}, ev.take(), "removing a hook finalizes what it initialized")
	assert.Empty(t, hs.Names())
	for _, m := range append(mods, plain) {
		assert.Nil(t, hs.Applied(m))
		require.NoError(t, m.Unload())
	}
	assert.Empty(t, ev.take(), "nothing is finalized twice")
	assert.Zero(t, counter(t, "fake_live_modules")())
}

func hookParallel(t *testing.T, s *Suite, _ *driver.Backend) {
	hs := hooks.NewHooks()
	b := s.New(driver.WithHooks(hs))
	var mu sync.Mutex
	balance := map[string]int{} // "hook module" -> inits - finalizes
	count := func(hook string, d int) func(device.Module) error {
		return func(m device.Module) error {
			mu.Lock()
			balance[fmt.Sprintf("%s %p", hook, m)] += d
			mu.Unlock()
			return nil
		}
	}
	_, err := hs.Register(hooks.Hook{Name: "base", Scope: hooks.HasGlobals("x", "y"), Init: count("base", 1), Finalize: count("base", -1)})
	require.NoError(t, err)

	const goroutines, rounds = 16, 25
	var wg sync.WaitGroup
	var stop atomic.Bool
	errs := make(chan error, goroutines+1)
	wg.Add(1)
	go func() { // churn: hooks come and go while modules load
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			name := fmt.Sprint("churn", i)
			remove, err := hs.Register(hooks.Hook{Name: name, Scope: hooks.AnyModule(), Init: count(name, 1), Finalize: count(name, -1)})
			if err != nil {
				errs <- err
				return
			}
			if err := remove(); err != nil {
				errs <- err
				return
			}
		}
	}()
	var loaders sync.WaitGroup
	for g := range goroutines {
		loaders.Add(1)
		go func() {
			defer loaders.Done()
			for r := range rounds {
				img, nvs := AddImage, false
				if (g+r)%3 != 0 {
					img, nvs = "fake-module\nglobal x 4\nglobal y 4\nfunction nop nop ptr\n", true
				}
				dev := (g + r) % 2
				m, err := b.LoadModule(dev, []byte(img), fmt.Sprintf("g%d-r%d", g, r))
				if err != nil {
					errs <- err
					return
				}
				if applied := hs.Applied(m); nvs != (len(applied) > 0 && applied[0] == "base") {
					errs <- fmt.Errorf("%s: applied %v", m.Label(), applied)
				}
				fn, err := m.Function("nop")
				if err == nil && s.launches() {
					p, _ := b.Alloc(dev, 8)
					err = b.Launch(dev, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, p)
					_ = b.Free(dev, p)
				} else if !nvs && errors.Is(err, device.ErrNotFound) {
					err = nil
				}
				if err == nil {
					err = m.Unload()
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	loaders.Wait()
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range balance {
		if v != 0 {
			t.Errorf("%s: %d unbalanced inits", k, v)
		}
	}
	assert.NotEmpty(t, balance)
	assert.Equal(t, []string{"base"}, hs.Names())
	assert.Zero(t, counter(t, "fake_live_modules")())
	assert.Zero(t, counter(t, "fake_live_allocs")())
}

// unavailableSetup makes the backend unusable as unavailableCode says.
func unavailableSetup(t *testing.T, s *Suite) []string {
	if _, stub := s.stubCode(); stub {
		return withOverride(nil, "FAKE_STUB=1")(t, s)
	}
	code, _ := s.unavailableCode()
	return withOverride(nil, fmt.Sprintf("FAKE_INIT_RESULT=%d", code))(t, s)
}

// unavailableCode is how the unavailable_note case makes the backend
// unusable: the vendor's stub code (CUDA's 34) where it has one, else init
// failing with no device (100, or the vendor's code for it: Suite.Codes),
// and the sentinel that code matches.
func (s *Suite) unavailableCode() (int, error) {
	if c, ok := s.stubCode(); ok {
		return c, driver.ErrStubLibrary
	}
	return s.code(100), driver.ErrNoDevice
}

func unavailableNote(t *testing.T, s *Suite, _ *driver.Backend) {
	code, sentinel := s.unavailableCode()
	code = s.code(code)
	var note atomic.Value
	note.Store("")
	var calls atomic.Int32
	b := s.New(driver.WithUnavailableNote(func() string { calls.Add(1); return note.Load().(string) }))
	r := b.Available()
	require.False(t, r.Available)
	assert.True(t, strings.HasPrefix(r.Reason, fmt.Sprintf("%s: %s(0) failed: %s (%d)", s.typ(), s.sym(driver.OpInit), s.Vendor.ResultName(code), code)), r.Reason)
	assert.Equal(t, 1, strings.Count(r.Reason, string(s.typ())+": "), "no doubled prefix: %s", r.Reason)
	assert.Zero(t, calls.Load(), "the probe does not ask for the note")

	_, err := b.Current()
	assert.Equal(t, r.Reason, err.Error(), "an empty note adds nothing")

	const alias = "the cuda->flagos alias is off (FLAGOS_ALIAS_CUDA=0); unset it to run cuda code on flagos"
	note.Store(alias)
	want := r.Reason + ". The cuda->flagos alias is off (FLAGOS_ALIAS_CUDA=0); unset it to run cuda code on flagos."
	_, err = b.Current()
	assert.Equal(t, want, err.Error())
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	assert.ErrorIs(t, err, sentinel)
	_, err = b.DeviceCount()
	assert.Equal(t, want, err.Error())
	for name, err := range map[string]error{
		"SetCurrent":  b.SetCurrent(0),
		"Synchronize": b.Synchronize(0),
		"Launch":      b.Launch(0, &driver.Function{}, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0),
		"CopyHtoD":    b.CopyHtoD(0, 1, []byte{1}),
		"LoadModule":  func() error { _, err := b.LoadModule(0, []byte(AddImage), "x"); return err }(),
		"Alloc":       func() error { _, err := b.Alloc(0, 8); return err }(),
		"Properties":  func() error { _, err := b.Properties(0); return err }(),
		"PCIBusID":    func() error { _, err := b.PCIBusID(0); return err }(),
		"MemInfo":     func() error { _, _, err := b.MemInfo(0); return err }(),
		"NewStream":   func() error { _, err := b.NewStream(0); return err }(),
	} {
		assert.Equal(t, want, fmt.Sprint(err), name)
		assert.ErrorIs(t, err, device.ErrNotAvailable, name)
	}
	assert.Equal(t, r.Reason, b.Available().Reason, "the probe's reason is left alone")
	assert.Equal(t, r.Reason, b.Describe().Extra["reason"])
	note.Store("  ")
	_, err = b.Current()
	assert.Equal(t, r.Reason, err.Error(), "the note is computed at error time")
}
