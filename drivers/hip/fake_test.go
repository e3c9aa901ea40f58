package hip

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libamdhip64.so.6 (testdata/fake_libamdhip64.c: the kit's
// fake_hipfamily.c under HIP's names, hipDeviceGetUuid in ROCm's form),
// each in a child process; its presence tier is a KFD topology describing
// the same devices (kfdPresence), so record_tiers compares both tiers'
// records.
var suite = &drivertest.Suite{Vendor: Vendor(), NewBackend: New, Version: [2]int{6, 2},
	PCIBusID: "0000:%02x:00.0", FakeNames: map[int]string{1054: "hipErrorTbd"}, Presence: kfdPresence}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake (the driver core's
// benchmarks are drivers/cuda's: the code is the same).
func TestFakes(t *testing.T) { suite.Test(t) }

func TestVendor(t *testing.T) {
	drivertest.CheckSymbols(t, Vendor(), `^hip[A-Z]`, 1) // HIP has one name per function
	assert.Equal(t, driver.CurrentDevice, Vendor().Context)
	assert.Equal(t, driver.ErrorTextReturned, Vendor().ErrorText)
	assert.Equal(t, driver.JITOptions{}, Vendor().JIT, "hipModuleLoadDataEx ignores JIT options")
	for _, op := range []driver.Op{driver.OpPrimaryCtxRetain, driver.OpCtxSetCurrent, driver.OpCtxGetCurrent} {
		assert.NotContains(t, Vendor().Symbols, op, "the deprecated context API is not bound")
	}
	drivertest.CheckVersions(t, Vendor(), [3]int{60241134, 6, 2}, [3]int{60240092, 6, 2}, [3]int{50731921, 5, 7},
		[3]int{70100000, 7, 1}, [3]int{60443483, 6, 4}) // HIP_VERSION
}

func TestResults(t *testing.T) {
	drivertest.CheckResults(t, Vendor(), `^hip(Success|Error[A-Z][A-Za-z]+)$`, map[int][]error{
		1:   {device.ErrInvalidValue},
		2:   {device.ErrOutOfMemory},
		3:   {driver.ErrNotInitialized},
		4:   {driver.ErrNotInitialized},
		17:  {device.ErrInvalidValue},
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
	}) // and no stub library code: HIP has none
	assert.Equal(t, "hipErrorOutOfMemory", Vendor().ResultName(2))
	assert.Equal(t, "HIP_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054), "hipErrorTbd moves between releases: not in the table")
}
