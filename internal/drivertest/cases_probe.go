package drivertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

func init() {
	cases = append(cases,
		fakeCase{name: "no_library", setup: func(*testing.T, *Suite) []string { return []string{absentEnv + "=1"} }, check: noLibrary},
		fakeCase{name: "ld_library_path", setup: ldLibraryPath, check: foundThroughLoader},
		fakeCase{name: "absolute_override", setup: absoluteOverride, check: overrideWins},
		fakeCase{name: "relative_override", setup: relativeOverride, check: relativeRefused},
		fakeCase{name: "world_writable", setup: worldWritable, check: func(t *testing.T, s *Suite, b *driver.Backend) {
			notAvailable(t, b, driver.ErrUnsafeLibrary)
		}},
		fakeCase{name: "world_writable_searched", setup: worldWritableSearched, check: unsafeSkipped},
		fakeCase{name: "stub", setup: withOverride(nil, "FAKE_STUB=1"), check: stub},
		initCase(100, "ERROR_NO_DEVICE", driver.ErrNoDevice),
		initCase(803, "ERROR_SYSTEM_DRIVER_MISMATCH", driver.ErrDriverMismatch),
		initCase(804, "ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", driver.ErrDriverMismatch),
		initCase(999, "ERROR_UNKNOWN", nil),
		fakeCase{name: "zero_devices", setup: func(t *testing.T, s *Suite) []string {
			return withOverride(nil, "FAKE_DEVICE_COUNT=0", s.visibleEnv()+"=7")(t, s)
		}, check: zeroDevices},
		fakeCase{name: "absurd_device_count", setup: withOverride(nil, "FAKE_RAW_COUNT=2147483647"), check: absurdCount},
		fakeCase{name: "init_hangs", setup: withOverride(nil, "FAKE_INIT_SLEEP_MS=5000"), check: initHangs},
		fakeCase{name: "missing_optional_symbol", setup: withOverride([]string{"-DFAKE_NO_PCI_BUS_ID"}), check: missingOptional},
		fakeCase{name: "versioned_fallback", setup: withOverride([]string{"-DFAKE_NO_TOTALMEM_V2"}, "FAKE_TOTAL_MEM=3221225472"), check: versionedFallback},
		fakeCase{name: "missing_required_symbol", setup: withOverride([]string{"-DFAKE_NO_CTX_SYNCHRONIZE"}), check: missingRequired},
		fakeCase{name: "lazy_and_concurrent_first_use", setup: func(t *testing.T, s *Suite) []string {
			return withOverride(nil, "FAKE_LOG="+filepath.Join(dltest.PrivateDir(t), "log"))(t, s)
		}, check: lazyConcurrent},
		fakeCase{name: "backend", setup: withOverride(nil, "FAKE_DEVICE_NAMES=Fake H200 A,Fake H200 B", "FAKE_CC=9.0",
			"FAKE_SM_COUNT=132", "FAKE_TOTAL_MEM=150754820096"), check: backend},
		fakeCase{name: "threads", setup: withOverride(nil, "FAKE_DEVICE_COUNT=4"), check: threads},
		fakeCase{name: "hot_paths_allocate_nothing", setup: withOverride(nil), check: hotPaths},
		fakeCase{name: "call_error", setup: withOverride(nil, "FAKE_SYNC_RESULT=700"), check: callError},
		fakeCase{name: "with_context", setup: withOverride(nil), check: withContext},
	)
}

func noLibrary(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrLibraryNotFound)
	assert.Contains(t, reason, s.lib()+" not found")
	assert.Contains(t, reason, s.library().Sonames[0])
	assert.Contains(t, reason, s.envVar()+"=/abs/path")
	_, err := b.DeviceCount()
	assert.ErrorIs(t, err, driver.ErrLibraryNotFound)
	_, _, err = b.DriverVersion()
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	info := b.Describe()
	assert.Empty(t, info.Library)
	assert.Empty(t, info.DriverVersion)
	require.NotEmpty(t, info.Attempts)
	assert.Contains(t, info.Attempts[0].Path, s.library().Sonames[0])
	assert.NotEmpty(t, info.Attempts[0].Error)
}

func ldLibraryPath(t *testing.T, s *Suite) []string {
	p := s.Build(t)
	return []string{"LD_LIBRARY_PATH=" + filepath.Dir(p), libEnv + "=" + p}
}

func foundThroughLoader(t *testing.T, s *Suite, b *driver.Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	assert.Equal(t, 2, r.Devices)
	info := b.Describe()
	assert.Equal(t, os.Getenv(libEnv), info.Library, "the file the loader would pick, opened by its absolute path")
	require.NotEmpty(t, info.Attempts)
	last := info.Attempts[len(info.Attempts)-1]
	assert.Empty(t, last.Error)
	assert.Equal(t, fmt.Sprintf("%d.%d", s.Version[0], s.Version[1]), info.DriverVersion)
	assert.Contains(t, r.Reason, info.Library)
}

func absoluteOverride(t *testing.T, s *Suite) []string {
	// A library through LD_LIBRARY_PATH that lacks the PCI symbol proves
	// the override, which has it, is the one used.
	other := s.Build(t, "-DFAKE_NO_PCI_BUS_ID")
	return append(withOverride(nil)(t, s), "LD_LIBRARY_PATH="+filepath.Dir(other))
}

func overrideWins(t *testing.T, s *Suite, b *driver.Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	info := b.Describe()
	assert.Equal(t, os.Getenv(s.envVar()), info.Library)
	assert.Equal(t, []device.Attempt{{Path: os.Getenv(s.envVar())}}, info.Attempts)
	id, err := b.PCIBusID(0)
	require.NoError(t, err)
	assert.Equal(t, "00000000:18:00.0", id)
}

func relativeOverride(t *testing.T, s *Suite) []string {
	p := s.Build(t)
	return []string{s.envVar() + "=lib/" + filepath.Base(p), "LD_LIBRARY_PATH=" + filepath.Dir(p)}
}

func relativeRefused(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrRelativePath)
	assert.Contains(t, reason, s.envVar())
	assert.Contains(t, reason, "absolute")
	info := b.Describe()
	assert.Empty(t, info.Library)
	require.Len(t, info.Attempts, 1, "nothing else is tried")
}

func worldWritable(t *testing.T, s *Suite) []string {
	p := s.Build(t)
	require.NoError(t, os.Chmod(p, 0o777))
	return []string{s.envVar() + "=" + p}
}

func worldWritableSearched(t *testing.T, s *Suite) []string {
	// Under the absent soname, so that a real driver installed on the
	// machine is not found first through the dynamic loader's folders.
	built := s.Build(t)
	p := filepath.Join(filepath.Dir(built), "lib"+string(s.typ())+"-absent-drivertest.so.1")
	require.NoError(t, os.Rename(built, p))
	require.NoError(t, os.Chmod(filepath.Dir(p), 0o777))
	return []string{dirsEnv + "=" + filepath.Dir(p), libEnv + "=" + p, absentEnv + "=1"}
}

func unsafeSkipped(t *testing.T, s *Suite, b *driver.Backend) {
	notAvailable(t, b, driver.ErrLibraryNotFound)
	var found bool
	for _, a := range b.Describe().Attempts {
		if a.Path == os.Getenv(libEnv) {
			found = true
			assert.Contains(t, a.Error, "writ", "the attempt says the folder is writable by others")
		}
	}
	assert.True(t, found, "the unsafe candidate is in the attempt log: %v", b.Describe().Attempts)
}

func stub(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrStubLibrary)
	assert.Contains(t, reason, s.Vendor.ResultName(34))
	assert.Contains(t, reason, "(34)")
	assert.Contains(t, reason, os.Getenv(libEnv))
	assert.Contains(t, reason, "stub")
	var e *driver.Error
	_, err := b.Current()
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 34, e.Code)
	assert.Equal(t, s.typ(), e.Vendor)
	// A stub library answers nothing, not even its version.
	_, _, err = b.DriverVersion()
	assert.Error(t, err)
	assert.Equal(t, os.Getenv(libEnv), b.Describe().Library)
}

func initCase(code int, name string, sentinel error) fakeCase {
	return fakeCase{
		name:  fmt.Sprintf("init_%d", code),
		setup: withOverride(nil, fmt.Sprintf("FAKE_INIT_RESULT=%d", code)),
		check: func(t *testing.T, s *Suite, b *driver.Backend) {
			var targets []error
			if sentinel != nil {
				targets = append(targets, sentinel)
			}
			reason := notAvailable(t, b, targets...)
			assert.Contains(t, reason, fmt.Sprintf("(%d)", code))
			assert.Contains(t, reason, s.sym(driver.OpInit)+"(0) failed: ")
			assert.Contains(t, reason, s.Vendor.ResultName(code))
			assert.Equal(t, 1, strings.Count(reason, string(s.typ())+": "), "one package prefix: %s", reason)
			assert.Contains(t, reason, os.Getenv(libEnv))
			// The version is readable without init.
			major, minor, err := b.DriverVersion()
			require.NoError(t, err)
			assert.Equal(t, s.Version, [2]int{major, minor})
			_, err = b.DeviceCount()
			var e *driver.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, code, e.Code)
		},
	}
}

func zeroDevices(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrNoDevice)
	assert.Contains(t, reason, "no devices")
	assert.Contains(t, reason, s.visibleEnv()+`="7"`)
	assert.Contains(t, reason, os.Getenv(libEnv))
	n, err := b.DeviceCount()
	assert.NoError(t, err, "zero devices is an answer")
	assert.Zero(t, n)
	info := b.Describe()
	assert.Equal(t, "7", info.Extra[s.visibleEnv()])
	assert.Equal(t, "0", info.Extra["devices"])
}

func absurdCount(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrTooManyDevices)
	assert.Contains(t, reason, "2147483647")
	assert.Contains(t, reason, fmt.Sprint(driver.MaxDevices))
	_, err := b.DeviceCount()
	assert.Error(t, err, "no count is given for a broken driver")
}

func initHangs(t *testing.T, s *Suite, _ *driver.Backend) {
	b := s.New(driver.WithInitTimeout(200 * time.Millisecond))
	start := time.Now()
	reason := notAvailable(t, b, driver.ErrTimedOut)
	// The bound is the timeout, not the driver's sleep: generous, never
	// the 5 s the fake sleeps.
	assert.Less(t, time.Since(start), 4*time.Second)
	assert.Contains(t, reason, s.sym(driver.OpInit))
	assert.Contains(t, reason, "200ms")
	assert.Contains(t, reason, "FLAGOS_PROBE_TIMEOUT")
	assert.Equal(t, os.Getenv(libEnv), b.Describe().Library, "what the load did before it hung is reported")
}

func missingOptional(t *testing.T, s *Suite, b *driver.Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	_, err := b.PCIBusID(0)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.Contains(t, err.Error(), s.sym(driver.OpDevicePCIBusID))
	p, err := b.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, "Fake GPU 1", p.Name)
	assert.Contains(t, b.Describe().Extra, "missing.PCI bus ids")
}

func versionedFallback(t *testing.T, s *Suite, b *driver.Backend) {
	p, err := b.Properties(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(3<<30), p.TotalMemory)
	names := s.syms(driver.OpDeviceTotalMem)
	require.Len(t, names, 2, "the vendor has a versioned name and a fallback")
	assert.Equal(t, names[1], b.Describe().Extra["symbol.DeviceTotalMem"])
}

func missingRequired(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrMissingSymbol)
	assert.Contains(t, reason, s.sym(driver.OpSynchronize))
	assert.Contains(t, reason, os.Getenv(libEnv))
	assert.Contains(t, reason, "required")
}

func lazyConcurrent(t *testing.T, s *Suite, b *driver.Backend) {
	logf := os.Getenv("FAKE_LOG")
	assert.Empty(t, readLog(t, logf), "New must not open the library")
	assert.False(t, b.Loaded())
	const n = 64
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var err error
			switch i % 4 {
			case 0:
				r := b.Available()
				results[i] = fmt.Sprint(r.Available, r.Devices)
			case 1:
				var c int
				c, err = b.DeviceCount()
				results[i] = fmt.Sprint(c > 0, c)
			case 2:
				err = b.Synchronize(i % 2)
				results[i] = "true 2"
			case 3:
				_, err = b.Properties(1)
				results[i] = "true 2"
			}
			if err != nil {
				results[i] = err.Error()
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		assert.Equal(t, "true 2", r, "goroutine %d", i)
	}
	lines := readLog(t, logf)
	assert.Equal(t, 1, count(lines, "load"), "one dlopen: %v", lines)
	assert.Equal(t, 1, count(lines, "init"), "one init: %v", lines)
}

func backend(t *testing.T, s *Suite, b *driver.Backend) {
	assert.Equal(t, s.typ(), b.Type())
	n, err := b.DeviceCount()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	major, minor, err := b.DriverVersion()
	require.NoError(t, err)
	assert.Equal(t, s.Version, [2]int{major, minor})

	for i, name := range []string{"Fake H200 A", "Fake H200 B"} {
		p, err := b.Properties(i)
		require.NoError(t, err)
		assert.Equal(t, name, p.Name)
		assert.Equal(t, uint64(150754820096), p.TotalMemory)
		assert.Equal(t, [3]int{9, 0, 132}, [3]int{p.Major, p.Minor, p.MultiProcessors})
		assert.Equal(t, s.Vendor.Name, p.Vendor)
		assert.True(t, strings.HasPrefix(p.UUID, s.Vendor.UUIDPrefix))
		u := fmt.Sprintf("%02x%02x%02x%02x-", 0x10*(i+1), 0x10*(i+1)+1, 0x10*(i+1)+2, 0x10*(i+1)+3)
		assert.Contains(t, p.UUID, u)
		id, err := b.PCIBusID(i)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("00000000:%02X:00.0", 0x18+i), id)
		free, total, err := b.MemInfo(i)
		require.NoError(t, err)
		assert.Equal(t, p.TotalMemory, total, "MemInfo's total is Properties' total")
		assert.LessOrEqual(t, free, total)
	}

	cur, err := b.Current()
	require.NoError(t, err)
	assert.Zero(t, cur)
	require.NoError(t, b.SetCurrent(1))
	cur, err = b.Current()
	require.NoError(t, err)
	assert.Equal(t, 1, cur)
	require.NoError(t, b.SetCurrent(-1), "-1 keeps the current device")
	cur, _ = b.Current()
	assert.Equal(t, 1, cur)
	require.NoError(t, b.Synchronize(-1))
	require.NoError(t, b.Synchronize(0))
	p, err := b.Properties(-1)
	require.NoError(t, err)
	assert.Equal(t, "Fake H200 B", p.Name, "-1 is the current device")

	for _, bad := range []int{-2, 2, 1 << 20} {
		err := b.SetCurrent(bad)
		assert.ErrorIs(t, err, device.ErrInvalidIndex, "SetCurrent(%d)", bad)
		assert.Contains(t, err.Error(), "valid indexes are 0..1")
	}
	assert.ErrorIs(t, b.Synchronize(2), device.ErrInvalidIndex)
	_, err = b.Properties(2)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	_, err = b.PCIBusID(-3)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	_, _, err = b.MemInfo(7)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	cur, _ = b.Current()
	assert.Equal(t, 1, cur, "a failed SetCurrent changes nothing")

	info := b.Describe()
	assert.Equal(t, "true", info.Extra["available"])
	assert.Equal(t, "2", info.Extra["devices"])
	assert.Equal(t, s.sym(driver.OpDeviceTotalMem), info.Extra["symbol.DeviceTotalMem"])
	assert.NotContains(t, info.Extra, s.visibleEnv())
	for k := range info.Extra {
		assert.False(t, strings.HasPrefix(k, "missing."), "the full fake lacks nothing: %s", k)
	}
}

func threads(t *testing.T, s *Suite, b *driver.Backend) {
	// The fake's contexts are per thread and its calls fail without one:
	// every call must select its device on its own locked thread, whatever
	// thread the goroutine is on.
	var wg sync.WaitGroup
	errs := make(chan error, 1024)
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				d := (g + i) % 4
				if err := b.Synchronize(d); err != nil {
					errs <- err
					return
				}
				if i%7 == 0 {
					if err := b.SetCurrent(d); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := b.Current()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, c, 0)
	assert.Less(t, c, 4)
}

func hotPaths(t *testing.T, s *Suite, b *driver.Backend) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	require.NoError(t, b.SetCurrent(1)) // the first use retains the contexts
	require.NoError(t, b.SetCurrent(0))
	m, err := b.LoadModule(0, []byte(AddImage), "hot")
	require.NoError(t, err)
	defer m.Unload()
	nop, err := m.Function("nop3")
	require.NoError(t, err)
	p, err := b.Alloc(0, 64)
	require.NoError(t, err)
	defer b.Free(0, p)
	st, err := b.NewStream(0)
	require.NoError(t, err)
	defer st.Destroy()
	args := []any{p, p, uint32(1)}
	one := [3]uint32{1, 1, 1}
	allocs := testing.AllocsPerRun(200, func() {
		_, _ = b.Current()
		_ = b.SetCurrent(1)
		_ = b.Synchronize(-1)
		_ = b.Synchronize(0)
		_ = b.Launch(0, nop, one, one, 0, args...)
		_ = st.Launch(nop, one, one, 0, args...)
		_ = st.Synchronize()
	})
	assert.Zero(t, allocs, "Current, SetCurrent, Synchronize, Launch and a stream's Launch and Synchronize must not allocate")
}

func callError(t *testing.T, s *Suite, b *driver.Backend) {
	err := b.Synchronize(1)
	require.Error(t, err)
	var e *driver.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 700, e.Code)
	assert.Equal(t, s.Vendor.ResultName(700), e.Name)
	assert.Contains(t, e.Message, "illegal memory access")
	assert.Equal(t, fmt.Sprintf("%s(device 1): %s: %s (700): fake: an illegal memory access was encountered",
		s.sym(driver.OpSynchronize), s.typ(), s.Vendor.ResultName(700)), err.Error())
	assert.ErrorIs(t, err, device.ErrLaunchFailed, "an illegal address is a kernel's fault")
	assert.NotErrorIs(t, err, device.ErrNotAvailable)
	assert.True(t, b.Available().Available, "a failed call does not change the probe")
}

func withContext(t *testing.T, s *Suite, b *driver.Backend) {
	cur := counter(t, "fake_current_ordinal")
	err := b.WithContext(1, func() error {
		assert.Equal(t, 1, cur(), "device 1 is current inside")
		return nil
	})
	require.NoError(t, err)
	sentinel := fmt.Errorf("from f")
	assert.Equal(t, sentinel, b.WithContext(0, func() error { return sentinel }), "f's error comes back as is")
	assert.ErrorIs(t, b.WithContext(9, func() error { return nil }), device.ErrInvalidIndex)
}
