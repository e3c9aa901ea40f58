package drivertest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The cases of a loaded backend's calls: the first use, properties, the
// current device, threads, allocation-free hot paths and call errors.

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
	s.checkVersion(t, b)

	// What the vendor binds decides what a device tells; what it cannot
	// tell is unknown (0, ""), never an error.
	names := []string{"Fake H200 A", "Fake H200 B"}
	wantTotal := uint64(150754820096)
	if !s.binds(driver.OpDeviceTotalMem) && !s.binds(driver.OpMemGetInfo) {
		wantTotal = 0
	}
	for i := range names {
		p, err := b.Properties(i)
		require.NoError(t, err)
		assert.Equal(t, s.name(s.deviceName(names, i)), p.Name)
		assert.Equal(t, wantTotal, p.TotalMemory)
		assert.Equal(t, s.capability(), [3]int{p.Major, p.Minor, p.MultiProcessors})
		// A fake's devices have no PCI vendor id in sysfs and its library
		// no maker's path: a shared API's maker is then unknown, another
		// vendor's is the vendor itself.
		maker := s.Vendor.Name
		if s.Vendor.Shared {
			maker = driver.Unknown
		}
		assert.Equal(t, maker, p.Vendor)
		if !s.binds(driver.OpDeviceUUID) {
			assert.Empty(t, p.UUID, "the vendor binds no UUID function")
		} else if p.UUID != "" {
			assert.Equal(t, s.fakeUUID(i), p.UUID, "the fake's UUID in the vendor's form (Vendor.UUIDForm)")
		}
		if s.binds(driver.OpDevicePCIBusID) {
			id, err := b.PCIBusID(i)
			require.NoError(t, err)
			assert.Equal(t, s.pciBusID(i), id)
		}
		if s.binds(driver.OpMemGetInfo) {
			free, total, err := b.MemInfo(i)
			require.NoError(t, err)
			assert.Equal(t, p.TotalMemory, total, "MemInfo's total is Properties' total")
			assert.LessOrEqual(t, free, total)
		} else {
			_, _, err := b.MemInfo(i)
			assert.ErrorIs(t, err, device.ErrNotSupported)
		}
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
	assert.Equal(t, s.name(s.deviceName(names, 1)), p.Name, "-1 is the current device")
	if p.UUID != "" || s.binds(driver.OpDeviceUUID) {
		assert.Equal(t, s.fakeUUID(1), p.UUID, "-1 is the current device (its UUID)")
	}

	for _, bad := range []int{-2, 2, 1 << 20} {
		err := b.SetCurrent(bad)
		assert.ErrorIs(t, err, device.ErrInvalidIndex, "SetCurrent(%d)", bad)
		assert.Contains(t, err.Error(), "valid indexes are 0..1")
	}
	assert.ErrorIs(t, b.Synchronize(2), device.ErrInvalidIndex)
	_, err = b.Properties(2)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	if s.binds(driver.OpDevicePCIBusID) {
		_, err = b.PCIBusID(-3)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}
	if s.binds(driver.OpMemGetInfo) {
		_, _, err = b.MemInfo(7)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}
	cur, _ = b.Current()
	assert.Equal(t, 1, cur, "a failed SetCurrent changes nothing")

	info := b.Describe()
	assert.Equal(t, "true", info.Extra["available"])
	assert.Equal(t, "2", info.Extra["devices"])
	if len(s.syms(driver.OpDeviceTotalMem)) > 1 {
		assert.Equal(t, s.sym(driver.OpDeviceTotalMem), info.Extra["symbol.DeviceTotalMem"], "the versioned name is found")
	} else {
		assert.NotContains(t, info.Extra, "symbol.DeviceTotalMem", "one name: nothing to report")
	}
	assert.NotContains(t, info.Extra, s.visibleEnv())
	// What the vendor never binds is missing from any library.
	unbound := map[string]bool{}
	for _, f := range s.Vendor.Unbound() {
		unbound["missing."+f] = true
	}
	for k := range info.Extra {
		assert.False(t, strings.HasPrefix(k, "missing.") && !unbound[k], "the full fake lacks nothing: %s", k)
	}
	for k := range unbound {
		assert.Contains(t, info.Extra, k, "what the vendor does not bind is reported missing")
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
	// What the core declares unsupported is not measured: its error allocates.
	launches := s.launches() && s.supports("device memory")
	streams := s.supports("streams")
	var nop device.Function
	var args []any
	if launches {
		m, err := b.LoadModule(0, []byte(AddImage), "hot")
		require.NoError(t, err)
		defer m.Unload()
		nop, err = m.Function("nop3")
		require.NoError(t, err)
		p, err := b.Alloc(0, 64)
		require.NoError(t, err)
		defer b.Free(0, p)
		args = []any{p, p, uint32(1)}
	}
	var st device.Stream
	if streams {
		var err error
		st, err = b.NewStream(0)
		require.NoError(t, err)
		defer st.Destroy()
	}
	// A call through a vendor's own shape (an Adapter) may allocate: the
	// copies and Record are held to none where the library has CUDA's.
	cudaShape := func(ops ...driver.Op) bool {
		for _, op := range ops {
			if s.Vendor.Adapters[op] != nil {
				return false
			}
		}
		return true
	}
	copies := s.supports("device memory") && cudaShape(driver.OpMemcpyHtoD, driver.OpMemcpyDtoH)
	var mem device.Ptr
	buf := make([]byte, 64)
	if copies {
		var err error
		mem, err = b.Alloc(0, 64)
		require.NoError(t, err)
		defer b.Free(0, mem)
	}
	var ev device.Event
	if streams && s.supports("events") && cudaShape(driver.OpEventRecord) {
		var err error
		ev, err = b.NewEvent(0)
		require.NoError(t, err)
		defer ev.Destroy()
	}
	one := [3]uint32{1, 1, 1}
	allocs := testing.AllocsPerRun(200, func() {
		_, _ = b.Current()
		_ = b.SetCurrent(1)
		_ = b.Synchronize(-1)
		_ = b.Synchronize(0)
		if launches {
			_ = b.Launch(0, nop, one, one, 0, args...)
			if streams {
				_ = st.Launch(nop, one, one, 0, args...)
			}
		}
		if streams {
			_ = st.Synchronize()
		}
		if copies {
			_ = b.CopyHtoD(0, mem, buf)
			_ = b.CopyDtoH(0, buf, mem)
		}
		if ev != nil {
			_ = st.Record(ev)
			_ = ev.Synchronize()
		}
	})
	assert.Zero(t, allocs, "Current, SetCurrent, Synchronize, Launch, copies and a stream's Launch, Record and Synchronize must not allocate")
}

// syncSym is the function Synchronize waits with: the vendor's
// OpSynchronizeContext (a context named, none made current) where the
// library under test has it in CUDA's shape and the vendor's selector is a
// context, else its OpSynchronize.
func (s *Suite) syncSym(t *testing.T) string {
	t.Helper()
	if s.Vendor.Context == driver.CurrentDevice || s.Vendor.Adapters[driver.OpSynchronizeContext] != nil {
		return s.sym(driver.OpSynchronize)
	}
	lib, err := purego.Dlopen(os.Getenv(libEnv), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	for _, name := range s.Vendor.Symbols[driver.OpSynchronizeContext] {
		if _, err := purego.Dlsym(lib, name); err == nil {
			return name
		}
	}
	return s.sym(driver.OpSynchronize)
}

func callError(t *testing.T, s *Suite, b *driver.Backend) {
	err := b.Synchronize(1)
	require.Error(t, err)
	var e *clib.Error
	require.ErrorAs(t, err, &e)
	code := s.code(700)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, s.Vendor.ResultName(code), e.Name)
	want := fmt.Sprintf("%s: %s(device 1) returned %s (%d)", s.typ(), s.syncSym(t), s.Vendor.ResultName(code), code)
	if s.hasErrorString() {
		assert.Contains(t, e.Message, "illegal memory access")
		want += ": fake: an illegal memory access was encountered"
	} else {
		assert.Empty(t, e.Message, "no function describes a code: no message")
	}
	assert.Equal(t, want, err.Error())
	again := b.Synchronize(1) // the call kept from the first (Backend.hot) where the vendor prepares one
	require.Error(t, again)
	assert.Equal(t, want, again.Error(), "the second call fails as the first")
	onlyKind(t, again, device.ErrLaunchFailed, "the second call's error is the same kind")
	onlyKind(t, err, device.ErrLaunchFailed, "an illegal address is a kernel's fault")
	assert.NotErrorIs(t, err, device.ErrNotAvailable)
	assert.True(t, b.Available().Available, "a failed call does not change the probe")
}

// libraryErrorName: the name of a code the vendor's table lacks is the
// library's own where it has one (HIP's hipGetErrorName, a const char *),
// else the core's generated name.
func libraryErrorName(t *testing.T, s *Suite, b *driver.Backend) {
	const code = 1054
	_, inTable := s.Vendor.Results[code]
	require.False(t, inTable, "the case needs a code the vendor's table lacks")
	want := s.Vendor.ResultName(code)
	if n, ok := s.FakeNames[code]; ok {
		want = n
	}
	err := b.Synchronize(0)
	var e *clib.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, code, e.Code)
	assert.Equal(t, want, e.Name)
	assert.Contains(t, err.Error(), want+" (1054)")
	assert.NotErrorIs(t, err, device.ErrNotAvailable, "an unknown code matches no sentinel")
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
