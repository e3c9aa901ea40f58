package gpudrvtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/gpudrv"
)

// AddImage is a fake module (see fake_common.h): a global, the float add
// kernel with the parameters of plugins/nvshmem/testdata/add.cu (a, b, c,
// n), an echo of every argument type Launch takes, no-op kernels of 3 and 8
// parameters and a kernel whose launch fails. No trailing NUL: LoadModule
// must add it.
const AddImage = `fake-module
global flagshim_marker 4
function add add
function echo echo ptr i32 u32 i64 u64 f32 f64 ptr ptr
function nop3 nop ptr ptr u32
function nop8 nop ptr ptr u32 u32 u64 u64 f32 f64
function boom fail
`

// counter calls an exported int(void) of the fake the child loaded.
func counter(t *testing.T, name string) func() int {
	t.Helper()
	lib, err := purego.Dlopen(os.Getenv("FLAGOS_TEST_LIB"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	sym, err := purego.Dlsym(lib, name)
	require.NoError(t, err)
	return func() int {
		r, _, _ := purego.SyscallN(sym)
		return int(int32(uint32(r)))
	}
}

func floats(n int, f func(i int) float32) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f(i)))
	}
	return b
}

// AddRoundTrip allocates, copies, launches the add kernel of m on device dev
// over n floats, reads the result back, checks it and frees. The GPU tests
// use it too.
func AddRoundTrip(t *testing.T, b Backend, m *gpudrv.Module, dev, n int) {
	t.Helper()
	add, err := m.Function("add")
	require.NoError(t, err)
	assert.Equal(t, "add", add.Name())
	assert.Same(t, m, add.Module())
	ha := floats(n, func(i int) float32 { return float32(i) })
	hb := floats(n, func(i int) float32 { return float32(2*i) + 0.5 })
	var ptrs [3]gpudrv.DevicePtr
	for i := range ptrs {
		ptrs[i], err = b.Alloc(dev, uint64(4*n))
		require.NoError(t, err)
	}
	require.NoError(t, b.CopyHtoD(dev, ptrs[0], ha))
	require.NoError(t, b.CopyHtoD(dev, ptrs[1], hb))
	block := uint32(256)
	grid := (uint32(n) + block - 1) / block
	require.NoError(t, b.Launch(dev, add, [3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, ptrs[0], ptrs[1], ptrs[2], uint32(n)))
	hc := make([]byte, 4*n)
	require.NoError(t, b.CopyDtoH(dev, hc, ptrs[2]))
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(hc[4*i:]))
		if want := float32(i) + float32(2*i) + 0.5; got != want {
			t.Fatalf("add: c[%d] = %v, want %v", i, got, want)
		}
	}
	for _, p := range ptrs {
		require.NoError(t, b.Free(dev, p))
	}
}

// EchoArgs launches echo(out, int32, uint32, int64, uint64, float32,
// float64, DevicePtr, uintptr), which stores each argument in an 8-byte slot
// of out, and checks every value came through. The GPU tests use it too
// (with a PTX echo that stores the first six).
func EchoArgs(t *testing.T, b Backend, m *gpudrv.Module, dev int, slots int) {
	t.Helper()
	echo, err := m.Function("echo")
	require.NoError(t, err)
	out, err := b.Alloc(dev, 64)
	require.NoError(t, err)
	require.NoError(t, b.CopyHtoD(dev, out, make([]byte, 64)))
	args := []any{out, int32(-5), uint32(0xfffffff0), int64(-1 << 40), uint64(1<<63 + 5), float32(1.5), float64(-2.25),
		gpudrv.DevicePtr(0x1234_5678_9abc), uintptr(0x5678)}
	require.NoError(t, b.Launch(dev, echo, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, args[:1+slots]...))
	got := make([]byte, 64)
	require.NoError(t, b.CopyDtoH(dev, got, out))
	slot := func(i int) uint64 { return binary.LittleEndian.Uint64(got[8*i:]) }
	want := []uint64{uint64(uint32(0xfffffffb)), 0xfffffff0, uint64(1<<64 - 1<<40), 1<<63 + 5,
		uint64(math.Float32bits(1.5)), math.Float64bits(-2.25), 0x1234_5678_9abc, 0x5678}
	for i := range slots {
		assert.Equalf(t, want[i], slot(i), "argument %d (%T)", i+1, args[i+1])
	}
	require.NoError(t, b.Free(dev, out))
}

func moduleRoundTrip(t *testing.T, h *Harness, b Backend) {
	live, allocs := counter(t, "fake_live_modules"), counter(t, "fake_live_allocs")
	require.True(t, b.Available().Available)

	// A rejected image: the driver's code, and the JIT log when the
	// library has the Ex form.
	_, err := b.LoadModule(0, []byte("fake-module\nerror ptxas fatal : Unresolved extern function 'x'\n"), "bad.ptx")
	var e *gpudrv.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 218, e.Code)
	assert.Contains(t, err.Error(), `"bad.ptx"`)
	if os.Getenv("GPUDRVTEST_NO_EX") == "" {
		assert.Contains(t, err.Error(), h.sym("ModuleLoadDataEx"))
		assert.Contains(t, err.Error(), "JIT log: ptxas fatal : Unresolved extern function 'x' (line 2)")
	} else {
		assert.Contains(t, err.Error(), h.sym("ModuleLoadData")+"(")
	}
	_, err = b.LoadModule(0, []byte("\x7fELF not a fake"), "x.cubin")
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 200, e.Code)
	_, err = b.LoadModule(0, nil, "")
	assert.ErrorContains(t, err, "empty image")
	assert.Zero(t, live())

	m, err := b.LoadModule(1, []byte(AddImage), "add.fake")
	require.NoError(t, err)
	var _ device.Module = m
	assert.Equal(t, 1, live())
	assert.Equal(t, 1, m.Device())
	assert.Equal(t, "add.fake", m.Label())
	assert.Equal(t, device.Type(h.Pkg), m.Backend())
	assert.NotZero(t, m.Handle())
	assert.Nil(t, m.Applied())
	anon, err := b.LoadModule(0, []byte(AddImage+"\x00"), "")
	require.NoError(t, err)
	assert.Regexp(t, `^module#\d+$`, anon.Label())

	// Globals are device memory of the module's context.
	addr, size, ok, err := m.Global("flagshim_marker")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, uint64(4), size)
	assert.NotZero(t, addr)
	require.NoError(t, b.CopyHtoD(1, gpudrv.DevicePtr(addr), []byte{7, 0, 0, 0}))
	got := make([]byte, 4)
	require.NoError(t, b.CopyDtoH(1, got, gpudrv.DevicePtr(addr)))
	assert.Equal(t, []byte{7, 0, 0, 0}, got)
	_, _, ok, err = m.Global("nvshmemi_device_state_d")
	assert.NoError(t, err, "a missing global is not an error")
	assert.False(t, ok)
	_, _, _, err = m.Global("a\x00b")
	assert.Error(t, err)

	_, err = m.Function("nope")
	assert.ErrorIs(t, err, h.Errs.NotFound)
	assert.ErrorContains(t, err, `module "add.fake" (device 1) has no function "nope"`)

	AddRoundTrip(t, b, m, 1, 1000)
	AddRoundTrip(t, b, anon, 0, 3)
	EchoArgs(t, b, m, 1, 8)
	assert.Zero(t, allocs())

	// Launch errors.
	add, err := m.Function("add")
	require.NoError(t, err)
	one := [3]uint32{1, 1, 1}
	p, err := b.Alloc(1, 16)
	require.NoError(t, err)
	err = b.Launch(0, add, one, one, 0, p, p, p, uint32(1))
	assert.ErrorIs(t, err, h.Errs.InvalidDevice)
	assert.ErrorContains(t, err, "loaded on device 1")
	assert.Error(t, b.Launch(1, gpudrv.Function{}, one, one, 0))
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, p, p, p, 4), "int32")
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, p, p, p, "4"), "string")
	many := make([]any, gpudrv.MaxLaunchArgs+1)
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, many...), "at most")
	boom, err := m.Function("boom")
	require.NoError(t, err)
	err = b.Launch(1, boom, one, one, 0)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 719, e.Code)
	assert.ErrorContains(t, err, `"boom"`)
	// The fake checks pointers at launch (a GPU reports it later).
	err = b.Launch(1, add, one, one, 0, p, p, gpudrv.DevicePtr(16), uint32(4))
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 700, e.Code)
	assert.Error(t, b.CopyHtoD(1, gpudrv.DevicePtr(16), []byte{1}))
	assert.NoError(t, b.CopyHtoD(1, gpudrv.DevicePtr(16), nil), "an empty copy does nothing")
	assert.ErrorIs(t, b.CopyHtoD(5, p, []byte{1}), h.Errs.InvalidDevice)
	require.NoError(t, b.Free(1, p))
	assert.Error(t, b.Free(1, p), "double free")
	assert.Zero(t, allocs())

	// Unload: idempotent; the module is unusable afterwards.
	require.NoError(t, m.Unload())
	assert.True(t, m.Unloaded())
	require.NoError(t, m.Unload())
	assert.Equal(t, 1, live())
	_, err = m.Function("add")
	assert.ErrorIs(t, err, h.Errs.Unloaded)
	_, _, _, err = m.Global("flagshim_marker")
	assert.ErrorIs(t, err, h.Errs.Unloaded)
	assert.ErrorIs(t, b.Launch(1, add, one, one, 0, p, p, p, uint32(1)), h.Errs.Unloaded)
	require.NoError(t, anon.Unload())
	assert.Zero(t, live())
}

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

func hookScope(t *testing.T, h *Harness, _ Backend) {
	hooks := device.NewHooks()
	b := h.NewWith(h.childSpec(), hooks, nil)
	assert.Same(t, hooks, b.Hooks())
	var ev events
	var seen []device.Module
	_, err := hooks.Register(device.Hook{
		Name:  "xy",
		Scope: device.HasGlobals("x", "y"),
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
	assert.Nil(t, hooks.Applied(plain))
	assert.Empty(t, ev.take(), "the hook does not run on a module without its globals")

	both, err := b.LoadModule(1, []byte("fake-module\nglobal x 4\nglobal y 8\nfunction nop nop\n"), "both")
	require.NoError(t, err)
	assert.Equal(t, []string{"xy"}, hooks.Applied(both))
	assert.Equal(t, []string{"xy"}, both.Applied())
	assert.Equal(t, []string{"init both"}, ev.take())
	require.Len(t, seen, 1)
	assert.Same(t, both, seen[0].(*gpudrv.Module), "hooks get the *Module LoadModule returns")

	one, err := b.LoadModule(0, []byte("fake-module\nglobal x 4\n"), "one")
	assert.Nil(t, one)
	assert.ErrorIs(t, err, device.ErrPartialGlobals)
	assert.ErrorIs(t, err, device.ErrHookFailed)
	assert.ErrorContains(t, err, `hook "xy"`)
	assert.ErrorContains(t, err, `module "one" on device 0 was unloaded`)
	assert.Equal(t, 2, live(), "the module with one of the two globals was unloaded")
	assert.Empty(t, ev.take())

	require.NoError(t, both.Unload())
	assert.Equal(t, []string{"fini both"}, ev.take())
	assert.Nil(t, hooks.Applied(both))
	require.NoError(t, plain.Unload())
	assert.Empty(t, ev.take())
	assert.Zero(t, live())
}

func hookFailure(t *testing.T, h *Harness, _ Backend) {
	hooks := device.NewHooks()
	b := h.NewWith(h.childSpec(), hooks, nil)
	var ev events
	reg := func(name string, init func(m device.Module) error) {
		_, err := hooks.Register(device.Hook{
			Name:  name,
			Scope: device.AnyModule(),
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
	assert.Equal(t, []string{"A", "B", "C"}, good.Applied())
	assert.Equal(t, []string{"A.init good", "B.init good", "C.init good"}, ev.take())

	_, err = b.LoadModule(0, []byte(AddImage), "bad")
	var he *device.HookError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "B", he.Hook)
	assert.ErrorIs(t, err, device.ErrHookFailed)
	assert.ErrorContains(t, err, "B refuses")
	assert.Equal(t, []string{"A.init bad", "B.init bad", "A.fini bad"}, ev.take())
	assert.Equal(t, 1, live())

	_, err = b.LoadModule(1, []byte(AddImage), "panic")
	assert.ErrorIs(t, err, device.ErrHookPanic)
	assert.ErrorContains(t, err, `hook "C"`)
	assert.ErrorContains(t, err, "C blew up")
	assert.Equal(t, []string{"A.init panic", "B.init panic", "C.init panic", "B.fini panic", "A.fini panic"}, ev.take())
	assert.Equal(t, 1, live())

	assert.Equal(t, []string{"A", "B", "C"}, good.Applied(), "other modules are untouched")
	AddRoundTrip(t, b, good, 0, 10)
	require.NoError(t, good.Unload())
	assert.Equal(t, []string{"C.fini good", "B.fini good", "A.fini good"}, ev.take(), "unload finalizes in reverse")
	assert.Zero(t, live())
}

func hookRemove(t *testing.T, h *Harness, _ Backend) {
	hooks := device.NewHooks()
	b := h.NewWith(h.childSpec(), hooks, nil)
	var ev events
	remove, err := hooks.Register(device.Hook{
		Name:     "r",
		Scope:    device.HasGlobals("x"),
		Init:     func(m device.Module) error { ev.add("init " + m.Label()); return nil },
		Finalize: func(m device.Module) error { ev.add("fini " + m.Label()); return nil },
	})
	require.NoError(t, err)
	var mods []*gpudrv.Module
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
	assert.Empty(t, hooks.Names())
	for _, m := range append(mods, plain) {
		assert.Nil(t, m.Applied())
		require.NoError(t, m.Unload())
	}
	assert.Empty(t, ev.take(), "nothing is finalized twice")
	assert.Zero(t, counter(t, "fake_live_modules")())
}

func hookParallel(t *testing.T, h *Harness, _ Backend) {
	hooks := device.NewHooks()
	b := h.NewWith(h.childSpec(), hooks, nil)
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
	_, err := hooks.Register(device.Hook{Name: "base", Scope: device.HasGlobals("x", "y"), Init: count("base", 1), Finalize: count("base", -1)})
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
			remove, err := hooks.Register(device.Hook{Name: name, Scope: device.AnyModule(), Init: count(name, 1), Finalize: count(name, -1)})
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
				if applied := m.Applied(); nvs != (len(applied) > 0 && applied[0] == "base") {
					errs <- fmt.Errorf("%s: applied %v", m.Label(), applied)
				}
				fn, err := m.Function("nop")
				if err == nil {
					p, _ := b.Alloc(dev, 8)
					err = b.Launch(dev, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, p)
					_ = b.Free(dev, p)
				} else if !nvs && errors.Is(err, h.Errs.NotFound) {
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
	nonzero := 0
	for k, v := range balance {
		if v != 0 {
			t.Errorf("%s: %d unbalanced inits", k, v)
			nonzero++
		}
	}
	assert.NotEmpty(t, balance)
	assert.Equal(t, []string{"base"}, hooks.Names())
	assert.Zero(t, counter(t, "fake_live_modules")())
	assert.Zero(t, counter(t, "fake_live_allocs")())
}

func unavailableNote(t *testing.T, h *Harness, _ Backend) {
	var note atomic.Value
	note.Store("")
	var calls atomic.Int32
	b := h.NewWith(h.childSpec(), nil, func() string { calls.Add(1); return note.Load().(string) })
	r := b.Available()
	require.False(t, r.Available)
	assert.True(t, strings.HasPrefix(r.Reason, h.Pkg+": "+h.sym("Init")+"(0) failed: "+h.ErrPrefix+"ERROR_STUB_LIBRARY (34)"), r.Reason)
	assert.Equal(t, 1, strings.Count(r.Reason, h.Pkg+": "), "no doubled prefix: %s", r.Reason)
	assert.Zero(t, calls.Load(), "the probe does not ask for the note")

	_, err := b.Current()
	assert.Equal(t, r.Reason, err.Error(), "an empty note adds nothing")

	const alias = "the cuda->flagos alias is off (FLAGOS_ALIAS_CUDA=0); unset it to run cuda code on flagos"
	note.Store(alias)
	want := r.Reason + ". The cuda->flagos alias is off (FLAGOS_ALIAS_CUDA=0); unset it to run cuda code on flagos."
	_, err = b.Current()
	assert.Equal(t, want, err.Error())
	assert.ErrorIs(t, err, h.Errs.NotAvailable)
	assert.ErrorIs(t, err, h.Errs.StubLibrary)
	_, err = b.DeviceCount()
	assert.Equal(t, want, err.Error())
	for name, err := range map[string]error{
		"SetCurrent":  b.SetCurrent(0),
		"Synchronize": b.Synchronize(0),
		"Launch":      b.Launch(0, gpudrv.Function{}, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0),
		"CopyHtoD":    b.CopyHtoD(0, 1, []byte{1}),
		"LoadModule":  func() error { _, err := b.LoadModule(0, []byte(AddImage), "x"); return err }(),
		"Alloc":       func() error { _, err := b.Alloc(0, 8); return err }(),
		"Properties":  func() error { _, err := b.Properties(0); return err }(),
		"PCIBusID":    func() error { _, err := b.PCIBusID(0); return err }(),
		"MemInfo":     func() error { _, _, err := b.MemInfo(0); return err }(),
	} {
		assert.Equal(t, want, fmt.Sprint(err), name)
		assert.ErrorIs(t, err, h.Errs.NotAvailable, name)
	}
	assert.Equal(t, r.Reason, b.Available().Reason, "the probe's reason is left alone")
	assert.Equal(t, r.Reason, b.Describe().Extra["reason"])
	note.Store("  ")
	_, err = b.Current()
	assert.Equal(t, r.Reason, err.Error(), "the note is computed at error time")
}

func noModules(t *testing.T, h *Harness, b Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	_, err := b.Properties(0)
	require.NoError(t, err)
	require.NoError(t, b.Synchronize(1))
	_, err = b.LoadModule(0, []byte(AddImage), "x")
	assert.ErrorIs(t, err, h.Errs.NotSupported)
	assert.ErrorContains(t, err, h.sym("ModuleLoadData"))
	_, err = b.Alloc(0, 8)
	assert.ErrorIs(t, err, h.Errs.NotSupported)
	assert.ErrorContains(t, err, h.sym("MemAlloc_v2"))
	assert.ErrorIs(t, b.CopyDtoH(0, []byte{1}, 1), h.Errs.NotSupported)
	assert.ErrorIs(t, b.Launch(0, gpudrv.Function{}, [3]uint32{}, [3]uint32{}, 0), h.Errs.NotSupported)
	extra := b.Describe().Extra
	assert.Contains(t, extra, "missing."+h.sym("ModuleLoadData"))
	assert.Contains(t, extra, "missing."+h.sym("LaunchKernel"))
}

func init() {
	cases = append(cases,
		fakeCase{name: "modules", setup: withOverride(nil), check: moduleRoundTrip},
		fakeCase{name: "modules_without_ex", setup: withOverride([]string{"-DFAKE_NO_LOAD_DATA_EX"}, "GPUDRVTEST_NO_EX=1"), check: moduleRoundTrip},
		fakeCase{name: "modules_not_supported", setup: withOverride([]string{"-DFAKE_NO_MODULES"}), check: noModules},
		fakeCase{name: "hooks_scope", setup: withOverride(nil), check: hookScope},
		fakeCase{name: "hooks_failure", setup: withOverride(nil), check: hookFailure},
		fakeCase{name: "hooks_remove", setup: withOverride(nil), check: hookRemove},
		fakeCase{name: "hooks_parallel", setup: withOverride(nil), check: hookParallel},
		fakeCase{name: "unavailable_note", setup: withOverride(nil, "FAKE_STUB=1"), check: unavailableNote},
	)
}
