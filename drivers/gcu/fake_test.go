package gcu

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
// libtopsrt.so (testdata/fake_libtopsrt.c), each in a child process. The
// TOPS runtime numbers its results as CUDA's runtime does: no Codes.
var suite = &drivertest.Suite{
	Vendor:     Vendor(),
	Presence:   efmlPresence,
	FakeSoname: "libtopsrt.so",
	Version:    [2]int{2, 3},
	PCIBusID:   "0000:%02x:00.0",
	FakeNames:  map[int]string{1054: "topsErrorTbd"},
}

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the whole conformance suite on the fake.
func TestFakes(t *testing.T) {
	suite.FakeSource = dltest.Abs(t, "testdata/fake_libtopsrt.c")
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
	assert.Equal(t, driver.CurrentDevice, v.Context)
	assert.Equal(t, driver.ErrorTextReturned, v.ErrorText)
	assert.Equal(t, driver.JITOptions{}, v.JIT)
	for op, names := range v.Symbols {
		require.Len(t, names, 1, "%s: one name per function", op)
		assert.Regexp(t, `^tops[A-Z]`, names[0], op)
	}
	for _, op := range []driver.Op{driver.OpPrimaryCtxRetain, driver.OpCtxSetCurrent, driver.OpCtxGetCurrent,
		driver.OpDeviceUUID, driver.OpModuleLoadDataEx, driver.OpFuncGetParamInfo} {
		assert.NotContains(t, v.Symbols, op, "not bound: %s", op)
	}
	assert.Equal(t, []string{"topsDeviceComputeCapability"}, v.Symbols[driver.OpDeviceAttribute])
	assert.Equal(t, -1, v.Attributes.MultiprocessorCount, "not confirmed beyond the 2.3 header: not asked")
	for _, c := range []struct{ version, major, minor int }{{2020, 2, 2}, {2030, 2, 3}, {3060, 3, 6}, {4000, 4, 0}} {
		major, minor := v.DecodeVersion(c.version)
		assert.Equal(t, [2]int{c.major, c.minor}, [2]int{major, minor}, "version %d", c.version)
	}
	assert.Equal(t, []string{EnvVar, EFMLEnvVar, VisibleDevicesEnv}, varNames(v))
	assert.Equal(t, []uint16{0x1e36}, v.PCIVendors)
	assert.Equal(t, 60, v.Auto)
	assert.Equal(t, device.Type("gcu"), v.Type)
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
	} {
		r, ok := Results[code]
		require.True(t, ok, "code %d", code)
		assert.ElementsMatch(t, want, r.Is, "%s (%d)", r.Name, code)
	}
	for code, r := range Results {
		assert.Regexp(t, `^tops(Success|Error[A-Z][A-Za-z]+)$`, r.Name, code)
		for _, e := range r.Is {
			assert.NotEqual(t, driver.ErrStubLibrary, e, "TOPS has no stub library code")
		}
	}
	assert.Equal(t, "TOPS_ERROR_UNKNOWN_CODE_1054", Vendor().ResultName(1054), "topsErrorTbd, the end marker, is not in the table")
}
