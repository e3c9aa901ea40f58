package hip

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// A missing /dev/kfd is said to be missing; "not a character device" is kept
// for something else standing in its place.
func TestDevKFDProblem(t *testing.T) {
	var st unix.Stat_t
	if err := unix.Stat("/dev/null", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Skip("/dev/null is not a character device here: the test stands on it")
	}
	kfdGPU := func(root string) {
		dir := filepath.Join(root, kfdNodes, "1")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "properties"), []byte("simd_count 304\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "name"), []byte("gfx90a\n"), 0o644))
	}
	dev := func(root string) string {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
		return filepath.Join(root, "dev", "kfd")
	}

	missing := t.TempDir()
	kfdGPU(missing)
	dev(missing)
	file := t.TempDir()
	kfdGPU(file)
	require.NoError(t, os.WriteFile(dev(file), []byte("not a device"), 0o644))
	dangling := t.TempDir()
	require.NoError(t, os.Symlink("/nonexistent/kfd", dev(dangling)))
	char := t.TempDir()
	kfdGPU(char)
	require.NoError(t, os.Symlink("/dev/null", dev(char)))

	for _, tt := range []struct {
		name, root, problem string
	}{
		{"missing", missing, "is missing"},
		{"dangling symlink", dangling, "is missing"},
		{"a file", file, "is not a character device"},
		{"a character device", char, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := presence.NewEnv(presence.WithRoot(tt.root))
			assert.Equal(t, tt.problem, e.NodeProblem("/dev/kfd"))
			r := nodes(e)
			if tt.problem == "" {
				assert.NotContains(t, r.Reason, "/dev/kfd")
				return
			}
			assert.Contains(t, r.Reason, filepath.Join(tt.root, "dev/kfd")+" "+tt.problem+" here: no AMD/Hygon GPU is usable")
			if tt.problem == "is missing" {
				assert.NotContains(t, r.Reason, "character device", "a missing node is not called something else")
			}
			if tt.root != dangling {
				k := KFD(e)
				assert.ErrorIs(t, k.Err, presence.ErrNoDeviceNode)
				assert.Contains(t, k.Reason, "KFD lists 1 GPU but "+filepath.Join(tt.root, "dev/kfd")+" "+tt.problem+" here")
			}
		})
	}
}
