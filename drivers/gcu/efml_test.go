package gcu

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/presence"
	"github.com/flagos-ai/flagshim/presence/presencetest"
)

// fakeEFML is testdata/fake_efml.c, a libefml.so driven by FAKE_EFML_*.
var fakeEFML = presencetest.Lib{
	Src:      "testdata/fake_efml.c",
	Soname:   "libefml.so",
	Override: EFMLEnvVar,
	LogEnv:   "FAKE_EFML_LOG",
}

const efmlInit, efmlShutdown = "EfmlInit", "EfmlShutdown"

// TestEFMLLayouts: the Go structs have efml.h's sizes and offsets (the fake
// checks the C side with _Static_assert).
func TestEFMLLayouts(t *testing.T) {
	assert.Equal(t, uintptr(16), unsafe.Sizeof(efmlDevMemInfo{}))
	assert.Equal(t, uintptr(8), unsafe.Offsetof(efmlDevMemInfo{}.memUsed))
	assert.Equal(t, uintptr(156), unsafe.Sizeof(efmlDeviceInfo{}))
	assert.Equal(t, uintptr(136), unsafe.Offsetof(efmlDeviceInfo{}.domainID))
	assert.Equal(t, uintptr(148), unsafe.Offsetof(efmlDeviceInfo{}.funcID))
}

// TestEFMLFakes runs each case against the fake EFML in a child process (a
// loaded soname stays loaded for the life of a process).
func TestEFMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeEFML, Source: EFML, Cases: efmlCases}).Test(t)
}

var efmlCases = []presencetest.Case{
	{Name: "one device", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, SourceEFML, r.Source)
		assert.Equal(t, os.Getenv(EFMLEnvVar), r.Library)
		assert.Equal(t, "1.4.0.9", r.DriverVersion)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, presence.Device{Name: "S60", UUID: "00000000-1e36-c035-0000-000000000000", PCIBusID: "0000:5a:00.0",
			TotalMemory: 48 << 30, FreeMemory: 47 << 30}, r.Devices[0])
		assert.Equal(t, "EFML sees 1 device", r.Reason)
		assert.Empty(t, r.Notes)
		presencetest.Paired(t, calls, efmlInit, efmlShutdown)
	}},
	{Name: "driver not loaded", Env: []string{"FAKE_EFML_INIT_RESULT=6"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		var e *clib.Error
		require.True(t, errors.As(r.Err, &e))
		assert.Equal(t, &clib.Error{Library: "EFML", Func: "EfmlInit", Code: 6, Name: "EFML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded"}, e)
		assert.Equal(t, "EFML: EfmlInit returned EFML_ERROR_DRIVER_NOT_LOADED (6): Driver Not Loaded", e.Error())
		assert.Contains(t, r.Reason, "the Enflame GCU driver is not loaded")
		assert.Equal(t, []string{efmlInit, "EfmlErrorString"}, calls, "nothing after a failed init")
	}},
	{Name: "no device", Env: []string{"FAKE_EFML_INIT_RESULT=12"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "EFML_ERROR_NO_DEVICE")
		assert.Contains(t, r.Reason, "/dev/gcuctl")
	}},
	{Name: "visible", Env: []string{"FAKE_EFML_COUNT=4", "TOPS_VISIBLE_DEVICES=2,3"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 4, r.Total)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{2, 3}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, "0000:5c:00.0", r.Devices[0].PCIBusID)
			assert.Equal(t, "TOPS_VISIBLE_DEVICES=2,3", r.Visibility)
		}},
	{Name: "visible DRS partition: undecidable", Env: []string{"FAKE_EFML_COUNT=2", "TOPS_VISIBLE_DEVICES=DRS-0a1b2c"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
			assert.Empty(t, r.Devices)
			assert.Contains(t, r.Reason, "EFML sees 2 devices, but TOPS_VISIBLE_DEVICES=DRS-0a1b2c cannot be resolved")
			assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
			presencetest.Paired(t, calls, efmlInit, efmlShutdown)
		}},
	{Name: "ENFLAME_VISIBLE_DEVICES ignored", Env: []string{"FAKE_EFML_COUNT=2", "ENFLAME_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2, "the container toolkit's variable, not the runtime's")
		assert.Equal(t, "", r.Visibility)
	}},
	{Name: "count fails", Env: []string{"FAKE_EFML_COUNT_RESULT=254"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrQuery)
		assert.Equal(t, "EFML: EfmlGetDevCount returned EFML_ERROR_FAIL (254): Fail", r.Reason)
		presencetest.Paired(t, calls, efmlInit, efmlShutdown)
	}},
	{Name: "memory fails: noted", Env: []string{"FAKE_EFML_MEM_RESULT=3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Zero(t, r.Devices[0].TotalMemory)
		assert.Contains(t, presencetest.Notes(r), "device 0: EFML: EfmlGetDevMem returned EFML_ERROR_NOT_SUPPORTED (3): Not Supported")
	}},
	// A driver answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	{Name: "count 2^32-1", Env: []string{"FAKE_EFML_COUNT_RAW=4294967295"}, Run: efmlSmall, Check: efmlTooMany(1<<32 - 1)},
	{Name: "count 3000000", Env: []string{"FAKE_EFML_COUNT_RAW=3000000"}, Run: efmlSmall, Check: efmlTooMany(3000000)},
	{Name: "optional functions missing", Defines: []string{"-DFAKE_NO_NAME", "-DFAKE_NO_UUID", "-DFAKE_NO_MEMORY", "-DFAKE_NO_INFO", "-DFAKE_NO_VERSION", "-DFAKE_NO_ERRSTR"},
		Env: []string{"FAKE_EFML_COUNT=2"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, presence.Device{Index: 1, SourceIndex: 1}, r.Devices[1], "what EFML cannot say stays empty")
			assert.Equal(t, "", r.DriverVersion)
			assert.Empty(t, r.Notes)
			presencetest.Paired(t, calls, efmlInit, efmlShutdown)
		}},
	{Name: "name from the device info", Defines: []string{"-DFAKE_NO_NAME"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "Enflame S60 (info)", r.Devices[0].Name)
	}},
	{Name: "optional functions missing, errors", Defines: []string{"-DFAKE_NO_ERRSTR"}, Env: []string{"FAKE_EFML_COUNT_RESULT=3"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, "EFML: EfmlGetDevCount returned EFML_ERROR_NOT_SUPPORTED (3)", r.Reason, "no EfmlErrorString: no message")
		}},
	{Name: "required function missing", Defines: []string{"-DFAKE_NO_COUNT"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "lacks the required symbol EfmlGetDevCount")
		assert.Contains(t, r.Reason, EFMLEnvVar)
		assert.Empty(t, calls)
	}},
	// No source of the GCU's presence tier loads a driver: EFML and the
	// nodes, with a tripwire libcuda first on LD_LIBRARY_PATH.
	{Name: "no driver is loaded", Setup: presencetest.Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := EFML(e)
			require.NoError(t, r.Err)
			presenceSources(e)
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, 1)
			presencetest.NoDriverLoaded(t)
		}},
}

// efmlSmall is EFML on the process's environment, checking that the call
// allocated next to nothing whatever count the library claimed.
func efmlSmall(t *testing.T) presence.Report {
	var r presence.Report
	n := presencetest.Allocated(func() { r = EFML(presence.NewEnv()) })
	assert.Less(t, n, uint64(16<<20), "EFML allocated %d bytes", n)
	return r
}

// efmlTooMany checks the answer to a count of n devices, above the bound.
func efmlTooMany(n uint64) func(*testing.T, presence.Report, []string) {
	return func(t *testing.T, r presence.Report, calls []string) {
		presencetest.TooMany(t, r, n)
		assert.Contains(t, r.Reason, "EFML: EfmlGetDevCount reported ")
		for _, c := range calls {
			assert.False(t, strings.HasPrefix(c, "EfmlGetDev") && c != "EfmlGetDevCount", "no device is asked for: %s", c)
		}
		presencetest.Paired(t, calls, efmlInit, efmlShutdown)
	}
}

func TestEFMLNotFound(t *testing.T) {
	r := EFML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libefml-presence-absent.so"}
		l.Dirs = nil
	})))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Equal(t, SourceEFML, r.Source)
	assert.True(t, strings.HasPrefix(r.Reason, "libefml.so not found (tried libefml-presence-absent.so)"), r.Reason)
	assert.Contains(t, r.Reason, "FLAGOS_LIBEFML_PATH=/abs/path/to/libefml.so")
}

func TestEFMLRelativeOverride(t *testing.T) {
	r := EFML(presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(EFMLEnvVar, "libefml.so"))))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.Contains(t, r.Reason, `FLAGOS_LIBEFML_PATH="libefml.so" cannot be used: the path must be absolute`)
}
