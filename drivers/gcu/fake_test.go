package gcu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libtopsrt.so (testdata/fake_libtopsrt.c: the kit's fake_hipfamily.c under
// TOPS's names), each in a child process. The
// TOPS runtime numbers its results as CUDA's runtime does: no Codes.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	NewBackend: New,
	Presence:   efmlPresence,
	Version:    [2]int{2, 3},
	PCIBusID:   "0000:%02x:00.0",
	FakeNames:  map[int]string{1054: "topsErrorTbd"},
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) { suite.Test(t) }

func TestVendor(t *testing.T) {
	v := Vendor()
	drivertest.CheckSymbols(t, v, `^tops[A-Z]`, 1)
	assert.Equal(t, driver.CurrentDevice, v.Context)
	assert.Equal(t, driver.ErrorTextReturned, v.ErrorText)
	assert.Equal(t, driver.JITOptions{}, v.JIT)
	for _, op := range []driver.Op{driver.OpPrimaryCtxRetain, driver.OpCtxSetCurrent, driver.OpCtxGetCurrent,
		driver.OpDeviceUUID, driver.OpModuleLoadDataEx, driver.OpFuncGetParamInfo} {
		assert.NotContains(t, v.Symbols, op, "not bound: %s", op)
	}
	assert.Equal(t, []string{"topsDeviceComputeCapability"}, v.Symbols[driver.OpDeviceAttribute])
	assert.Equal(t, -1, v.Attributes.MultiprocessorCount, "not confirmed beyond the 2.3 header: not asked")
	drivertest.CheckVersions(t, v, [3]int{2020, 2, 2}, [3]int{2030, 2, 3}, [3]int{3060, 3, 6}, [3]int{4000, 4, 0})
	assert.Equal(t, []string{EnvVar, EFMLEnvVar, VisibleDevicesEnv}, drivertest.VariableNames(v))
	assert.Equal(t, []uint16{0x1e36}, v.PCIVendors)
	assert.Equal(t, 60, v.Auto)
	assert.Equal(t, device.Type("gcu"), v.Type)
}

func TestResults(t *testing.T) {
	drivertest.CheckResults(t, Vendor(), `^tops(Success|Error[A-Z][A-Za-z]+)$`, map[int][]error{
		1:   {device.ErrInvalidValue},
		2:   {device.ErrOutOfMemory},
		3:   {driver.ErrNotInitialized},
		35:  {driver.ErrDriverMismatch, device.ErrNotAvailable},
		100: {driver.ErrNoDevice, device.ErrNotAvailable},
		101: {device.ErrInvalidIndex},
		200: {device.ErrInvalidImage},
		209: {device.ErrInvalidImage},
		218: {device.ErrInvalidImage},
		400: {device.ErrInvalidValue},
		500: {device.ErrNotFound},
		600: {device.ErrNotReady},
		700: {device.ErrLaunchFailed},
		719: {device.ErrLaunchFailed},
		801: {device.ErrNotSupported},
	}) // and no stub library code: TOPS has none
	assert.Equal(t, "TOPS_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054), "topsErrorTbd, the end marker, is not in the table")
}
