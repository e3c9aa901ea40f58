package drivertest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

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
	dryMatches(t, s, b)
}

// noStubCode skips the stub case for a vendor without a stub library.
func noStubCode(s *Suite) string {
	if _, ok := s.stubCode(); ok {
		return ""
	}
	return fmt.Sprintf("%s has no result code for a link-time stub library (CUDA's 34, CUDA_ERROR_STUB_LIBRARY): its toolkit ships no stub of %s",
		s.typ(), s.lib())
}

// noOwnPCIFunction skips the missing-optional case for a vendor whose PCI
// bus id comes from no function of its own: none at all, or a function a
// required operation needs too (Kunlunxin reads it as a device attribute),
// which no library of the vendor can lack.
func noOwnPCIFunction(s *Suite) string {
	pci := s.syms(driver.OpDevicePCIBusID)
	if len(pci) == 0 {
		return fmt.Sprintf("%s binds no PCI bus id function", s.typ())
	}
	for _, op := range []driver.Op{driver.OpInit, driver.OpDriverVersion, driver.OpDeviceCount, driver.OpDeviceGet,
		driver.OpDeviceName, driver.OpDeviceAttribute, driver.OpSynchronize, driver.OpSetDevice, driver.OpCtxSetCurrent} {
		for _, n := range s.syms(op) {
			if n == pci[0] {
				return fmt.Sprintf("%s reads PCI bus ids through %s, which %s needs too: no library of the vendor lacks it", s.typ(), n, op)
			}
		}
	}
	return ""
}

// noVersionedTotalMem skips the fallback case for a vendor whose
// total-memory function has one name.
func noVersionedTotalMem(s *Suite) string {
	switch names := s.syms(driver.OpDeviceTotalMem); len(names) {
	case 0:
		return fmt.Sprintf("%s names no total-memory function, so no versioned name to fall back from (CUDA's cuDeviceTotalMem_v2 -> cuDeviceTotalMem)", s.typ())
	case 1:
		return fmt.Sprintf("%s has one total-memory function (%s), no versioned name to fall back from (CUDA's cuDeviceTotalMem_v2 -> cuDeviceTotalMem)",
			s.typ(), names[0])
	}
	return ""
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
	s.checkVersionString(t, info.DriverVersion)
	assert.Contains(t, r.Reason, info.Library)
	dryMatches(t, s, b)
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
	if s.supports("PCI bus ids") {
		id, err := b.PCIBusID(0)
		require.NoError(t, err)
		assert.Equal(t, s.pciBusID(0), id)
	}
	dryMatches(t, s, b)
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
	dryMatches(t, s, b)
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
	dryMatches(t, s, b)
}

func stub(t *testing.T, s *Suite, b *driver.Backend) {
	code, _ := s.stubCode()
	reason := notAvailable(t, b, driver.ErrStubLibrary)
	assert.Contains(t, reason, s.Vendor.ResultName(code))
	assert.Contains(t, reason, fmt.Sprintf("(%d)", code))
	dryMatches(t, s, b) // a stub is known only once opened
	assert.Contains(t, reason, os.Getenv(libEnv))
	assert.Contains(t, reason, "stub")
	var e *clib.Error
	_, err := b.Current()
	require.ErrorAs(t, err, &e)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, string(s.typ()), e.Library)
	// A stub library answers nothing, not even its version.
	_, _, err = b.DriverVersion()
	assert.Error(t, err)
	assert.Equal(t, os.Getenv(libEnv), b.Describe().Library)
}

// initCase is init failing with code (a CUDA number: Suite.Codes gives the
// vendor's), where the vendor has that code: the backend is not available,
// with the sentinels given here and those of the vendor's table.
func initCase(cudaCode int, sentinels ...error) fakeCase {
	return fakeCase{
		name: fmt.Sprintf("init_%d", cudaCode),
		skip: func(s *Suite) string {
			if _, ok := s.Vendor.Results[s.code(cudaCode)]; ok {
				return ""
			}
			return fmt.Sprintf("%s has no result code %d", s.typ(), s.code(cudaCode))
		},
		setup: withOverride(nil, fmt.Sprintf("FAKE_INIT_RESULT=%d", cudaCode)),
		check: func(t *testing.T, s *Suite, b *driver.Backend) {
			code := s.code(cudaCode)
			targets := slices.Concat(sentinels, s.Vendor.Results[code].Is)
			reason := notAvailable(t, b, targets...)
			assert.Contains(t, reason, fmt.Sprintf("(%d)", code))
			assert.Contains(t, reason, s.sym(driver.OpInit)+"(0) failed: ")
			assert.Contains(t, reason, s.Vendor.ResultName(code))
			assert.Equal(t, 1, strings.Count(reason, string(s.typ())+": "), "one package prefix: %s", reason)
			assert.Contains(t, reason, os.Getenv(libEnv))
			// The version is readable without init.
			s.checkVersion(t, b)
			_, err := b.DeviceCount()
			var e *clib.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, code, e.Code)
		},
	}
}

// zeroDevicesSetup: a fake without devices, and the vendor's first
// visible-devices variable set (a vendor without one has nothing to set).
func zeroDevicesSetup(t *testing.T, s *Suite) []string {
	kv := []string{"FAKE_DEVICE_COUNT=0"}
	if v := s.visibleEnv(); v != "" {
		kv = append(kv, v+"=7")
	}
	return withOverride(nil, kv...)(t, s)
}

func zeroDevices(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrNoDevice)
	t.Log(reason)
	assert.Contains(t, reason, "no devices")
	assert.Contains(t, reason, os.Getenv(libEnv))
	n, err := b.DeviceCount()
	assert.NoError(t, err, "zero devices is an answer")
	assert.Zero(t, n)
	info := b.Describe()
	assert.Equal(t, "0", info.Extra["devices"])
	if v := s.visibleEnv(); v != "" {
		assert.Contains(t, reason, v+`="7"`, "the reason names the variable that may hide the devices")
		assert.Equal(t, "7", info.Extra[v])
	}
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
	assert.Equal(t, s.name(s.deviceName([]string{"Fake GPU 0", "Fake GPU 1"}, 1)), p.Name)
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
