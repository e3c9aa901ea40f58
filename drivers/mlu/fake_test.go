package mlu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// suite runs the driver core's conformance cases against the fake
// libcndrv.so (testdata/fake_libcndrv.c), each in a child process. The fake
// answers CNresult codes: Codes gives the kit the CNresult of each CUDA
// number its cases use.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	Presence:   cndevPresence,
	FakeSource: "", // set in TestMain: an absolute path
	FakeSoname: "libcndrv.so",
	Version:    [2]int{2, 15},
	PCIBusID:   "0000:%02x:00.0",
	Codes:      fakeCodes,
}

// fakeCodes are the CNresult codes the fake answers for the CUDA numbers of
// the kit's cases (testdata/fake_libcndrv.c translates them the same way).
var fakeCodes = map[int]int{
	1:   100006, // CN_ERROR_INVALID_VALUE
	2:   100100, // CN_MEMORY_ERROR_OUT_OF_MEMORY
	3:   100002, // CN_ERROR_NOT_INITIALIZED
	100: 100004, // CN_ERROR_NO_DEVICE
	101: 100005, // CN_ERROR_INVALID_DEVICE
	200: 101313, // CN_FATBIN_INVALID_IMAGE
	201: 100201, // CN_CONTEXT_ERROR_INVALID
	218: 100300, // CN_ERROR_INVALID_FATBIN
	400: 100014, // CN_ERROR_INVALID_HANDLE
	500: 100301, // CN_ERROR_NOT_FOUND
	600: 1,      // CN_ERROR_NOT_READY
	700: 100131, // CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS
	719: 100200, // CN_INVOKE_ERROR
	803: 100009, // CN_ERROR_SYSTEM_DRIVER_MISMATCH
	999: 200000, // CN_ERROR_UNKNOWN
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) {
	suite.FakeSource = dltest.Abs(t, "testdata/fake_libcndrv.c")
	suite.Test(t)
}

func TestNewDoesNoIO(t *testing.T) {
	b := New()
	assert.Equal(t, Type, b.Type())
	assert.Same(t, Vendor(), b.Vendor())
	assert.False(t, b.Loaded(), "New and Type open nothing")
}

func TestVendor(t *testing.T) {
	v := Vendor()
	require.NoError(t, v.Validate())
	assert.Equal(t, driver.PrimaryContext, v.Context)
	assert.Equal(t, driver.ErrorTextOut, v.ErrorText)
	assert.Equal(t, driver.JITOptions{}, v.JIT, "CNDrv has no JIT options")
	for op, names := range v.Symbols {
		for _, n := range names {
			assert.Regexp(t, `^cn[A-Z]`, n, op)
		}
	}
	for _, op := range []driver.Op{driver.OpLaunchKernel, driver.OpModuleLoadDataEx, driver.OpFuncGetParamInfo, driver.OpSetDevice, driver.OpGetDevice} {
		assert.NotContains(t, v.Symbols, op, "not bound: %s", op)
	}
	for op := range v.Adapters {
		assert.Contains(t, v.Symbols, op, "an adapter of an unbound operation: %s", op)
	}
	assert.Len(t, v.Adapters, 8)
	for _, c := range []struct{ version, major, minor int }{{215005, 2, 15}, {200000, 2, 0}, {1006000, 10, 6}, {299999, 2, 99}} {
		major, minor := v.DecodeVersion(c.version)
		assert.Equal(t, [2]int{c.major, c.minor}, [2]int{major, minor}, "CN_VERSION %d", c.version)
	}
	assert.Equal(t, "2.15", v.FormatVersion(215005))
	assert.Equal(t, []string{EnvVar, CNDevEnvVar, cudaVisibleDevicesEnv, CNVisibleDevicesEnv, VisibleDevicesEnv}, varNames(v))
	assert.Equal(t, []uint16{0xcabc}, v.PCIVendors)
	assert.Equal(t, 30, v.Auto)
	assert.Equal(t, device.Type("mlu"), v.Type)
}

func varNames(v *driver.Vendor) []string {
	var out []string
	for _, x := range v.Variables() {
		out = append(out, x.Name)
	}
	return out
}

func TestResults(t *testing.T) {
	for code, want := range map[int][]error{
		1:      {device.ErrNotReady},
		100002: {driver.ErrNotInitialized},
		100003: {driver.ErrNotInitialized},
		100004: {driver.ErrNoDevice, device.ErrNotAvailable},
		100005: {device.ErrInvalidIndex},
		100006: {device.ErrInvalidValue},
		100009: {driver.ErrDriverMismatch, device.ErrNotAvailable},
		100014: {device.ErrInvalidValue},
		100050: {device.ErrNotSupported},
		100100: {device.ErrOutOfMemory},
		100101: {device.ErrOutOfMemory},
		100131: {device.ErrLaunchFailed},
		100200: {device.ErrLaunchFailed},
		100201: {driver.ErrInvalidContext},
		100300: {device.ErrInvalidImage},
		100301: {device.ErrNotFound},
		101313: {device.ErrInvalidImage},
		101315: {device.ErrInvalidImage},
		200000: nil,
	} {
		r, ok := Results[code]
		require.True(t, ok, "code %d", code)
		assert.ElementsMatch(t, want, r.Is, "%s (%d)", r.Name, code)
	}
	for code, r := range Results {
		assert.Regexp(t, `^CN_[A-Z0-9_]+$`, r.Name, code)
		for _, e := range r.Is {
			assert.NotEqual(t, driver.ErrStubLibrary, e, "CNDrv has no stub library code")
		}
	}
	// The kit's CUDA numbers map to codes of the table (those it runs).
	for cu, c := range fakeCodes {
		_, ok := Results[c]
		assert.True(t, ok, "CUDA %d -> %d", cu, c)
	}
	assert.Equal(t, "CN_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054))
}

// TestFallbacks: an older CNDrv (no cnQueueWaitNotifierWithFlags, no _V2
// asynchronous copies) whose cnDriverGetVersion needs init: the flag-less
// wait and the plain copies are used, and the version is read after init.
func TestFallbacks(t *testing.T) {
	if dltest.IsChild(t) {
		fallbacks(t)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake")
	}
	suite.FakeSource = dltest.Abs(t, "testdata/fake_libcndrv.c")
	p := suite.Build(t, "-DFAKE_NO_WAIT_WITH_FLAGS", "-DFAKE_NO_ASYNC_V2")
	out := dltest.MustChild(t, "TestFallbacks", EnvVar+"="+p, "FAKE_CN_VERSION_NEEDS_INIT=1")
	if testing.Verbose() {
		t.Log(out)
	}
}

func fallbacks(t *testing.T) {
	b := New()
	lib := b.LibraryInfo()
	require.NoError(t, lib.Err)
	assert.Zero(t, lib.Version, "the version needs init: unknown before it")
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	major, minor, err := b.DriverVersion()
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 15}, [2]int{major, minor}, "read again after init")
	assert.Contains(t, r.Reason, "driver 2.15")
	info := b.Describe()
	assert.Equal(t, "cnQueueWaitNotifier", info.Extra["symbol.StreamWaitEvent"])
	assert.Equal(t, "cnMemcpyHtoDAsync", info.Extra["symbol.MemcpyHtoDAsync"])
	assert.Equal(t, "cnMemcpyDtoHAsync", info.Extra["symbol.MemcpyDtoHAsync"])

	st, err := b.NewStream(1)
	require.NoError(t, err)
	defer st.Destroy()
	st2, err := b.NewStream(1)
	require.NoError(t, err)
	defer st2.Destroy()
	ev, err := b.NewEvent(1)
	require.NoError(t, err)
	defer ev.Destroy()
	host, err := b.AllocHost(1, 8)
	require.NoError(t, err)
	defer host.Free()
	copy(host.Bytes(), "flagshim")
	p, err := b.Alloc(1, 8)
	require.NoError(t, err)
	defer b.Free(1, p)
	require.NoError(t, st.CopyHtoD(p, host.Bytes()))
	require.NoError(t, st.Record(ev))
	require.NoError(t, st2.Wait(ev), "cnQueueWaitNotifier, without flags")
	require.NoError(t, st2.Synchronize())
	got := make([]byte, 8)
	require.NoError(t, b.CopyDtoH(1, got, p))
	assert.Equal(t, "flagshim", string(got))
}
