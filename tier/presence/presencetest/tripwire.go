package presencetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

const tripwireLogEnv = "FAKE_TRIPWIRE_LOG"

// Tripwire builds a libcuda.so.1 that records being loaded
// (tripwire_libcuda.c, see Include) and returns the child's environment
// that puts it first on LD_LIBRARY_PATH: a Case.Setup for a case whose
// check calls NoDriverLoaded.
func Tripwire(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(dltest.PrivateDir(t), "cuda")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	dltest.BuildLib(t, filepath.Join(dir, "libcuda.so.1"), "libcuda.so.1", []string{filepath.Join(Include(t), "tripwire_libcuda.c")})
	return []string{"LD_LIBRARY_PATH=" + dir, tripwireLogEnv + "=" + filepath.Join(dltest.PrivateDir(t), "tripwire.log")}
}

// NoDriverLoaded checks, in a child that Tripwire set up, that nothing the
// process did so far loaded a driver: the tripwire libcuda did not run, and
// neither libcuda nor libmusa is mapped. Then, as the control, it loads
// libcuda.so.1 itself and checks that the tripwire saw it.
func NoDriverLoaded(t *testing.T) {
	t.Helper()
	log := os.Getenv(tripwireLogEnv)
	require.NotEmpty(t, log, "the case's Setup must be Tripwire")
	_, err := os.Stat(log)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the tripwire libcuda was loaded: %v", err)
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	assert.NotContains(t, string(maps), "libcuda", "libcuda is mapped")
	assert.NotContains(t, string(maps), "libmusa", "libmusa is mapped")
	// The control: loading libcuda is seen.
	_, err = purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "loaded", strings.TrimSpace(string(b)))
}
