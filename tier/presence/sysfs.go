package presence

import (
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Helpers that read /dev and /sys under the configured root. Reading a
// sysfs attribute or stat-ing a device node opens no device and initializes
// no driver.

// IsCharDevice reports whether p (under the root) is a character device,
// following symlinks as the runtimes' open() does.
func (e *Env) IsCharDevice(p string) bool {
	var st unix.Stat_t
	if err := unix.Stat(e.Path(p), &st); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFCHR
}

// NodeProblem says what keeps p (under the root) from being a usable
// device node: "is missing" (nothing there, or a dangling symlink), "is not
// a character device" (a file or folder stands there), "cannot be read
// (...)"; "" when it is a character device. For messages: "/dev/kfd is
// missing here".
func (e *Env) NodeProblem(p string) string { return NodeProblem(e.Path(p)) }

// NodeProblem is Env.NodeProblem for an absolute path, without a root.
func NodeProblem(path string) string {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
		return "is missing"
	case err != nil:
		return "cannot be read (" + err.Error() + ")"
	case st.Mode&unix.S_IFMT != unix.S_IFCHR:
		return "is not a character device"
	}
	return ""
}

// Numbered lists the entries of dir (under the root) named prefix+N with N
// a decimal number, sorted by N.
func (e *Env) Numbered(dir, prefix string) ([]Numbered, error) {
	ents, err := os.ReadDir(e.Path(dir))
	if err != nil {
		return nil, err
	}
	var out []Numbered
	for _, ent := range ents {
		rest, ok := strings.CutPrefix(ent.Name(), prefix)
		if !ok {
			continue
		}
		n, ok := decimal(rest)
		if !ok {
			continue
		}
		out = append(out, Numbered{N: n, Name: ent.Name()})
	}
	slices.SortFunc(out, func(a, b Numbered) int { return a.N - b.N })
	return out, nil
}

// Numbered is one entry prefix+N of a folder.
type Numbered struct {
	N    int    // the number
	Name string // the entry's name
}

// decimal parses a plain non-negative decimal ("0", "12"; not "", "+1",
// " 1", or anything past 2^31-1).
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int(v), err == nil
}

// maxAttr bounds what is read of one sysfs file (they are a page at most).
const maxAttr = 64 << 10

// ReadAttr reads a small text file under the root (a sysfs attribute: a
// page at most), trimmed.
func (e *Env) ReadAttr(p string) (string, error) {
	f, err := os.Open(e.Path(p))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// DriverOf is the name of the kernel driver a sysfs "driver" symlink (under
// the root) points to: "amdgpu" for /sys/class/drm/renderD128/device/driver.
func (e *Env) DriverOf(link string) (string, error) {
	target, err := os.Readlink(e.Path(link))
	if err != nil {
		return "", err
	}
	return path.Base(strings.TrimRight(target, "/")), nil
}
