package maca

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libmcruntime.so (testdata/fake_libmcruntime.c: the kit's fake_hipfamily.c
// under MACA's names), each in a child process.
// The attributes are never read (their numbers are not confirmed), so the
// compute capability and multiprocessors are unknown (0).
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	NewBackend: New,
	Presence:   mxsmlPresence,
	Version:    [2]int{0, 0},
	Capability: &[3]int{0, 0, 0},
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) { suite.Test(t) }

// TestInitDriverMismatch: mcInit failing with MetaX's own code names it,
// says what to do, and matches driver.ErrDriverMismatch.
func TestInitDriverMismatch(t *testing.T) {
	suite.InChild(t, nil, []string{"FAKE_MACA_INIT_RESULT=10003"}, func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		require.False(t, r.Available)
		assert.Contains(t, r.Reason, "maca: mcInit(0) failed: mcErrorDriverMismatch (10003)")
		assert.Contains(t, r.Reason, "do not match: reboot or reinstall the driver")
		_, err := b.Current()
		assert.ErrorIs(t, err, driver.ErrDriverMismatch)
		assert.ErrorIs(t, err, device.ErrNotAvailable)
	})
}

func TestVendor(t *testing.T) {
	v := Vendor()
	drivertest.CheckSymbols(t, v, `^mc[A-Z]`, 1) // one name per function: no _v2
	assert.Equal(t, device.Type("maca"), v.Type)
	assert.Equal(t, driver.PrimaryContext, v.Context)
	assert.Equal(t, driver.ErrorTextReturned, v.ErrorText)
	assert.Equal(t, driver.JITOptions{}, v.JIT)
	assert.Equal(t, driver.Attributes{}, v.Attributes, "mcDeviceAttribute_t's numbers are not confirmed")
	assert.False(t, v.VersionKnown(), "mcDriverGetVersion's encoding is not confirmed")
	assert.Equal(t, "12345", v.FormatVersion(12345))
	assert.Equal(t, EnvVar, v.Library.EnvVar)
	assert.Equal(t, []string{"libmcruntime.so"}, v.Library.Sonames)
	assert.Equal(t, []string{"/dev/mxcd"}, v.Library.Nodes)
	assert.Equal(t, []uint16{0x9999}, v.PCIVendors)
	assert.Equal(t, 50, v.Auto)
	assert.Equal(t, []string{"CUDA_VISIBLE_DEVICES", "MACA_VISIBLE_DEVICES"}, v.VisibleEnv)
	for _, op := range []driver.Op{driver.OpDeviceTotalMem, driver.OpDeviceUUID, driver.OpModuleLoadDataEx,
		driver.OpMemcpyDtoHAsync, driver.OpFuncGetParamInfo, driver.OpSetDevice, driver.OpGetDevice} {
		assert.NotContains(t, v.Symbols, op, "%s: not confirmed, or not needed by the PrimaryContext model", op)
	}
	assert.Equal(t, "mcStreamCreate", v.Symbols[driver.OpStreamCreate][0], "the one-argument form, through an adapter")
	assert.Equal(t, "mcEventCreate", v.Symbols[driver.OpEventCreate][0])
	for _, op := range []driver.Op{driver.OpDeviceAttribute, driver.OpStreamCreate, driver.OpEventCreate} {
		assert.Contains(t, v.Adapters, op)
	}
	assert.Len(t, v.Adapters, 3)
	assert.ElementsMatch(t, []string{EnvVar, MXSMLEnvVar, CUDAVisibleDevicesEnv, VisibleDevicesEnv}, drivertest.VariableNames(v))
}

// TestAdapters: the attribute adapter never calls the library, and the
// create adapters pass the out-pointer alone and refuse flags.
func TestAdapters(t *testing.T) {
	assert.Equal(t, mcErrorNotSupported, Adapters[driver.OpDeviceAttribute](nil, 0, 75, 1000), "never calls mcDeviceGetAttribute")
	assert.Equal(t, mcErrorInvalidValue, Adapters[driver.OpStreamCreate](nil, 0, 1), "flags cannot be expressed")
	assert.Equal(t, mcErrorInvalidValue, Adapters[driver.OpEventCreate](nil, 0, 2))
}

func TestResults(t *testing.T) {
	drivertest.CheckResults(t, Vendor(), `^mc(Success|Error[A-Z][A-Za-z]+)$`, map[int][]error{
		1:     {device.ErrInvalidValue},
		2:     {device.ErrOutOfMemory},
		3:     {driver.ErrNotInitialized},
		4:     {driver.ErrNotInitialized},
		98:    {device.ErrNotFound},
		100:   {driver.ErrNoDevice, device.ErrNotAvailable},
		101:   {device.ErrInvalidIndex},
		200:   {device.ErrInvalidImage},
		201:   {driver.ErrInvalidContext},
		209:   {device.ErrInvalidImage},
		218:   {device.ErrInvalidImage},
		400:   {device.ErrInvalidValue},
		500:   {device.ErrNotFound},
		600:   {device.ErrNotReady},
		700:   {device.ErrLaunchFailed},
		701:   {device.ErrLaunchFailed},
		719:   {device.ErrLaunchFailed},
		801:   {device.ErrNotSupported},
		1004:  {device.ErrNotFound},
		10003: {driver.ErrDriverMismatch, device.ErrNotAvailable},
		10025: {driver.ErrInvalidContext},
		10027: {device.ErrNotFound},
		10032: {device.ErrLaunchFailed},
	}) // and no stub library code: MACA has none
	assert.Equal(t, "mcErrorMemoryAllocation", Vendor().ResultName(2))
	assert.Equal(t, "MACA_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054))
}
