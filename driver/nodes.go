package driver

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// withoutNodes applies Library.Nodes before the library is opened: when the
// override variable is unset, the vendor names device nodes and none of
// them is a character device here (each one missing, or something else
// standing in its place), the library is found and checked but
// not loaded, and the answer says why. ok is false when the library should
// be opened as usual.
func (b *Backend) withoutNodes() (ls *libState, ok bool) {
	l := b.where()
	if len(l.Nodes) == 0 || (l.EnvVar != "" && b.o.getenv(l.EnvVar) != "") {
		return nil, false
	}
	var problems []string
	for _, n := range l.Nodes {
		problem := presence.NodeProblem(n)
		if problem == "" {
			return nil, false
		}
		problems = append(problems, n+" "+problem)
	}
	missing := strings.Join(problems, ", and ")
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
