package dl

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHops bounds the symbolic links followed on one path (the kernel's
// MAXSYMLINKS is 40 too).
const maxHops = 40

// fileStat is what the chain check needs to know of one path component.
type fileStat struct {
	Mode     uint32 // st_mode: unix.S_IFMT type bits and permission bits
	Uid, Gid uint32
	Dev, Ino uint64 // which file it is: the loader opens exactly this one (loadChecked)
}

func (s fileStat) typ() uint32  { return s.Mode & unix.S_IFMT }
func (s fileStat) perm() uint32 { return s.Mode & 0o7777 }
func (s fileStat) isDir() bool  { return s.typ() == unix.S_IFDIR }
func (s fileStat) isLink() bool { return s.typ() == unix.S_IFLNK }
func (s fileStat) sticky() bool { return s.Mode&unix.S_ISVTX != 0 }
func (s fileStat) kind() string {
	switch {
	case s.isDir():
		return "folder"
	case s.isLink():
		return "symlink"
	default:
		return "file"
	}
}

// statFS is the file system as the chain check sees it. osFS is the real
// one; tests and the fuzzer drive a fake, so the check's logic never needs
// the real disk.
type statFS interface {
	Lstat(path string) (fileStat, error)
	Readlink(path string) (string, error)
}

// osFS is the real file system, through golang.org/x/sys/unix.
type osFS struct{}

func (osFS) Lstat(p string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileStat{}, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	return fileStat{Mode: uint32(st.Mode), Uid: st.Uid, Gid: st.Gid, Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

func (osFS) Readlink(p string) (string, error) { return os.Readlink(p) }

// trust says whose hand on a file is harmless: root's, the effective user's,
// and a group's when it is the private group of the component's owner.
type trust struct {
	euid uint32
	// privateGroup reports whether gid has exactly one member, the user
	// uid (a user-private group, as RHEL and Fedora create). nil: no group
	// other than root's is trusted.
	privateGroup func(gid, uid uint32) bool
}

func (t trust) ownerOK(uid uint32) bool { return uid == 0 || uid == t.euid }

// writers says who besides the owner may write st ("" when nobody).
func (t trust) writers(st fileStat) string {
	if st.Mode&0o002 != 0 {
		return "anyone"
	}
	if st.Mode&0o020 != 0 && st.Gid != 0 && (t.privateGroup == nil || !t.privateGroup(st.Gid, st.Uid)) {
		return fmt.Sprintf("group %d", st.Gid)
	}
	return ""
}

// checkChain decides whether the file at path, every folder from / down to
// it and every hop of the symbolic links on the way can be changed only by
// root or the effective user (OpenSSH's rule for key files, extended to
// links). A component is unsafe when its owner is neither root nor the
// effective user, or when someone else may write it (world-writable, or
// group-writable by a group other than root's or the owner's private one),
// except a sticky folder (such as /tmp) whose next entry on the path belongs
// to root or the effective user. Links are followed here, one hop at a time
// (relative targets against the link's folder, at most maxHops), so that
// every folder a hop passes through is checked as well.
//
// It returns the path with every link resolved. Errors wrap ErrUnsafePath
// (someone else can change the chain), ErrRelativePath (path is not
// absolute) or ErrOpen (a component is missing, not a folder, or the links
// loop); a missing component's error also matches fs.ErrNotExist.
func checkChain(fsys statFS, t trust, path string) (string, error) {
	real, _, err := checkChainStat(fsys, t, path)
	return real, err
}

// checkChainStat is checkChain that also returns what the check saw of the
// file itself (its lstat, device and inode included), so that the file
// opened afterwards can be proven to be that one.
func checkChainStat(fsys statFS, t trust, path string) (string, fileStat, error) {
	c := chain{fsys: fsys, t: t, path: path}
	return c.run()
}

type component struct {
	path string
	st   fileStat
}

type chain struct {
	fsys statFS
	t    trust
	path string
	hops []string // "link -> target" followed so far, for messages
}

func (c *chain) run() (string, fileStat, error) {
	if !strings.HasPrefix(c.path, "/") {
		return "", fileStat{}, fmt.Errorf("%w: %q is not an absolute path", ErrRelativePath, c.path)
	}
	if strings.IndexByte(c.path, 0) >= 0 {
		return "", fileStat{}, fmt.Errorf("%w: %q holds a NUL byte", ErrOpen, c.path)
	}
	root, err := c.fsys.Lstat("/")
	if err != nil {
		return "", fileStat{}, c.fail(ErrOpen, "/", "cannot check /: %w", err)
	}
	if err := c.owner(component{"/", root}); err != nil {
		return "", fileStat{}, err
	}
	stack := []component{{"/", root}} // the resolved folders so far, root first
	todo := components(c.path)
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		parent := stack[len(stack)-1]
		if !parent.st.isDir() {
			return "", fileStat{}, c.fail(ErrOpen, parent.path, "%s is a %s, not a folder", parent.path, parent.st.kind())
		}
		p := join(parent.path, name)
		st, err := c.fsys.Lstat(p)
		if err != nil {
			return "", fileStat{}, c.fail(ErrOpen, p, "cannot check %s: %w", p, err)
		}
		next := component{p, st}
		if err := c.folder(parent, next); err != nil {
			return "", fileStat{}, err
		}
		if err := c.owner(next); err != nil {
			return "", fileStat{}, err
		}
		if st.isLink() {
			if len(c.hops) >= maxHops {
				return "", fileStat{}, c.fail(ErrOpen, p, "more than %d symbolic links (a loop?): %w", maxHops, unix.ELOOP)
			}
			target, err := c.fsys.Readlink(p)
			if err != nil {
				return "", fileStat{}, c.fail(ErrOpen, p, "cannot read the symlink %s: %w", p, err)
			}
			if target == "" || strings.IndexByte(target, 0) >= 0 {
				return "", fileStat{}, c.fail(ErrOpen, p, "the symlink %s has an empty or invalid target", p)
			}
			c.hops = append(c.hops, p+" -> "+target)
			if strings.HasPrefix(target, "/") {
				stack = stack[:1]
			}
			todo = append(components(target), todo...)
			continue
		}
		stack = append(stack, next)
	}
	last := stack[len(stack)-1]
	if len(stack) == 1 {
		return "", fileStat{}, c.fail(ErrOpen, c.path, "%s resolves to /, not a library file", c.path)
	}
	if w := c.t.writers(last.st); w != "" {
		return "", fileStat{}, c.fail(ErrUnsafePath, last.path, "%s %s (mode %#o) is writable by %s: %s", last.st.kind(), last.path, last.st.perm(), w, fixWrite(last.path, w))
	}
	return last.path, last.st, nil
}

// folder checks that only the owner can change what parent holds, or that
// parent is sticky and its entry next belongs to root or the user.
func (c *chain) folder(parent, next component) error {
	w := c.t.writers(parent.st)
	if w == "" {
		return nil
	}
	if parent.st.sticky() {
		if c.t.ownerOK(next.st.Uid) {
			return nil
		}
		return c.fail(ErrUnsafePath, parent.path, "folder %s (mode %#o) is writable by %s and sticky, but its entry %s belongs to uid %d, neither root nor this process's user (uid %d), who can replace it: move the library to a folder only root can write",
			parent.path, parent.st.perm(), w, next.path, next.st.Uid, c.t.euid)
	}
	return c.fail(ErrUnsafePath, parent.path, "folder %s (mode %#o) is writable by %s, who can replace what it holds: %s", parent.path, parent.st.perm(), w, fixWrite(parent.path, w))
}

// owner checks that a component belongs to root or the effective user.
func (c *chain) owner(x component) error {
	if c.t.ownerOK(x.st.Uid) {
		return nil
	}
	return c.fail(ErrUnsafePath, x.path, "%s %s belongs to uid %d, neither root nor this process's user (uid %d), who can replace it: chown root %s, or move the library to a folder only root can write",
		x.st.kind(), x.path, x.st.Uid, c.t.euid, x.path)
}

// fail builds the error: the sentinel, the reason (format may hold %w for
// a cause), and, when the component at is not the path checked or links
// were followed, the path checked and the links on the way.
func (c *chain) fail(sentinel error, at, format string, args ...any) error {
	suffix := ""
	switch {
	case len(c.hops) > 0:
		suffix = " (checking " + c.path + " via " + strings.Join(c.hops, ", ") + ")"
	case at != c.path:
		suffix = " (checking " + c.path + ")"
	}
	args = append(append([]any{sentinel}, args...), suffix)
	return fmt.Errorf("%w: "+format+"%s", args...)
}

func fixWrite(p, who string) string {
	bit := "o-w"
	if who != "anyone" {
		bit = "g-w"
	}
	return "chmod " + bit + " " + p + ", or move the library to a folder only root can write"
}

// components splits a path on '/' (empty names, from "//" or a leading or
// trailing slash, are dropped).
func components(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}
