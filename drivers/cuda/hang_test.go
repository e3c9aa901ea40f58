package cuda

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// TestPresenceHangs: a management library that never returns from its init,
// its count or a device's name leaves the presence tier's answer "not
// available" within the init timeout (FLAGOS_PROBE_TIMEOUT), naming the
// step, its thread left behind, as the exact tier does for a driver's init;
// it once blocked the host forever. Each case runs in a child process (the
// fake stays loaded, and its stuck thread with it).
func TestPresenceHangs(t *testing.T) {
	if dltest.IsChild(t) {
		presenceHangsChild(t)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake NVML")
	}
	lib := fakeNVML.Build(t, dltest.PrivateDir(t), "")
	for _, tc := range []struct{ call, step string }{
		{"nvmlInit_v2", "NVML: init"},
		{"nvmlDeviceGetCount_v2", "NVML: device count"},
		{"nvmlDeviceGetName", "NVML: device 0"},
	} {
		t.Run(tc.call, func(t *testing.T) {
			t.Parallel()
			out := dltest.MustChild(t, "TestPresenceHangs", NVMLEnvVar+"="+lib, "FAKE_NVML_HANG="+tc.call,
				"HANG_STEP="+tc.step, "FLAGOS_LIBCUDA_PATH="+filepath.Join(dltest.PrivateDir(t), "libcuda.so.1"))
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

func presenceHangsChild(t *testing.T) {
	b := driver.New(Vendor(), driver.WithInitTimeout(300*time.Millisecond),
		driver.WithPresence(presence.NewEnv(presence.WithRoot(t.TempDir()))))
	start := time.Now()
	r := b.Available()
	took := time.Since(start)
	assert.False(t, r.Available)
	assert.Contains(t, r.Reason, "cuda: presence: "+os.Getenv("HANG_STEP")+" did not return within 300ms (FLAGOS_PROBE_TIMEOUT)")
	assert.Contains(t, r.Reason, "its thread is left behind")
	// The bound is the timeout: generous for a loaded machine, never the
	// hang (the fake sleeps for ever).
	assert.Less(t, took, 10*time.Second)
	t.Logf("answered in %s: %s", took, r.Reason)
}
