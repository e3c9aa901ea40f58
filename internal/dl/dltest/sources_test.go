package dltest

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSources: embedded files are written out whole, under a folder named
// by their contents: the same files are the same folder (so a build's
// cache key is stable across runs), other contents another folder, and the
// folder is readable by the compiler but writable by no one else.
func TestSources(t *testing.T) {
	a := fstest.MapFS{"fake.h": {Data: []byte("#define A 1\n")}, "sub/x.c": {Data: []byte("int x;\n")}}
	dir := Sources(t, a)
	require.True(t, filepath.IsAbs(dir))
	b, err := os.ReadFile(filepath.Join(dir, "fake.h"))
	require.NoError(t, err)
	assert.Equal(t, "#define A 1\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "sub", "x.c"))
	require.NoError(t, err)
	assert.Equal(t, "int x;\n", string(b))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Zero(t, st.Mode().Perm()&0o022, "no one else may write it")

	if cacheDir() == "" {
		t.Skip("the fixtures' cache is off: each call writes a private folder of the test's, nothing more to test")
	}
	assert.Equal(t, dir, Sources(t, a), "the same files: the same folder")
	other := Sources(t, fstest.MapFS{"fake.h": {Data: []byte("#define A 2\n")}, "sub/x.c": {Data: []byte("int x;\n")}})
	assert.NotEqual(t, dir, other, "other contents: another folder")
	assert.Equal(t, cacheDir(), filepath.Dir(dir), "in the fixtures' cache")
}
