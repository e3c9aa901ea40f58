package dl

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// fakeFS is a file system in a map, for the chain check's logic.
type fakeFS struct {
	files  map[string]fakeFile
	lstats int
}

type fakeFile struct {
	st     fileStat
	target string // for links
}

func (f *fakeFS) Lstat(p string) (fileStat, error) {
	f.lstats++
	e, ok := f.files[p]
	if !ok {
		return fileStat{}, &os.PathError{Op: "lstat", Path: p, Err: unix.ENOENT}
	}
	return e.st, nil
}

func (f *fakeFS) Readlink(p string) (string, error) {
	e, ok := f.files[p]
	if !ok || !e.st.isLink() {
		return "", &os.PathError{Op: "readlink", Path: p, Err: unix.EINVAL}
	}
	return e.target, nil
}

const me = 1000 // the effective user of the fake tests

// parseFakeFS reads lines "path kind mode uid gid [target]" (kind d, f or
// l; mode octal permission bits); it is lenient, for the fuzzer.
func parseFakeFS(desc string) *fakeFS {
	f := &fakeFS{files: map[string]fakeFile{}}
	for _, line := range strings.Split(desc, "\n") {
		w := strings.Fields(line)
		if len(w) < 5 {
			continue
		}
		mode, err1 := strconv.ParseUint(w[2], 8, 32)
		uid, err2 := strconv.ParseUint(w[3], 10, 32)
		gid, err3 := strconv.ParseUint(w[4], 10, 32)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		typ := map[string]uint32{"d": unix.S_IFDIR, "f": unix.S_IFREG, "l": unix.S_IFLNK}[w[1]]
		e := fakeFile{st: fileStat{Mode: typ | uint32(mode)&0o7777, Uid: uint32(uid), Gid: uint32(gid)}}
		if len(w) > 5 {
			e.target = w[5]
		}
		f.files[w[0]] = e
	}
	return f
}

const baseFS = `/ d 755 0 0
/usr d 755 0 0
/usr/lib d 755 0 0
/usr/lib/libx.so.1 f 644 0 0
/tmp d 1777 0 0
/home d 755 0 0
/home/me d 700 1000 1000
/home/me/lib d 755 1000 1000
/home/me/lib/libx.so.1 f 755 1000 1000
`

func TestCheckChainFake(t *testing.T) {
	private := func(gid, uid uint32) bool { return gid == 1000 && uid == 1000 }
	for _, c := range []struct {
		name, extra, path string
		want              string // the resolved path, or "" for an error
		err               error
		msg               []string
	}{
		{name: "system library", path: "/usr/lib/libx.so.1", want: "/usr/lib/libx.so.1"},
		{name: "own folder", path: "/home/me/lib/libx.so.1", want: "/home/me/lib/libx.so.1"},
		{name: "dots and slashes", path: "//usr/./lib/../lib//libx.so.1", want: "/usr/lib/libx.so.1"},
		{name: "world-writable file", extra: "/usr/lib/libx.so.1 f 666 0 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath, msg: []string{"file /usr/lib/libx.so.1 (mode 0666) is writable by anyone", "chmod o-w /usr/lib/libx.so.1"}},
		{name: "world-writable folder", extra: "/usr/lib d 777 0 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath, msg: []string{"folder /usr/lib (mode 0777) is writable by anyone", "chmod o-w /usr/lib", "only root can write"}},
		{name: "world-writable grandparent", extra: "/usr d 777 0 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath, msg: []string{"folder /usr (mode 0777)", "(checking /usr/lib/libx.so.1)"}},
		{name: "world-writable root", extra: "/ d 777 0 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath},
		{name: "sticky tmp, own entry", extra: "/tmp/me d 700 1000 1000\n/tmp/me/libx.so.1 f 755 1000 1000", path: "/tmp/me/libx.so.1", want: "/tmp/me/libx.so.1"},
		{name: "sticky tmp, root's entry", extra: "/tmp/r d 755 0 0\n/tmp/r/libx.so.1 f 755 0 0", path: "/tmp/r/libx.so.1", want: "/tmp/r/libx.so.1"},
		{name: "sticky tmp, another user's entry", extra: "/tmp/eve d 755 1001 1001\n/tmp/eve/libx.so.1 f 755 0 0", path: "/tmp/eve/libx.so.1", err: ErrUnsafePath, msg: []string{"sticky", "/tmp/eve belongs to uid 1001"}},
		{name: "sticky tmp, a file directly in it", extra: "/tmp/libx.so.1 f 755 1000 1000", path: "/tmp/libx.so.1", want: "/tmp/libx.so.1"},
		{name: "sticky tmp, another user's link", extra: "/tmp/l l 777 1001 1001 /usr/lib/libx.so.1", path: "/tmp/l", err: ErrUnsafePath},
		{name: "sticky but not the last word: a file is never sticky-safe", extra: "/usr/lib/libx.so.1 f 1666 0 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath},
		{name: "group-writable by root's group", extra: "/usr/lib d 775 0 0", path: "/usr/lib/libx.so.1", want: "/usr/lib/libx.so.1"},
		{name: "group-writable by another group", extra: "/usr/lib d 775 0 50", path: "/usr/lib/libx.so.1", err: ErrUnsafePath, msg: []string{"writable by group 50", "chmod g-w /usr/lib"}},
		{name: "group-writable by the owner's private group", extra: "/home/me/lib d 775 1000 1000", path: "/home/me/lib/libx.so.1", want: "/home/me/lib/libx.so.1"},
		{name: "group-writable file, another group", extra: "/home/me/lib/libx.so.1 f 775 1000 100", path: "/home/me/lib/libx.so.1", err: ErrUnsafePath},
		{name: "another user's folder", extra: "/home/eve d 755 1001 1001\n/home/eve/libx.so.1 f 755 0 0", path: "/home/eve/libx.so.1", err: ErrUnsafePath, msg: []string{"folder /home/eve belongs to uid 1001, neither root nor this process's user (uid 1000)"}},
		{name: "another user's file", extra: "/usr/lib/libx.so.1 f 755 1001 0", path: "/usr/lib/libx.so.1", err: ErrUnsafePath, msg: []string{"file /usr/lib/libx.so.1 belongs to uid 1001"}},
		{name: "relative link", extra: "/usr/lib/libx.so l 777 0 0 libx.so.1", path: "/usr/lib/libx.so", want: "/usr/lib/libx.so.1"},
		{name: "absolute link", extra: "/lib l 777 0 0 /usr/lib", path: "/lib/libx.so.1", want: "/usr/lib/libx.so.1"},
		{name: "link with ..", extra: "/home/me/lib/sys l 777 1000 1000 ../../../usr/lib/libx.so.1", path: "/home/me/lib/sys", want: "/usr/lib/libx.so.1"},
		{name: "link hop through a world-writable folder", extra: "/usr/lib/libx.so l 777 0 0 /tmp/ww/hop\n/tmp/ww d 777 0 0\n/tmp/ww/hop l 777 0 0 /usr/lib/libx.so.1", path: "/usr/lib/libx.so", err: ErrUnsafePath,
			msg: []string{"folder /tmp/ww (mode 0777) is writable by anyone", "via /usr/lib/libx.so -> /tmp/ww/hop"}},
		{name: "link owned by another user", extra: "/usr/lib/libx.so l 777 1001 0 libx.so.1", path: "/usr/lib/libx.so", err: ErrUnsafePath, msg: []string{"symlink /usr/lib/libx.so belongs to uid 1001"}},
		{name: "link to a world-writable file", extra: "/usr/lib/libx.so l 777 0 0 /tmp/bad.so\n/tmp/bad.so f 777 0 0", path: "/usr/lib/libx.so", err: ErrUnsafePath},
		{name: "link loop", extra: "/usr/lib/a l 777 0 0 b\n/usr/lib/b l 777 0 0 a", path: "/usr/lib/a", err: ErrOpen, msg: []string{"more than 40 symbolic links"}},
		{name: "empty link", extra: "/usr/lib/a l 777 0 0", path: "/usr/lib/a", err: ErrOpen},
		{name: "missing", path: "/usr/lib/libnope.so.1", err: fs.ErrNotExist},
		{name: "missing below an unsafe folder", extra: "/usr/lib d 777 0 0", path: "/usr/lib/libnope.so.1", err: fs.ErrNotExist},
		{name: "file in the middle", path: "/usr/lib/libx.so.1/x", err: ErrOpen, msg: []string{"is a file, not a folder"}},
		{name: "relative", path: "usr/lib/libx.so.1", err: ErrRelativePath},
		{name: "root itself", path: "/", err: ErrOpen},
		{name: "NUL", path: "/usr/lib/libx.so.1\x00", err: ErrOpen},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := parseFakeFS(baseFS + c.extra)
			got, err := checkChain(fsys, trust{euid: me, privateGroup: private}, c.path)
			if c.err == nil {
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, c.err)
			assert.Empty(t, got)
			for _, m := range c.msg {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestCheckChainHops(t *testing.T) {
	var b strings.Builder
	b.WriteString(baseFS)
	for i := 0; i < maxHops; i++ {
		fmt.Fprintf(&b, "/usr/lib/l%d l 777 0 0 l%d\n", i, i+1)
	}
	fmt.Fprintf(&b, "/usr/lib/l%d l 777 0 0 libx.so.1\n", maxHops)
	fsys := parseFakeFS(b.String())
	tr := trust{euid: me}
	got, err := checkChain(fsys, tr, "/usr/lib/l1")
	require.NoError(t, err, "%d hops are allowed", maxHops)
	assert.Equal(t, "/usr/lib/libx.so.1", got)
	_, err = checkChain(fsys, tr, "/usr/lib/l0")
	assert.ErrorIs(t, err, ErrOpen, "%d hops are not", maxHops+1)
	assert.ErrorIs(t, err, unix.ELOOP)
}

// TestCheckChainRealTempDir: the folders tests build fakes in pass the
// check on this machine (t.TempDir is under a sticky /tmp whose entry is
// the user's), links included.
func TestCheckChainRealTempDir(t *testing.T) {
	tr := trust{euid: uint32(unix.Geteuid()), privateGroup: (&hostAccounts{euid: uint32(unix.Geteuid())}).privateTo}
	for _, dir := range []string{t.TempDir(), dltest.PrivateDir(t)} {
		f := filepath.Join(dir, "libx.so.1")
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o755))
		link := filepath.Join(dir, "libx.so")
		require.NoError(t, os.Symlink("libx.so.1", link))
		got, err := checkChain(osFS{}, tr, link)
		require.NoError(t, err, "the chain of %s", dir)
		real, err := filepath.EvalSymlinks(f)
		require.NoError(t, err)
		assert.Equal(t, real, got)
	}
}

// TestCheckChainRealOwners needs root to hand files to another user and
// group.
func TestCheckChainRealOwners(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("needs root to chown fixtures to another user (the fake tests cover the rule)")
	}
	tr := trust{euid: 0}
	dir := dltest.PrivateDir(t)
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	f := filepath.Join(sub, "libx.so.1")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o755))
	_, err := checkChain(osFS{}, tr, f)
	require.NoError(t, err)

	require.NoError(t, os.Chown(sub, 65534, 0))
	_, err = checkChain(osFS{}, tr, f)
	assert.ErrorIs(t, err, ErrUnsafePath)
	assert.Contains(t, err.Error(), "belongs to uid 65534")
	require.NoError(t, os.Chown(sub, 0, 0))

	require.NoError(t, os.Chmod(sub, 0o775))
	_, err = checkChain(osFS{}, tr, f)
	assert.NoError(t, err, "group-writable by root's group")
	require.NoError(t, os.Chown(sub, 0, 65534))
	_, err = checkChain(osFS{}, tr, f)
	assert.ErrorIs(t, err, ErrUnsafePath)
	assert.Contains(t, err.Error(), "writable by group 65534")
}

// FuzzCheckChain drives the check over arbitrary paths and fake file
// systems (modes, owners, links): it must never panic or loop, and whatever
// it accepts must pass a plain walk of the resolved path.
func FuzzCheckChain(f *testing.F) {
	f.Add("/usr/lib/libx.so.1", "")
	f.Add("/usr/lib/libx.so", "/usr/lib/libx.so l 777 0 0 /tmp/ww/hop\n/tmp/ww d 777 0 0\n/tmp/ww/hop l 777 0 0 /usr/lib/libx.so.1")
	f.Add("/usr/lib/a", "/usr/lib/a l 777 0 0 b\n/usr/lib/b l 777 0 0 ../lib/a")
	f.Add("/tmp/me/libx.so.1", "/tmp/me d 700 1000 1000\n/tmp/me/libx.so.1 f 755 1000 1000")
	f.Add("/home/me/lib/libx.so.1", "/home/me/lib d 775 1000 1000")
	f.Fuzz(func(t *testing.T, path, extra string) {
		fsys := parseFakeFS(baseFS + extra)
		tr := trust{euid: me, privateGroup: func(gid, uid uint32) bool { return gid == 1000 && uid == 1000 }}
		got, err := checkChain(fsys, tr, path)
		if limit := (maxHops + 2) * (len(path) + len(extra) + 2); fsys.lstats > limit {
			t.Fatalf("%d lstat calls", fsys.lstats)
		}
		if err != nil {
			if got != "" {
				t.Fatalf("an error with a path %q", got)
			}
			return
		}
		if !strings.HasPrefix(got, "/") || filepath.Clean(got) != got || got == "/" {
			t.Fatalf("resolved %q", got)
		}
		// A plain walk of the resolved path: no links, every rule holds.
		parent, ok := fsys.files["/"]
		if !ok || !tr.ownerOK(parent.st.Uid) {
			t.Fatalf("/ is not safe but %q passed", path)
		}
		cur := ""
		for _, name := range components(got) {
			cur += "/" + name
			e, ok := fsys.files[cur]
			if !ok || e.st.isLink() || !tr.ownerOK(e.st.Uid) {
				t.Fatalf("%s on the resolved path %q: %+v", cur, got, e)
			}
			if tr.writers(parent.st) != "" && !(parent.st.sticky() && tr.ownerOK(e.st.Uid)) {
				t.Fatalf("the folder above %s is writable, yet %q passed", cur, path)
			}
			parent = e
		}
		if tr.writers(parent.st) != "" {
			t.Fatalf("%q is writable, yet passed", got)
		}
	})
}
