package presencetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Tree is a fake filesystem root for presence.WithRoot: files, character
// devices (symlinks to /dev/null, which stat follows as the runtimes' open
// does) and symlinks, under a fresh temporary folder.
type Tree struct {
	t    testing.TB
	Root string // the folder to hand presence.WithRoot
}

// NewTree makes an empty root. It skips t where /dev/null is not a
// character device (the device nodes stand on it).
func NewTree(t testing.TB) *Tree {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/dev/null", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Skip("/dev/null is not a character device here: the device-node tests stand on it")
	}
	return &Tree{t: t, Root: t.TempDir()}
}

// NewBigTree is NewTree for a root that will hold thousands of entries (a
// topology past the device bound): in memory (/dev/shm) where the machine
// has it, where making and removing 8000 folders takes a tenth of the
// time it takes on a disk; else where NewTree puts it.
func NewBigTree(t testing.TB) *Tree {
	t.Helper()
	tr := NewTree(t)
	if dir, err := os.MkdirTemp("/dev/shm", "presencetest-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(dir) })
		tr.Root = dir
	}
	return tr
}

// File writes p (relative to the root) with content, making its folders.
func (tr *Tree) File(p, content string) *Tree {
	tr.t.Helper()
	full := filepath.Join(tr.Root, p)
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(tr.t, os.WriteFile(full, []byte(content), 0o644))
	return tr
}

// Char makes p a character device.
func (tr *Tree) Char(p string) *Tree { return tr.Link(p, "/dev/null") }

// Link makes p a symlink to target.
func (tr *Tree) Link(p, target string) *Tree {
	tr.t.Helper()
	full := filepath.Join(tr.Root, p)
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(tr.t, os.Symlink(target, full))
	return tr
}

// Path is p under the root.
func (tr *Tree) Path(p string) string { return filepath.Join(tr.Root, p) }
