package dl

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A group-writable component is safe when the group has exactly one member,
// the component's owner: a user-private group, as RHEL and Fedora create
// for every user (with umask 002, so a user's own venv is group-writable).
// This is the rule of Debian's OpenSSH for authorized_keys (members through
// the primary group in /etc/passwd or the member list in /etc/group). Only
// the local files are read, never NSS: where they do not tell (NIS "+"
// lines, a group or user they do not list), the group is not trusted.

// maxAccountFile bounds what is read of /etc/passwd and /etc/group.
const maxAccountFile = 16 << 20

type passwdEntry struct {
	name     string
	uid, gid uint32
}

type groupEntry struct {
	name    string
	gid     uint32
	members []string
}

// accounts is a parsed /etc/passwd and /etc/group.
type accounts struct {
	users      []passwdEntry
	groups     []groupEntry
	incomplete bool // a line it cannot read, or a NIS "+"/"-" line
}

// parseAccounts parses the two files' contents.
func parseAccounts(passwd, group []byte) *accounts {
	a := &accounts{}
	for _, line := range lines(passwd) {
		f := strings.Split(line, ":")
		if len(f) < 4 || strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-") {
			a.incomplete = true
			continue
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil || f[0] == "" {
			a.incomplete = true
			continue
		}
		a.users = append(a.users, passwdEntry{f[0], uint32(uid), uint32(gid)})
	}
	for _, line := range lines(group) {
		f := strings.Split(line, ":")
		if len(f) < 4 || strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-") {
			a.incomplete = true
			continue
		}
		gid, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil || f[0] == "" {
			a.incomplete = true
			continue
		}
		g := groupEntry{name: f[0], gid: uint32(gid)}
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				g.members = append(g.members, m)
			}
		}
		a.groups = append(a.groups, g)
	}
	return a
}

// lines are the non-empty, non-comment lines of b.
func lines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimRight(string(l), "\r")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		out = append(out, s)
	}
	return out
}

// privateTo reports whether group gid has exactly one member, the user
// uid: no user but uid has it as primary group, its member list is empty
// or names only that user, and uid is a member one way or the other.
func (a *accounts) privateTo(gid, uid uint32) bool {
	if a == nil || a.incomplete {
		return false
	}
	owner := ""
	for _, u := range a.users {
		if u.uid == uid {
			owner = u.name
			break
		}
	}
	if owner == "" {
		return false
	}
	var g *groupEntry
	for i := range a.groups {
		if a.groups[i].gid == gid {
			g = &a.groups[i]
			break
		}
	}
	if g == nil {
		return false
	}
	members := 0
	for _, u := range a.users {
		if u.gid == gid {
			if u.uid != uid {
				return false
			}
			members++
		}
	}
	if len(g.members) > 0 {
		if len(g.members) != 1 || g.members[0] != owner {
			return false
		}
		members++
	}
	return members > 0
}

// hostAccounts reads /etc/passwd and /etc/group once per search, on first
// need, and only when both files pass the chain check themselves (without
// the group exception: strict, root and the user only).
type hostAccounts struct {
	once sync.Once
	euid uint32
	a    *accounts
}

func (h *hostAccounts) privateTo(gid, uid uint32) bool {
	h.once.Do(func() {
		strict := trust{euid: h.euid}
		var data [2][]byte
		for i, p := range []string{"/etc/passwd", "/etc/group"} {
			if _, err := checkChain(osFS{}, strict, p); err != nil {
				return
			}
			b, err := readBounded(p, maxAccountFile)
			if err != nil {
				return
			}
			data[i] = b
		}
		h.a = parseAccounts(data[0], data[1])
	})
	return h.a.privateTo(gid, uid)
}

// readBounded reads at most max bytes of path; a longer file is an error.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpenBounded(f, path, max)
}

// readOpenBounded is readBounded for the file open as f.
func readOpenBounded(f *os.File, path string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: io.ErrShortBuffer}
	}
	return b, nil
}
