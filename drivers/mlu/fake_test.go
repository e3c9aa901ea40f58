package mlu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libcndrv.so (testdata/fake_libcndrv.c), each in a child process. The fake
// answers CNresult codes: Codes gives the kit the CNresult of each CUDA
// number its cases use.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	NewBackend: New,
	Presence:   cndevPresence,
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
func TestFakes(t *testing.T) { suite.Test(t) }

func TestVendor(t *testing.T) {
	v := Vendor()
	drivertest.CheckSymbols(t, v, `^cn[A-Z]`, 0)
	assert.Equal(t, driver.PrimaryContext, v.Context)
	assert.Equal(t, driver.ErrorTextOut, v.ErrorText)
	assert.Equal(t, driver.JITOptions{}, v.JIT, "CNDrv has no JIT options")
	for _, op := range []driver.Op{driver.OpLaunchKernel, driver.OpModuleLoadDataEx, driver.OpFuncGetParamInfo, driver.OpSetDevice, driver.OpGetDevice} {
		assert.NotContains(t, v.Symbols, op, "not bound: %s", op)
	}
	for op := range v.Adapters {
		assert.Contains(t, v.Symbols, op, "an adapter of an unbound operation: %s", op)
	}
	assert.Len(t, v.Adapters, 8)
	drivertest.CheckVersions(t, v, [3]int{215005, 2, 15}, [3]int{200000, 2, 0}, [3]int{1006000, 10, 6}, [3]int{299999, 2, 99}) // CN_VERSION
	assert.Equal(t, "2.15", v.FormatVersion(215005))
	assert.Equal(t, []string{EnvVar, CNDevEnvVar, cudaVisibleDevicesEnv, CNVisibleDevicesEnv, VisibleDevicesEnv}, drivertest.VariableNames(v))
	assert.Equal(t, []uint16{0xcabc}, v.PCIVendors)
	assert.Equal(t, 30, v.Auto)
	assert.Equal(t, device.Type("mlu"), v.Type)
}

func TestResults(t *testing.T) {
	drivertest.CheckResults(t, Vendor(), `^CN_[A-Z0-9_]+$`, map[int][]error{
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
	}) // and no stub library code: CNDrv has none
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
	suite.InChild(t, []string{"-DFAKE_NO_WAIT_WITH_FLAGS", "-DFAKE_NO_ASYNC_V2"}, []string{"FAKE_CN_VERSION_NEEDS_INIT=1"}, fallbacks)
}

func fallbacks(t *testing.T, b *driver.Backend) {
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
