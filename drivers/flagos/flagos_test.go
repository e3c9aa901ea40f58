package flagos_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/probe"
)

func TestRoute(t *testing.T) {
	musa2 := func() *fake { return newFake(device.MUSA, 2, true, "2 devices (libmusa.so.1, driver 3.1)") }
	musaOff := func() *fake { return newFake(device.MUSA, 0, false, "libmusa.so.1: cannot open shared object file") }
	musaZero := func() *fake { return newFake(device.MUSA, 0, true, "0 devices") }
	cuda1 := func() *fake { return newFake(device.CUDA, 1, true, "1 device (libcuda.so.1, driver 13.0)") }
	cudaOff := func() *fake { return newFake(device.CUDA, 0, false, "libcuda.so.1: stub library") }
	acme3 := func() *fake { return newFake("acme", 3, true, "3 acme cards") }

	tests := []struct {
		name     string
		env      string
		backends []*fake
		want     device.Type // "" when no route
		errIs    []error
		errMsg   string // substring of the error
	}{
		{"auto prefers musa", "", []*fake{musa2(), cuda1()}, device.MUSA, nil, ""},
		{"auto spelled out", " Auto ", []*fake{musa2(), cuda1()}, device.MUSA, nil, ""},
		{"auto falls back to cuda", "auto", []*fake{musaOff(), cuda1()}, device.CUDA, nil, ""},
		{"auto skips musa with zero devices", "", []*fake{musaZero(), cuda1()}, device.CUDA, nil, ""},
		{"auto without musa registered", "", []*fake{cuda1()}, device.CUDA, nil, ""},
		{"auto ignores custom backends", "", []*fake{acme3()}, "", []error{flagos.ErrNoRoute},
			"FLAGOS_BACKEND=auto: musa is not registered; hip is not registered; cuda is not registered"},
		{"auto with nothing available", "", []*fake{musaOff(), cudaOff()}, "", []error{flagos.ErrNoRoute},
			"musa is not available (libmusa.so.1: cannot open shared object file); hip is not registered; cuda is not available (libcuda.so.1: stub library)"},
		{"explicit musa", "musa", []*fake{musa2(), cuda1()}, device.MUSA, nil, ""},
		{"explicit cuda beats auto order", "cuda", []*fake{musa2(), cuda1()}, device.CUDA, nil, ""},
		{"explicit is case-insensitive", "  CUDA\t", []*fake{musa2(), cuda1()}, device.CUDA, nil, ""},
		{"explicit plugin backend", "acme", []*fake{musa2(), cuda1(), acme3()}, "acme", nil, ""},
		{"explicit unknown", "rocm", []*fake{musa2(), cuda1()}, "", []error{flagos.ErrNoRoute},
			`FLAGOS_BACKEND="rocm" names no registered backend; accepted values: auto, cuda, musa`},
		{"explicit unknown, nothing registered", "rocm", nil, "", []error{flagos.ErrNoRoute},
			`FLAGOS_BACKEND="rocm" names no registered backend; accepted values: auto (no vendor backend is registered besides cpu and flagos)`},
		{"explicit unavailable, no fallback", "cuda", []*fake{musa2(), cudaOff()}, "", []error{flagos.ErrNoRoute},
			"FLAGOS_BACKEND=cuda: cuda is not available: libcuda.so.1: stub library"},
		{"explicit with zero devices", "musa", []*fake{musaZero(), cuda1()}, "", []error{flagos.ErrNoRoute},
			"FLAGOS_BACKEND=musa: musa is not available: 0 devices"},
		{"flagos is refused", "flagos", []*fake{musa2()}, "", []error{flagos.ErrNoRoute, flagos.ErrBadChoice}, "flagos cannot route to itself"},
		{"cpu is refused", "CPU", []*fake{musa2()}, "", []error{flagos.ErrNoRoute, flagos.ErrBadChoice}, "cpu is not a flagos target"},
		{"garbage is refused", "mu sa", []*fake{musa2()}, "", []error{flagos.ErrNoRoute, flagos.ErrBadChoice}, `FLAGOS_BACKEND="mu sa"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bs []device.Backend
			for _, f := range tt.backends {
				bs = append(bs, f)
			}
			devs := registry(t, bs...)
			fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{v: tt.env}).get))
			require.NoError(t, devs.Register(fl))

			got, err := fl.Route()
			avail := fl.Available()
			if tt.want == "" {
				require.Error(t, err)
				assert.Nil(t, got)
				for _, target := range tt.errIs {
					assert.ErrorIs(t, err, target)
				}
				assert.Contains(t, err.Error(), tt.errMsg)
				assert.False(t, avail.Available)
				assert.Zero(t, avail.Devices)
				assert.Equal(t, err.Error(), avail.Reason)
				assert.Equal(t, device.Type(""), fl.Describe().RoutesTo)
				assert.Equal(t, err.Error(), fl.Describe().Extra["route_error"])
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Type())
			assert.True(t, avail.Available)
			want := got.Available()
			assert.Equal(t, want.Devices, avail.Devices)
			assert.Equal(t, "routes to "+string(tt.want)+": "+want.Reason, avail.Reason)
			n, err := fl.DeviceCount()
			require.NoError(t, err)
			assert.Equal(t, want.Devices, n)
			d := fl.Describe()
			assert.Equal(t, tt.want, d.RoutesTo)
			wantChoice := strings.ToLower(strings.TrimSpace(tt.env))
			if wantChoice == "" {
				wantChoice = "auto"
			}
			assert.Equal(t, wantChoice, d.Extra["backend_choice"])
		})
	}
}

func TestParseChoice(t *testing.T) {
	tests := []struct {
		in   string
		auto bool
		name device.Type
		bad  bool
	}{
		{"", true, "", false},
		{"   ", true, "", false},
		{"auto", true, "", false},
		{" AUTO\n", true, "", false},
		{"musa", false, device.MUSA, false},
		{"Cuda", false, device.CUDA, false},
		{" acme_2 ", false, "acme_2", false},
		{"flagos", false, "", true},
		{"FlagOS", false, "", true},
		{"cpu", false, "", true},
		{"cuda:0", false, "", true},
		{"2cuda", false, "", true},
		{"mu sa", false, "", true},
		{"musa,cuda", false, "", true},
		{"é", false, "", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			auto, name, err := flagos.ParseChoice(tt.in)
			if tt.bad {
				require.ErrorIs(t, err, flagos.ErrBadChoice)
				assert.Contains(t, err.Error(), fmt.Sprintf("FLAGOS_BACKEND=%q", tt.in))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.auto, auto)
			assert.Equal(t, tt.name, name)
		})
	}
}

func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"", "auto", " AUTO ", "musa", "CUDA", "acme", "flagos", "cpu", "cuda:1", "a_1", "\x00", "ÿ", "mu sa"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		auto, name, err := flagos.ParseChoice(v)
		if err != nil {
			if !errors.Is(err, flagos.ErrBadChoice) {
				t.Fatalf("ParseChoice(%q): error %v does not wrap ErrBadChoice", v, err)
			}
			if auto || name != "" {
				t.Fatalf("ParseChoice(%q): error with a result (%v, %q)", v, auto, name)
			}
			return
		}
		if auto {
			if name != "" {
				t.Fatalf("ParseChoice(%q): auto with a name %q", v, name)
			}
			if s := strings.ToLower(strings.TrimSpace(v)); s != "" && s != "auto" {
				t.Fatalf("ParseChoice(%q): auto for a value that is not auto", v)
			}
			return
		}
		if !device.ValidType(name) || name == device.FlagOS || name == device.CPU {
			t.Fatalf("ParseChoice(%q): accepted target %q", v, name)
		}
		if !strings.EqualFold(strings.TrimSpace(v), string(name)) {
			t.Fatalf("ParseChoice(%q) = %q: not the trimmed, lowered input", v, name)
		}
		// The canonical spelling parses to itself.
		a2, n2, err := flagos.ParseChoice(string(name))
		if err != nil || a2 || n2 != name {
			t.Fatalf("ParseChoice(%q) = %q, but ParseChoice(%q) = %v, %q, %v", v, name, name, a2, n2, err)
		}
	})
}

// routed returns a flagos backend routed to a musa fake with n devices.
func routed(t *testing.T, n int) (*flagos.Backend, *fake) {
	t.Helper()
	m := newFake(device.MUSA, n, true, "ok")
	devs := registry(t, m, newFake(device.CUDA, 1, true, "ok"))
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	_, err := fl.Route()
	require.NoError(t, err)
	return fl, m
}

func TestIndexMapping(t *testing.T) {
	fl, m := routed(t, 2)
	for i := range 2 {
		require.NoError(t, fl.SetCurrent(i))
		assert.Equal(t, i, m.lastSet, "flagos:%d must set musa:%d", i, i)
		cur, err := fl.Current()
		require.NoError(t, err)
		assert.Equal(t, i, cur)
		require.NoError(t, fl.Synchronize(i))
		_, err = fl.Properties(i)
		require.NoError(t, err)
	}
	calls := map[string]func(int) error{
		"SetCurrent":  fl.SetCurrent,
		"Synchronize": fl.Synchronize,
		"Properties":  func(i int) error { _, err := fl.Properties(i); return err },
	}
	for name, call := range calls {
		for _, i := range []int{2, 3, -2, 1 << 31} {
			err := call(i)
			require.ErrorIs(t, err, device.ErrInvalidIndex, "%s(%d)", name, i)
			assert.Equal(t, fmt.Sprintf("device: invalid device index: flagos:%d: flagos has 2 devices (0..1, or -1 for the current device) through musa", i), err.Error())
		}
	}
	assert.Equal(t, 1, m.lastSet, "an out-of-range index must not reach the vendor")
	require.NoError(t, fl.SetCurrent(-1), "-1, the current device, is passed on")
	assert.Equal(t, -1, m.lastSet)

	one, _ := routed(t, 1)
	assert.EqualError(t, one.Synchronize(1), "device: invalid device index: flagos:1: flagos has 1 device (0..0, or -1 for the current device) through musa")
}

func TestProperties(t *testing.T) {
	fl, m := routed(t, 2)
	p, err := fl.Properties(1)
	require.NoError(t, err)
	want, _ := m.Properties(1)
	want.Name = "Fake musa (musa:1)"
	assert.Equal(t, want, p, "only Name changes; Vendor and the rest are the vendor's")

	m.name = ""
	p, err = fl.Properties(0)
	require.NoError(t, err)
	assert.Equal(t, "musa:0", p.Name)
}

func TestVendorErrorsAreWrapped(t *testing.T) {
	fl, m := routed(t, 2)
	m.fail = true
	_, err := fl.Current()
	require.ErrorIs(t, err, errVendor)
	assert.Equal(t, "flagos: current device through musa: "+errVendor.Error(), err.Error())

	err = fl.SetCurrent(1)
	require.ErrorIs(t, err, errVendor)
	assert.Equal(t, "flagos:1 (musa:1): set current: "+errVendor.Error(), err.Error())

	err = fl.Synchronize(0)
	require.ErrorIs(t, err, errVendor)
	assert.Equal(t, "flagos:0 (musa:0): synchronize: "+errVendor.Error(), err.Error())

	_, err = fl.Properties(1)
	require.ErrorIs(t, err, errVendor)
	assert.Equal(t, "flagos:1 (musa:1): properties: "+errVendor.Error(), err.Error())
}

func TestNoRouteFailsEveryCall(t *testing.T) {
	devs := registry(t, newFake(device.CUDA, 0, false, "no libcuda"))
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	_, err := fl.Route()
	require.ErrorIs(t, err, flagos.ErrNoRoute)
	_, e1 := fl.DeviceCount()
	_, e2 := fl.Current()
	e3 := fl.SetCurrent(0)
	e4 := fl.Synchronize(0)
	_, e5 := fl.Properties(0)
	for i, e := range []error{e1, e2, e3, e4, e5} {
		assert.ErrorIs(t, e, flagos.ErrNoRoute, "call %d", i)
		assert.Equal(t, err.Error(), e.Error(), "call %d", i)
	}
	assert.Equal(t, "auto", fl.Describe().Extra["backend_choice"])

	nilRegistry := flagos.New(nil, autoOrder, flagos.WithGetenv((&env{}).get))
	_, err = nilRegistry.Route()
	require.ErrorIs(t, err, flagos.ErrNoRoute)
}

func TestDescribe(t *testing.T) {
	m := describedFake{newFake(device.MUSA, 2, true, "ok"), device.Info{
		Library: "/usr/local/musa/lib/libmusa.so.1", DriverVersion: "3.1",
		Attempts: []device.Attempt{{Path: "libmusa.so.1"}}, Extra: map[string]string{"x": "y"},
	}}
	devs := registry(t, m)
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{v: "MUSA"}).get))
	assert.Equal(t, device.Info{
		Library:       "/usr/local/musa/lib/libmusa.so.1",
		DriverVersion: "3.1",
		RoutesTo:      device.MUSA,
		Extra:         map[string]string{"backend_choice": "musa"},
	}, fl.Describe())
	var _ device.Describer = fl
}

// TestLazyDecision: New reads nothing; a backend registered after New (a
// plugin's, later in the drivers phase) can be chosen; the decision is made
// once and then kept, whatever the environment says later.
func TestLazyDecision(t *testing.T) {
	devs := registry(t, newFake(device.CUDA, 1, true, "ok"))
	e := &env{v: "acme"}
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv(e.get))
	require.NoError(t, devs.Register(fl))
	assert.Zero(t, e.reads.Load(), "New must not read the environment")

	acme := newFake("acme", 4, true, "4 acme cards")
	require.NoError(t, devs.Register(acme))
	assert.Zero(t, acme.availCalls.Load())

	got, err := fl.Route()
	require.NoError(t, err)
	assert.Same(t, acme, got)

	e.v = "cuda"
	got, err = fl.Route()
	require.NoError(t, err)
	assert.Same(t, acme, got, "the route is decided once")
	assert.EqualValues(t, 1, e.reads.Load())
}

// TestConcurrentFirstUse: many goroutines use a fresh router at once; one
// decision runs (one environment read, one probe and one device count of
// the vendor) and every caller sees its outcome.
func TestConcurrentFirstUse(t *testing.T) {
	for round := range 20 {
		m := newFake(device.MUSA, 2, true, "ok")
		c := newFake(device.CUDA, 2, true, "ok")
		devs := registry(t, m, c)
		e := &env{}
		fl := flagos.New(devs, autoOrder, flagos.WithGetenv(e.get))

		const n = 64
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, n)
		for g := range n {
			wg.Go(func() {
				<-start
				var err error
				switch g % 4 {
				case 0:
					var b device.Backend
					b, err = fl.Route()
					if err == nil && b != device.Backend(m) {
						err = fmt.Errorf("routed to %s", b.Type())
					}
				case 1:
					_, err = fl.Current()
				case 2:
					err = fl.Synchronize(g % 2)
				case 3:
					var k int
					k, err = fl.DeviceCount()
					if err == nil && k != 2 {
						err = fmt.Errorf("DeviceCount = %d", k)
					}
				}
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
		assert.EqualValues(t, 1, e.reads.Load(), "round %d: environment reads", round)
		assert.EqualValues(t, 1, m.availCalls.Load(), "round %d: musa probes", round)
		assert.EqualValues(t, 1, m.countCalls.Load(), "round %d: musa device counts", round)
		assert.Zero(t, c.availCalls.Load(), "round %d: cuda need not be probed", round)
	}
}

// TestAliasRedirectCannotRecurse: with cuda aliased to flagos and the live
// cuda probe redirected to flagos's answer, flagos still routes to musa: it
// looks vendor backends up without the alias and reads their own probes, so
// it never finds itself behind "cuda".
func TestAliasRedirectCannotRecurse(t *testing.T) {
	setup := func(t *testing.T) (*device.Registry, *probe.Registry, *flagos.Backend, *fake, *fake) {
		m := newFake(device.MUSA, 2, true, "2 devices (libmusa.so.1, driver 3.1)")
		c := newFake(device.CUDA, 0, false, "libcuda.so.1: cannot open shared object file")
		devs := registry(t, c, m)
		fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
		require.NoError(t, devs.Register(fl))
		probes := probe.New()
		require.NoError(t, probes.Register("cuda", c.Available))
		require.NoError(t, probes.Register("musa", m.Available))
		require.NoError(t, probes.Register("flagos", fl.Available))
		return devs, probes, fl, m, c
	}
	check := func(t *testing.T, devs *device.Registry, probes *probe.Registry, fl *flagos.Backend, m *fake) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			b, err := devs.Lookup(device.CUDA)
			require.NoError(t, err)
			require.Same(t, fl, b, "cuda must be aliased to flagos")
			got, err := fl.Route()
			require.NoError(t, err)
			assert.Same(t, m, got, "flagos must route to musa, not to itself")
			live := probes.Live("cuda")
			assert.True(t, live.Available)
			assert.Equal(t, 2, live.Devices)
			assert.Contains(t, live.Reason, "routes to musa: 2 devices (libmusa.so.1, driver 3.1)")
			assert.False(t, probes.Original("cuda").Available)
			require.NoError(t, b.SetCurrent(1))
			assert.Equal(t, 1, m.lastSet)
			p, err := b.Properties(1)
			require.NoError(t, err)
			assert.Equal(t, "Fake musa (musa:1)", p.Name)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("flagos recursed into itself (deadlock)")
		}
	}

	t.Run("alias and redirect by hand, before first use", func(t *testing.T) {
		devs, probes, fl, m, _ := setup(t)
		_, err := devs.Alias(device.CUDA, device.FlagOS)
		require.NoError(t, err)
		_, err = probes.Redirect("cuda", "alias", func() probe.Result { return probes.Live("flagos") })
		require.NoError(t, err)
		check(t, devs, probes, fl, m)
	})
	t.Run("alias.Install", func(t *testing.T) {
		devs, probes, fl, m, _ := setup(t)
		d, undo, err := alias.Install(devs, probes, "1")
		require.NoError(t, err)
		t.Cleanup(undo)
		require.True(t, d.Active, d.Reason)
		check(t, devs, probes, fl, m)
	})
}

func TestLogsDecision(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	devs := registry(t, newFake(device.MUSA, 2, true, "ok"))
	fl := flagos.New(devs, autoOrder, flagos.WithLogger(zap.New(core)), flagos.WithGetenv((&env{}).get))
	assert.Zero(t, logs.Len(), "New logs nothing")
	_, _ = fl.Route()
	_, _ = fl.Route()
	entries := logs.All()
	require.Len(t, entries, 1)
	assert.Equal(t, zapcore.DebugLevel, entries[0].Level)
	f := entries[0].ContextMap()
	assert.Equal(t, "auto", f["choice"])
	assert.Equal(t, "musa", f["routed"])
	assert.Contains(t, f["reason"], "musa is available")

	core, logs = observer.New(zapcore.DebugLevel)
	fl = flagos.New(devs, autoOrder, flagos.WithLogger(zap.New(core)), flagos.WithGetenv((&env{v: "rocm"}).get))
	_, _ = fl.Route()
	require.Equal(t, 1, logs.Len())
	f = logs.All()[0].ContextMap()
	assert.Equal(t, "rocm", f["choice"])
	assert.Equal(t, "", f["routed"])
	assert.Contains(t, f["error"], "names no registered backend")
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	fl, _ := routed(t, 2)
	_ = fl.Available()
	for name, f := range map[string]func(){
		"Current":     func() { _, _ = fl.Current() },
		"Synchronize": func() { _ = fl.Synchronize(1) },
		"SetCurrent":  func() { _ = fl.SetCurrent(1) },
		"DeviceCount": func() { _, _ = fl.DeviceCount() },
		"Available":   func() { _ = fl.Available() },
	} {
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}

// nopVendor is a vendor backend that does nothing, to measure the router.
type nopVendor struct{}

func (nopVendor) Type() device.Type { return device.MUSA }
func (nopVendor) Available() probe.Result {
	return probe.Result{Available: true, Devices: 2, Reason: "ok"}
}
func (nopVendor) DeviceCount() (int, error)                 { return 2, nil }
func (nopVendor) Current() (int, error)                     { return 0, nil }
func (nopVendor) SetCurrent(int) error                      { return nil }
func (nopVendor) Synchronize(int) error                     { return nil }
func (nopVendor) Properties(int) (device.Properties, error) { return device.Properties{}, nil }

func benchTargets(b *testing.B) map[string]device.Backend {
	devs := registry(b, nopVendor{})
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv(func(string) string { return "" }))
	if _, err := fl.Route(); err != nil {
		b.Fatal(err)
	}
	return map[string]device.Backend{"direct": nopVendor{}, "flagos": fl}
}

func BenchmarkCurrent(b *testing.B) {
	for _, name := range []string{"direct", "flagos"} {
		be := benchTargets(b)[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := be.Current(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSynchronize(b *testing.B) {
	for _, name := range []string{"direct", "flagos"} {
		be := benchTargets(b)[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := be.Synchronize(1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAvailable(b *testing.B) {
	be := benchTargets(b)["flagos"]
	b.ReportAllocs()
	for b.Loop() {
		_ = be.Available()
	}
}

// TestCheckChoice: CheckChoice refuses what Route would refuse as a bad
// setting, accepts the rest, and asks no vendor anything: Init validates
// FLAGOS_BACKEND with it, so the route (and every vendor's driver) is not
// probed before the alias needs it.
func TestCheckChoice(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        error // nil: accepted
	}{
		{"unset means auto", "", nil},
		{"auto", "auto", nil},
		{"a registered vendor", "musa", nil},
		{"a malformed name", "mu sa", flagos.ErrBadChoice},
		{"flagos itself", "flagos", flagos.ErrBadChoice},
		{"not registered", "hip", flagos.ErrUnknownBackend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cuda, musa := newFake(device.CUDA, 1, true, "ok"), newFake(device.MUSA, 2, true, "ok")
			devs := registry(t, cuda, musa)
			fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{v: tc.value}).get))
			require.NoError(t, devs.Register(fl))

			err := fl.CheckChoice()
			if tc.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.want)
				assert.ErrorIs(t, err, flagos.ErrNoRoute, "the same error Route gives")
				assert.Contains(t, err.Error(), flagos.EnvVar)
			}
			assert.Zero(t, cuda.availCalls.Load()+musa.availCalls.Load(), "CheckChoice probes no vendor")
			assert.Zero(t, cuda.countCalls.Load()+musa.countCalls.Load())
		})
	}
}

// autoOrder is the order flagshim passes for its built-in vendors
// (vendors.AutoOrder): musa, hip, cuda.
var autoOrder = flagos.WithAutoOrder([]device.Type{device.MUSA, device.HIP, device.CUDA})

// Without WithAutoOrder, auto tries the vendor backends in registration
// order; with it, in the order given.
func TestAutoOrderOption(t *testing.T) {
	devs := device.NewRegistry()
	require.NoError(t, devs.Register(devicetest.New(devicetest.Config{Type: device.CUDA, Devices: make([]devicetest.Device, 1)})))
	require.NoError(t, devs.Register(devicetest.New(devicetest.Config{Type: device.MUSA, Devices: make([]devicetest.Device, 2)})))
	plain := flagos.New(devs, flagos.WithGetenv((&env{}).get))
	b, err := plain.Route()
	require.NoError(t, err)
	assert.Equal(t, device.CUDA, b.Type(), "registration order")
	ordered := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	b, err = ordered.Route()
	require.NoError(t, err)
	assert.Equal(t, device.MUSA, b.Type(), "the order given")
}
