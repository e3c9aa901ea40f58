package driver

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// withoutNodes applies Library.Nodes before the library is opened: when the
// override variable is unset, the vendor names device nodes and none of
// them is a character device here, the library is found and checked but
// not loaded, and the answer says why. ok is false when the library should
// be opened as usual.
func (b *Backend) withoutNodes() (ls *libState, ok bool) {
	l := b.where()
	if len(l.Nodes) == 0 || (l.EnvVar != "" && b.o.getenv(l.EnvVar) != "") {
		return nil, false
	}
	for _, n := range l.Nodes {
		if isCharDevice(n) {
			return nil, false
		}
	}
	missing := l.Nodes[0] + " is not a character device"
	if len(l.Nodes) > 1 {
		missing = "none of " + strings.Join(l.Nodes, ", ") + " is a character device"
	}
	found := "no " + l.Name + " was found either"
	path, attempts, err := b.find()
	if err == nil {
		found = path + " was found and not loaded"
	}
	return &libState{
		attempts: attempts,
		err:      fmt.Errorf("%w: %s", ErrNoDevice, missing),
		reason: fmt.Sprintf("%s: no device: %s here, so %s could only find none; %s (start the container with the device nodes, or set %s to load a library anyway)",
			b.v.Type, missing, b.v.Symbols[OpInit][0], found, l.EnvVar),
	}, true
}

// isCharDevice reports whether path is a character device, following
// symlinks as the runtime's open() does.
func isCharDevice(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR
}
