package presence

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Helpers that read /dev and /sys under the configured root. Reading a
// sysfs attribute or stat-ing a device node opens no device and initializes
// no driver.

// path is p ("/dev/kfd") under the root.
func (c *config) path(p string) string { return filepath.Join(c.root, p) }

// isCharDevice reports whether p (under the root) is a character device,
// following symlinks as the runtimes' open() does.
func (c *config) isCharDevice(p string) bool {
	var st unix.Stat_t
	if err := unix.Stat(c.path(p), &st); err != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFCHR
}

// numbered lists the entries of dir (under the root) named prefix+N with N
// a decimal number, as {N, name} sorted by N.
func (c *config) numbered(dir, prefix string) ([]numberedEntry, error) {
	ents, err := os.ReadDir(c.path(dir))
	if err != nil {
		return nil, err
	}
	var out []numberedEntry
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		n, ok := decimal(rest)
		if !ok {
			continue
		}
		out = append(out, numberedEntry{n: n, name: e.Name()})
	}
	slices.SortFunc(out, func(a, b numberedEntry) int { return a.n - b.n })
	return out, nil
}

type numberedEntry struct {
	n    int
	name string
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

// readAttr reads a small text file under the root, trimmed.
func (c *config) readAttr(p string) (string, error) {
	f, err := os.Open(c.path(p))
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

// readProps reads a KFD "properties" file (see parseProps).
func (c *config) readProps(p string) (map[string]uint64, error) {
	s, err := c.readAttr(p)
	if err != nil {
		return nil, err
	}
	return parseProps(s), nil
}

// parseProps parses KFD properties: one "name value" pair a line, values
// unsigned decimal, as kfd_topology.c prints them. Lines that are not such
// a pair are skipped; a repeated name keeps its last value.
func parseProps(s string) map[string]uint64 {
	props := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || k == "" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		props[k] = n
	}
	return props
}
