package presence_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// The kit's flow is tested without a fake C library: the library opened is
// libc (every test process has it loaded already, so opening it changes
// nothing), its table resolves getpid and strerror, and every part of the
// Management is a Go closure over a made-up library, kitLib, that records
// its calls.

// kitLibrary finds libc under a made-up override.
var kitLibrary = clib.Library{Name: "libc", EnvVar: "FLAGOS_LIBKIT_PATH", Sonames: []string{"libc.so.6"}}

// kitLib is the made-up library's behaviour and its call log.
type kitLib struct {
	initErr, shutdownErr, versionErr, countErr error
	count                                      uint64
	handleFail, nameFail, skip                 int // a device index; -1 none
	panicIn                                    string
	noReason, deviceName, runtime              bool
	visible                                    func(all []presence.Device) ([]presence.Device, string, error)

	mu    sync.Mutex
	calls []string
	tids  map[int]bool // the OS threads the calls ran on
}

func newKitLib() *kitLib {
	return &kitLib{count: 3, handleFail: -1, nameFail: -1, skip: -1, tids: map[int]bool{}}
}

func (k *kitLib) call(name string) {
	k.mu.Lock()
	k.calls = append(k.calls, name)
	k.tids[unix.Gettid()] = true
	k.mu.Unlock()
	if k.panicIn == name {
		panic("kit: " + name + " panicked")
	}
}

var kitCodes = &clib.Codes{Library: "KIT", Names: map[int]string{9: "KIT_ERROR_NO_DRIVER", 999: "KIT_ERROR_UNKNOWN"}}

// management is k as a Management; missing adds a required symbol libc
// lacks.
func (k *kitLib) management(missing bool) presence.Management {
	var getpid, strerror, absent clib.Func
	syms := []clib.Sym{
		{Fn: &getpid, Names: []string{"getpid"}, Required: true},
		{Fn: &strerror, Names: []string{"strerror"}, Sig: "i"},
	}
	if missing {
		syms = append(syms, clib.Sym{Fn: &absent, Names: []string{"flagshim_kit_absent"}, Required: true})
	}
	m := presence.Management{
		Source: "kit", Library: kitLibrary, Symbols: syms, Codes: kitCodes, Ships: "the kit driver",
		Init: func() error { k.call("init"); return k.initErr },
		InitReason: func(e *clib.Error) string {
			return "KIT: the kit driver is not loaded (" + e.Name + ")"
		},
		Shutdown: func() error { k.call("shutdown"); return k.shutdownErr },
		Version: func(r *presence.Report, note func(error) bool) {
			k.call("version")
			if note(k.versionErr) {
				r.DriverVersion = "1.2.3"
			}
		},
		Count: func() (uint64, string, error) { k.call("count"); return k.count, "kitCount", k.countErr },
		Device: func(i int, d *presence.Device, note func(error) bool) error {
			k.call(fmt.Sprintf("device(%d)", i))
			if i == k.handleFail {
				return kitCodes.Err(fmt.Sprintf("kitHandle(%d)", i), 999)
			}
			var err error
			if i == k.nameFail {
				err = kitCodes.Err("kitName", 999)
			}
			if note(err) {
				d.Name = fmt.Sprintf("kit %d", i)
			}
			d.UUID = fmt.Sprintf("GPU-%d", i)
			if i == k.skip {
				return presence.Skip{Why: "a control device"}
			}
			return nil
		},
		Visible: k.visible,
	}
	if k.noReason {
		m.InitReason = nil
	}
	if k.deviceName {
		m.DeviceName = func(i int) string { return fmt.Sprintf("board %d", i) }
	}
	if k.runtime {
		m.Runtime = "the kit runtime"
	}
	return m
}

// kitEnv is an environment where only the given variables are set.
func kitEnv(kv ...string) *presence.Env {
	return presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(kv...)))
}

func TestQuery(t *testing.T) {
	errNoDriver := kitCodes.Err("kitInit", 9)
	undecidable := func(all []presence.Device) ([]presence.Device, string, error) {
		return nil, "KIT_VISIBLE_DEVICES=MIG-1", fmt.Errorf("%w: MIG instances", presence.ErrUndecidable)
	}
	for _, tc := range []struct {
		name  string
		setup func(*kitLib)
		check func(t *testing.T, r presence.Report, k *kitLib)
	}{
		{"answers", nil, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Equal(t, "kit", r.Source)
			assert.Contains(t, r.Library, "libc.so.6")
			assert.Equal(t, "1.2.3", r.DriverVersion)
			assert.Equal(t, 3, r.Total)
			assert.Equal(t, []presence.Device{{Index: 0, SourceIndex: 0, Name: "kit 0", UUID: "GPU-0"}, {Index: 1, SourceIndex: 1, Name: "kit 1", UUID: "GPU-1"},
				{Index: 2, SourceIndex: 2, Name: "kit 2", UUID: "GPU-2"}}, r.Devices, "every device visible without a Visible")
			assert.Equal(t, "KIT sees 3 devices", r.Reason)
			assert.Empty(t, r.Notes)
			assert.Equal(t, []string{"init", "version", "count", "device(0)", "device(1)", "device(2)", "shutdown"}, k.calls)
			assert.Len(t, k.tids, 1, "every call on one locked OS thread")
		}},
		{"init fails", func(k *kitLib) { k.initErr = errNoDriver }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrInit)
			assert.ErrorIs(t, r.Err, &clib.Error{Library: "KIT", Code: 9})
			assert.Equal(t, "KIT: the kit driver is not loaded (KIT_ERROR_NO_DRIVER)", r.Reason, "InitReason's sentence")
			assert.Empty(t, r.Devices)
			assert.Equal(t, []string{"init"}, k.calls, "nothing after a failed init, no shutdown")
		}},
		{"init fails, no sentence", func(k *kitLib) { k.initErr = errNoDriver; k.noReason = true }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrInit)
			assert.Equal(t, "KIT: kitInit returned KIT_ERROR_NO_DRIVER (9)", r.Reason)
		}},
		{"init fails, not a code", func(k *kitLib) { k.initErr = errors.New("no handle") }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrInit)
			assert.Equal(t, "no handle", r.Reason, "InitReason is for a *clib.Error")
		}},
		{"shutdown fails: a note", func(k *kitLib) { k.shutdownErr = kitCodes.Err("kitShutdown", 999) }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, 3)
			assert.Equal(t, []string{"KIT: kitShutdown returned KIT_ERROR_UNKNOWN (999)"}, r.Notes)
		}},
		{"version fails: a note", func(k *kitLib) { k.versionErr = errors.New("no version") }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Empty(t, r.DriverVersion)
			assert.Equal(t, []string{"no version"}, r.Notes)
		}},
		{"count fails", func(k *kitLib) { k.countErr = kitCodes.Err("kitCount", 999) }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, "KIT: kitCount returned KIT_ERROR_UNKNOWN (999)", r.Reason)
			assert.Equal(t, []string{"init", "version", "count", "shutdown"}, k.calls)
		}},
		{"count at the bound", func(k *kitLib) { k.count = device.MaxDevices }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, device.MaxDevices)
		}},
		{"count above the bound", func(k *kitLib) { k.count = device.MaxDevices + 1 }, func(t *testing.T, r presence.Report, k *kitLib) {
			presencetest.TooMany(t, r, device.MaxDevices+1)
			assert.Contains(t, r.Reason, "KIT: kitCount reported 4097 devices")
			assert.Equal(t, []string{"init", "version", "count", "shutdown"}, k.calls, "no device is asked for")
		}},
		{"count 2^64-1", func(k *kitLib) { k.count = 1<<64 - 1 }, func(t *testing.T, r presence.Report, k *kitLib) {
			presencetest.TooMany(t, r, 1<<64-1)
		}},
		{"handle fails", func(k *kitLib) { k.handleFail = 1 }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, "KIT: kitHandle(1) returned KIT_ERROR_UNKNOWN (999)", r.Reason)
			assert.Empty(t, r.Devices)
			assert.Zero(t, r.Total)
			assert.Equal(t, []string{"init", "version", "count", "device(0)", "device(1)", "shutdown"}, k.calls)
		}},
		{"other failures: notes", func(k *kitLib) { k.nameFail = 1 }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 3)
			assert.Equal(t, presence.Device{Index: 1, SourceIndex: 1, UUID: "GPU-1"}, r.Devices[1], "the rest of the device is read")
			assert.Equal(t, []string{"device 1: KIT: kitName returned KIT_ERROR_UNKNOWN (999)"}, r.Notes)
		}},
		{"notes name devices their way", func(k *kitLib) { k.nameFail = 2; k.deviceName = true }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.Equal(t, []string{"board 2: KIT: kitName returned KIT_ERROR_UNKNOWN (999)"}, r.Notes)
		}},
		{"skip", func(k *kitLib) { k.skip = 0 }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Equal(t, 2, r.Total, "a skipped device is not counted")
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, [2]int{1, 2}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, []string{"device 0 is a control device: not counted"}, r.Notes)
		}},
		{"visible applied", func(k *kitLib) { k.visible = kitEnv("KIT_VISIBLE_DEVICES", "2,0").VisibleBy("KIT_VISIBLE_DEVICES") }, func(t *testing.T, r presence.Report, k *kitLib) {
			require.NoError(t, r.Err)
			assert.Equal(t, 3, r.Total)
			assert.Equal(t, "KIT_VISIBLE_DEVICES=2,0", r.Visibility)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 0}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, "KIT sees 3 devices, 2 visible through KIT_VISIBLE_DEVICES=2,0", r.Reason)
		}},
		{"visible undecidable", func(k *kitLib) { k.visible = undecidable; k.runtime = true }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
			assert.Equal(t, 3, r.Total)
			assert.Empty(t, r.Devices)
			assert.Equal(t, "KIT_VISIBLE_DEVICES=MIG-1", r.Visibility)
			assert.Equal(t, "KIT sees 3 devices, but KIT_VISIBLE_DEVICES=MIG-1 cannot be resolved without the kit runtime: "+
				"visible: visibility cannot be decided without the runtime: MIG instances; use FLAGOS_PROBE=isolated", r.Reason)
			assert.Equal(t, "shutdown", k.calls[len(k.calls)-1])
		}},
		{"visible undecidable, the error says it", func(k *kitLib) { k.visible = undecidable }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
			assert.Equal(t, "KIT sees 3 devices, but visible: visibility cannot be decided without the runtime: MIG instances; use FLAGOS_PROBE=isolated", r.Reason)
		}},
		{"panic in a device", func(k *kitLib) { k.panicIn = "device(1)" }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrPanic)
			assert.Contains(t, r.Reason, "kit: internal error: kit: device(1) panicked")
			assert.Empty(t, r.Devices)
			assert.Equal(t, "shutdown", k.calls[len(k.calls)-1], "the shutdown still runs")
		}},
		{"panic in init", func(k *kitLib) { k.panicIn = "init" }, func(t *testing.T, r presence.Report, k *kitLib) {
			assert.ErrorIs(t, r.Err, presence.ErrPanic)
			assert.Equal(t, []string{"init"}, k.calls)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKitLib()
			if tc.setup != nil {
				tc.setup(k)
			}
			r := presence.Query(kitEnv(), k.management(false))
			if r.Err != nil && strings.Contains(r.Reason, "libc.so.6 not found") {
				t.Skipf("libc.so.6 cannot be opened here (not a glibc system?): %s", r.Reason)
			}
			tc.check(t, r, k)
		})
	}
}

// WithoutShutdown leaves the session open for the process's exit; the
// library's next query, in any Env, ends it (through the Management that
// opened it) before its own init, so that one session at most is open.
func TestQueryWithoutShutdown(t *testing.T) {
	keep := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithoutShutdown())
	query := func(e *presence.Env, k *kitLib) presence.Report {
		m := k.management(false)
		m.Source = "kit-keep" // its own session, apart from the other tests' "kit"
		r := presence.Query(e, m)
		if r.Err != nil && strings.Contains(r.Reason, "libc.so.6 not found") {
			t.Skipf("libc.so.6 cannot be opened here (not a glibc system?): %s", r.Reason)
		}
		require.NoError(t, r.Err)
		return r
	}
	read := []string{"init", "version", "count", "device(0)", "device(1)", "device(2)"}

	first := newKitLib()
	r := query(keep, first)
	assert.Len(t, r.Devices, 3)
	assert.Equal(t, read, first.calls, "no shutdown: the session is left open")

	second := newKitLib()
	second.shutdownErr = kitCodes.Err("kitShutdown", 999)
	r = query(keep, second)
	assert.Equal(t, append(slices.Clone(read), "shutdown"), first.calls, "the next query ends the session left open")
	assert.Equal(t, read, second.calls, "and leaves its own open")
	assert.Empty(t, r.Notes)

	third := newKitLib()
	r = query(kitEnv(), third)
	assert.Equal(t, append(slices.Clone(read), "shutdown"), second.calls)
	assert.Equal(t, []string{"the session left open by an earlier query: KIT: kitShutdown returned KIT_ERROR_UNKNOWN (999)"}, r.Notes,
		"a failed shutdown of the session left open is a note of the query that ended it")
	assert.Equal(t, append(slices.Clone(read), "shutdown"), third.calls, "a query without the option shuts its own session")

	fourth := newKitLib()
	query(kitEnv(), fourth)
	assert.Equal(t, []string{"init", "version", "count", "device(0)", "device(1)", "device(2)", "shutdown"}, fourth.calls)
	assert.Equal(t, append(slices.Clone(read), "shutdown"), third.calls, "nothing was left open to end twice")
}

// A required symbol the library lacks: nothing is called.
func TestQueryMissingSymbol(t *testing.T) {
	k := newKitLib()
	r := presence.Query(kitEnv(), k.management(true))
	assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
	assert.Contains(t, r.Reason, "lacks the required symbol flagshim_kit_absent")
	assert.True(t, strings.HasSuffix(r.Reason, "; update the kit driver or point FLAGOS_LIBKIT_PATH at its libc.so.6"), r.Reason)
	assert.Empty(t, k.calls)
}

// A library not found: nothing is called.
func TestQueryNotFound(t *testing.T) {
	k := newKitLib()
	m := k.management(false)
	m.Library = clib.Library{Name: "libkit", EnvVar: "FLAGOS_LIBKIT_PATH", Sonames: []string{"libkit-presence-absent.so.1"}, Dirs: []string{dltest.PrivateDir(t)}}
	r := presence.Query(kitEnv(), m)
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, "kit", r.Source)
	assert.Contains(t, r.Reason, "FLAGOS_LIBKIT_PATH=/abs/path/to/libkit-presence-absent.so.1")
	assert.Empty(t, k.calls)
}

// A count above the bound allocates nothing for its devices.
func TestQueryTooManyAllocatesLittle(t *testing.T) {
	k := newKitLib()
	k.count = 1<<32 - 1
	m := k.management(false)
	e := kitEnv()
	var r presence.Report
	n := presencetest.Allocated(func() { r = presence.Query(e, m) })
	presencetest.TooMany(t, r, 1<<32-1)
	assert.Less(t, n, uint64(1<<20), "Query allocated %d bytes", n)
}

func TestErrorString(t *testing.T) {
	var strerror, absent clib.Func
	h, err := kitLibrary.Open(func(string) string { return "" })
	if err != nil {
		t.Skipf("libc.so.6 cannot be opened here (not a glibc system?): %v", err)
	}
	require.NoError(t, h.Resolve("libc", []clib.Sym{
		{Fn: &strerror, Names: []string{"strerror"}, Sig: "i"},
		{Fn: &absent, Names: []string{"flagshim_kit_absent"}},
	}))
	assert.Equal(t, "No such file or directory", presence.ErrorString(&strerror)(int(unix.ENOENT)))
	assert.Equal(t, "", presence.ErrorString(&absent)(2), "an unresolved function has no words")
}
