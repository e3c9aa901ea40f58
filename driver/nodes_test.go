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

// FindLibrary says when the exact tier would not load a library it finds
// (NoDevice): what lets a host skip asking a child that could only find
// no device (flagshim.WithIsolatedFallback).
func TestFindLibraryNoDevice(t *testing.T) {
	var src []byte // a shared library of this machine's architecture: its C library
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib/libc.so.6"} {
		if b, err := os.ReadFile(p); err == nil {
			src = b
			break
		}
	}
	if src == nil {
		t.Skip("no libc.so.6 in the usual folders to stand for a driver library")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libt.so.1"), src, 0o755))
	v := testVendor(device.HIP, "T_")
	v.Library.Dirs, v.Library.Sonames, v.Library.EnvVar = []string{dir}, []string{"libt.so.1"}, "FLAGOS_LIBTEST_PATH"

	v.Library.Nodes = []string{filepath.Join(dir, "kfd")}
	info := New(v, WithGetenv(func(string) string { return "" })).FindLibrary()
	require.NoError(t, info.Err)
	assert.Contains(t, info.NoDevice, "kfd is missing here")
	assert.Contains(t, info.NoDevice, "libt.so.1 was found and not loaded")

	v.Library.Nodes = []string{"/dev/null"}
	info = New(v, WithGetenv(func(string) string { return "" })).FindLibrary()
	require.NoError(t, info.Err)
	assert.Empty(t, info.NoDevice, "its node is there: the exact tier loads it")
}
