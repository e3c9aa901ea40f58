package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
)

// Without its device node the library is not loaded, and the reason says
// whether the node is missing or something else stands in its place.
func TestWithoutNodesSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "kfd")
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tt := range []struct {
		nodes []string
		want  string
	}{
		{[]string{missing}, missing + " is missing here, so tInit could only find none"},
		{[]string{file}, file + " is not a character device here"},
		{[]string{missing, file}, missing + " is missing, and " + file + " is not a character device here"},
	} {
		v := testVendor(device.HIP, "T_")
		v.Library.Nodes = tt.nodes
		v.Library.EnvVar = "FLAGOS_LIBTEST_PATH"
		b := New(v, WithGetenv(func(string) string { return "" }))
		ls, ok := b.withoutNodes()
		require.True(t, ok)
		assert.Contains(t, ls.reason, "hip: no device: "+tt.want)
		assert.ErrorIs(t, ls.err, ErrNoDevice)
		if len(tt.nodes) == 1 && tt.nodes[0] == missing {
			assert.NotContains(t, ls.reason, "character device")
		}
	}
	v := testVendor(device.HIP, "T_")
	v.Library.Nodes = []string{missing, "/dev/null"}
	_, ok := New(v, WithGetenv(func(string) string { return "" })).withoutNodes()
	assert.False(t, ok, "one character device among the nodes is enough")
}
