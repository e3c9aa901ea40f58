package npu

import (
	"os"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// AscendCL's own behaviour, on the fake, each case in a child process (a
// loaded library stays loaded): what the conformance kit cannot know.

const aclCaseEnv = "NPU_ACL_CASE"

type aclCase struct {
	defines []string
	env     []string
	check   func(t *testing.T, b *driver.Backend)
}

var aclCases = map[string]aclCase{
	// aclrtSetDevice counts a reference per call: the backend calls it once
	// per device, whatever it does afterwards and on however many threads.
	"set_device_once": {check: func(t *testing.T, b *driver.Backend) {
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					d := (g + i) % 2
					assert.NoError(t, b.Synchronize(d))
					assert.NoError(t, b.SetCurrent(d))
					_, err := b.Properties(d)
					assert.NoError(t, err)
					_, _, err = b.MemInfo(d)
					assert.NoError(t, err)
					p, err := b.Alloc(d, 64)
					if assert.NoError(t, err) {
						assert.NoError(t, b.Free(d, p))
					}
					assert.NoError(t, b.WithContext(d, func() error { return nil }))
				}
			}()
		}
		wg.Wait()
		calls := setDeviceCalls(t)
		assert.Equal(t, [3]int{1, 1, 0}, [3]int{calls(0), calls(1), calls(2)}, "aclrtSetDevice once per device used")
	}},

	// Another component initialized AscendCL first (torch_npu, say): the
	// backend's aclInit gets ACL_ERROR_REPEAT_INITIALIZE, which is success.
	"initialized_already": {check: func(t *testing.T, b *driver.Backend) {
		lib, err := purego.Dlopen(os.Getenv(EnvVar), purego.RTLD_NOW|purego.RTLD_GLOBAL)
		require.NoError(t, err)
		var aclInit func(configPath uintptr) int32
		purego.RegisterLibFunc(&aclInit, lib, "aclInit")
		require.Zero(t, aclInit(0), "the first aclInit")
		require.EqualValues(t, 100002, aclInit(0), "the fake answers a second one as AscendCL does")
		r := b.Available()
		require.True(t, r.Available, r.Reason)
		assert.Equal(t, 2, r.Devices)
	}},

	// A pre-release's number (8.5.0-rc1: 80499901) decodes to its release.
	"version_prerelease": {env: []string{"FAKE_ACL_DRIVER_VERSION=80499901"}, check: func(t *testing.T, b *driver.Backend) {
		major, minor, err := b.DriverVersion()
		require.NoError(t, err)
		assert.Equal(t, [2]int{8, 5}, [2]int{major, minor})
		assert.Equal(t, "8.5", b.Describe().DriverVersion)
	}},
	"version_alpha": {env: []string{"FAKE_ACL_DRIVER_VERSION=89999701"}, check: func(t *testing.T, b *driver.Backend) { // 9.0.0-alpha.1
		major, minor, err := b.DriverVersion()
		require.NoError(t, err)
		assert.Equal(t, [2]int{9, 0}, [2]int{major, minor})
	}},

	// No readable version.info (ASCEND_HOME_PATH unset): the version is
	// unknown, the backend works.
	"version_unknown": {env: []string{"FAKE_ACL_VERSION_RESULT=100003"}, check: func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		require.True(t, r.Available, r.Reason)
		_, _, err := b.DriverVersion()
		assert.ErrorIs(t, err, device.ErrNotSupported)
		assert.Empty(t, b.Describe().DriverVersion)
		assert.Contains(t, r.Reason, "driver version unknown")
	}},

	// A chip whose runtime cannot tell a UUID: Properties answers without.
	"uuid_not_supported": {env: []string{"FAKE_ACL_UUID_RESULT=207000"}, check: func(t *testing.T, b *driver.Backend) {
		p, err := b.Properties(1)
		require.NoError(t, err)
		assert.Empty(t, p.UUID)
		assert.Equal(t, "Fake GPU 0", p.Name)
		assert.Equal(t, 132, p.MultiProcessors, "the AI Core count")
		assert.Zero(t, p.Major+p.Minor, "no compute capability")
	}},

	// aclrtGetSocName's NULL is a failure of Properties, with a name.
	"soc_name_null": {env: []string{"FAKE_ACL_SOC_NULL=1"}, check: func(t *testing.T, b *driver.Backend) {
		require.True(t, b.Available().Available)
		_, err := b.Properties(0)
		var e *clib.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "ACL_ERROR_FAILURE", e.Name)
		assert.Contains(t, err.Error(), "aclrtGetSocName(device 0)")
	}},

	// A count past 2^31-1 (aclrtGetDeviceCount's is unsigned) is refused as
	// too many, not read as negative.
	"count_2^32-1": {env: []string{"FAKE_ACL_RAW_COUNT=4294967295"}, check: func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		assert.False(t, r.Available)
		_, err := b.DeviceCount()
		assert.ErrorIs(t, err, driver.ErrTooManyDevices)
		assert.Contains(t, r.Reason, "2147483647")
	}},

	// A CANN older than 8.5 lacks aclrtGetDeviceInfo: not available, named.
	"before_8.5": {defines: []string{"-DFAKE_NO_DEVICE_INFO"}, check: func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		assert.False(t, r.Available)
		_, err := b.DeviceCount()
		assert.ErrorIs(t, err, driver.ErrMissingSymbol)
		assert.Contains(t, r.Reason, "aclrtGetDeviceInfo")
	}},

	// The runtime's own "no device" at init: its name in the reason, the
	// hint at ASCEND_RT_VISIBLE_DEVICES.
	"init_no_device": {env: []string{"FAKE_ACL_INIT_RESULT=207004"}, check: func(t *testing.T, b *driver.Backend) {
		r := b.Available()
		assert.False(t, r.Available)
		assert.Contains(t, r.Reason, "aclInit(0) failed: ACL_ERROR_RT_NO_DEVICE (207004)")
		assert.Contains(t, r.Reason, VisibleDevicesEnv)
		_, err := b.DeviceCount()
		assert.ErrorIs(t, err, driver.ErrNoDevice)
	}},

	// Copies through aclrtMemcpy's kinds, both ways, on both devices.
	"copies": {check: func(t *testing.T, b *driver.Backend) {
		for d := range 2 {
			p, err := b.Alloc(d, 16)
			require.NoError(t, err)
			in := []byte("0123456789abcdef")
			require.NoError(t, b.CopyHtoD(d, p, in))
			out := make([]byte, 16)
			require.NoError(t, b.CopyDtoH(d, out, p))
			assert.Equal(t, in, out)
			require.NoError(t, b.Free(d, p))
		}
		_, err := b.LoadModule(0, []byte("anything"), "x")
		assert.ErrorIs(t, err, device.ErrNotSupported)
		assert.ErrorContains(t, err, "needed for modules")
	}},
}

// setDeviceCalls reads the fake's count of aclrtSetDevice calls.
func setDeviceCalls(t *testing.T) func(int) int {
	lib, err := purego.Dlopen(os.Getenv(EnvVar), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	var f func(int32) int32
	purego.RegisterLibFunc(&f, lib, "fake_acl_set_device_calls")
	return func(d int) int { return int(f(int32(d))) }
}

func TestACL(t *testing.T) {
	if dltest.IsChild(t) {
		name := os.Getenv(aclCaseEnv)
		c, ok := aclCases[name]
		require.True(t, ok, "unknown case %q", name)
		c.check(t, New())
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libascendcl")
	}
	for name, c := range aclCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := suite.Build(t, c.defines...)
			env := append([]string{aclCaseEnv + "=" + name, EnvVar + "=" + p}, c.env...)
			out := dltest.MustChild(t, "TestACL", env...)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}
