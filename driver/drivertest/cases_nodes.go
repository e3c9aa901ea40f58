package drivertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// Library.Nodes: a searched library whose device nodes are all missing is
// found and checked but never loaded; a node that is there, or an
// override, loads it as usual.

// nodes builds the fake where the search finds it (LD_LIBRARY_PATH, or the
// override) and names two device nodes in a private folder: neither exists,
// or the second is a link to /dev/null (a character device; the runtime's
// open() follows links too).
func nodes(present, override bool) func(*testing.T, *Suite) []string {
	return func(t *testing.T, s *Suite) []string {
		p := s.Build(t)
		dir := dltest.PrivateDir(t)
		kfd := filepath.Join(dir, "kfd")
		if present {
			require.NoError(t, os.Symlink("/dev/null", kfd))
		}
		env := []string{"LD_LIBRARY_PATH=" + filepath.Dir(p), libEnv + "=" + p,
			nodesEnv + "=" + filepath.Join(dir, "absent") + ":" + kfd}
		if override {
			env = append(env, s.envVar()+"="+p)
		}
		return env
	}
}

func nodeMissing(t *testing.T, s *Suite, b *driver.Backend) {
	reason := notAvailable(t, b, driver.ErrNoDevice)
	lib := os.Getenv(libEnv)
	for _, n := range strings.Split(os.Getenv(nodesEnv), ":") {
		assert.Contains(t, reason, n+" is missing", "the reason names each node looked for, and what is wrong with it")
	}
	assert.NotContains(t, reason, "character device", "missing nodes are not called something else")
	assert.Contains(t, reason, lib+" was found and not loaded")
	assert.Contains(t, reason, s.envVar(), "the reason says how to load a library anyway")
	assert.Contains(t, reason, s.sym(driver.OpInit))
	assert.False(t, loaded(lib), "the library must not be mapped: its constructors would run")
	assert.NotEmpty(t, b.Describe().Attempts, "the search is still reported")
	assert.Empty(t, b.Describe().Library, "nothing was opened")
	dryMatches(t, s, b)
	assert.False(t, loaded(lib), "nor by the dry answer")
}

func nodeLoads(t *testing.T, s *Suite, b *driver.Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	assert.Equal(t, os.Getenv(libEnv), b.Describe().Library)
	assert.True(t, loaded(os.Getenv(libEnv)), "the check sees a loaded library (so its false above means something)")
	dryMatches(t, s, b)
}

// loaded reports whether the process has mapped the library at path,
// without loading it.
func loaded(path string) bool {
	_, err := dl.Loaded(dl.Spec{Name: filepath.Base(path), Sonames: []string{filepath.Base(path)}})
	return err == nil
}
