//go:build gpu || nvshmem_raw

package nvshmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// fixture reads one file built by scripts/nvshmem-build.sh; a missing one
// fails the test with the command that builds it.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	dir := os.Getenv(FixturesEnv)
	if dir == "" {
		dir = dltest.Abs(t, filepath.Join("testdata", "build"))
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoErrorf(t, err, "run scripts/nvshmem-build.sh [dir] on the GPU machine first (and set %s=dir)", FixturesEnv)
	return b
}

// runGPUChild re-executes the test binary to run test name alone, passing on
// the variables the GPU machine needs (dltest scrubs FLAGOS_*,
// LD_LIBRARY_PATH and CUDA_VISIBLE_DEVICES), and checks what the process
// printed on stdout and stderr: nothing about a missing symbol or an
// uninitialized NVSHMEM outside the control call.
func runGPUChild(t *testing.T, name string) string {
	t.Helper()
	var env []string
	for _, k := range []string{EnvVar, "FLAGOS_LIBCUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", FixturesEnv} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if os.Getenv(FixturesEnv) == "" {
		env = append(env, FixturesEnv+"="+dltest.Abs(t, filepath.Join("testdata", "build")))
	}
	out := dltest.MustChild(t, name, env...)
	t.Logf("child output:\n%s", out)
	before, rest, ok := strings.Cut(out, controlStart)
	require.True(t, ok, "the child did not reach the control call")
	control, after, ok := strings.Cut(rest, controlEnd)
	require.True(t, ok, "the child did not finish the control call")
	for _, part := range []string{before, after} {
		assert.NotContains(t, part, "named symbol not found", "NVSHMEM complained outside the control call")
		assert.NotContains(t, part, "NVSHMEM is not initialized")
	}
	assert.Contains(t, control, "named symbol not found", "the control call did hit the failure the hook avoids")
	return out
}
