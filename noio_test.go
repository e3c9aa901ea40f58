package flagshim_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/plugins/nvshmem"
	"github.com/flagos-ai/flagshim/probe"

	// Everything else of the module that a program may link.
	_ "github.com/flagos-ai/flagshim/alias"
	_ "github.com/flagos-ai/flagshim/cli"
	_ "github.com/flagos-ai/flagshim/drivers/cuda"
	_ "github.com/flagos-ai/flagshim/drivers/flagos"
	_ "github.com/flagos-ai/flagshim/drivers/musa"
	_ "github.com/flagos-ai/flagshim/phases"
)

// TestImportDoesNoIO proves that linking every package of flagshim opens no
// library and runs no probe. The fake libraries append "load" to FAKE_LOG
// from their ELF constructor, so any dlopen of them leaves a trace. A control
// step then asks for each and checks that the trace appears, so the test
// cannot pass by not noticing.
func TestImportDoesNoIO(t *testing.T) {
	if !dltest.IsChild(t) {
		buildFakes(t)
		dir := dltest.PrivateDir(t)
		nvshmemFake := filepath.Join(dir, "libnvshmem_host.so.3")
		raw, err := os.ReadFile(fakes.cuda)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(nvshmemFake, raw, 0o755))
		dltest.MustChild(t, t.Name(),
			"FAKE_LOG="+filepath.Join(dir, "loads.log"),
			"FLAGOS_LIBCUDA_PATH="+fakes.cuda,
			"FLAGOS_LIBMUSA_PATH="+fakes.musa,
			nvshmem.EnvVar+"="+nvshmemFake,
		)
		return
	}
	logFile := os.Getenv("FAKE_LOG")
	loads := func() int {
		b, err := os.ReadFile(logFile)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(b), "load")
	}

	// All packages are linked and their init functions have run.
	assert.Zero(t, loads(), "importing opened a driver library")
	assert.Empty(t, probe.Default.Names(), "importing registered a probe")
	maps, err := os.ReadFile("/proc/self/maps")
	if err == nil {
		assert.NotContains(t, string(maps), "libcuda.so")
		assert.NotContains(t, string(maps), "libmusa.so")
	}

	// Init registers the drivers but still opens nothing ...
	_, err = flagshim.Init(context.Background())
	require.NoError(t, err)
	b, err := device.Default.Lookup(device.MUSA)
	require.NoError(t, err)
	// ... until something asks. (The alias step asked cuda and flagos, so
	// the libraries are open by now: the control that the trace works.)
	assert.True(t, b.Available().Available)
	assert.Equal(t, 2, loads(), "both fakes were opened once each on first use")

	_, err = nvshmem.Open()
	require.Error(t, err, "the fake is no NVSHMEM library")
	assert.Equal(t, 3, loads(), "the NVSHMEM plugin opens its library only when asked")
}
