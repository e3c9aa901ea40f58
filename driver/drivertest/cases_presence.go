package drivertest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The vendor's presence tier, as every vendor's is checked alike: its
// sources on this machine's own root, and a management-library override
// that cannot be used. (Each binding's own cases run on its fake through
// presencetest.Suite; the tier's node layouts are the vendor's own tests.)

// presenceSources are the vendor's presence sources on e: Vendor.Presence,
// else its device nodes alone, as the core asks them.
func (s *Suite) presenceSources(e *presence.Env) []presence.Report {
	if s.Vendor.Presence != nil {
		return s.Vendor.Presence(e)
	}
	return []presence.Report{presence.Nodes(s.Vendor.DeviceNodes, e)}
}

// noLibraries is a presence environment that finds no management library
// (so no library of this machine is loaded into the test's process) and
// reads none of the process's variables: what answers is what needs no
// library (device nodes, sysfs) under root ("" for the machine's own).
func noLibraries(root string, kv ...string) *presence.Env {
	env := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	opts := []presence.Option{
		presence.WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }),
		presence.WithSearch(func(l *clib.Library) { l.Sonames, l.Dirs = []string{"drivertest-absent-" + l.Name + ".so"}, nil }),
	}
	if root != "" {
		opts = append(opts, presence.WithRoot(root))
	}
	return presence.NewEnv(opts...)
}

// presenceRealRoot: on this machine's own root the answer is whatever the
// machine has; every source answers, in order, with a reason, and its
// devices' indexes count from 0 (nodes under /dev).
func presenceRealRoot(t *testing.T, s *Suite) {
	rs := s.presenceSources(noLibraries(""))
	require.NotEmpty(t, rs, "the presence tier answers with at least one source")
	for _, r := range rs {
		assert.NotEmpty(t, r.Source)
		assert.NotEmpty(t, r.Reason, r.Source)
		for i, d := range r.Devices {
			assert.Equal(t, i, d.Index, "%s: device %d", r.Source, i)
			if r.Source == presence.SourceNodes {
				assert.True(t, strings.HasPrefix(d.Node, "/dev/"), d.Node)
			}
		}
	}
}

// libraryOverrides are the vendor's management-library overrides: its
// library-path variables besides its driver's.
func (s *Suite) libraryOverrides() []string {
	var out []string
	for _, x := range s.Vendor.Vars {
		if x.Kind == driver.VarLibraryPath && x.Name != s.envVar() {
			out = append(out, x.Name)
		}
	}
	return out
}

// noLibraryOverride skips the override case of a vendor whose presence tier
// reads no management library of its own.
func noLibraryOverride(s *Suite) string {
	if len(s.libraryOverrides()) == 0 {
		return fmt.Sprintf("%s has no management-library override (a library-path variable in Vendor.Vars)", s.typ())
	}
	return ""
}

// presenceOverrideRefused: a management-library override that cannot be
// used (a relative path) is refused, saying which variable, and never
// searched past (no other copy of the library answers instead), while the
// tier still reports the vendor's device nodes.
func presenceOverrideRefused(t *testing.T, s *Suite) {
	for _, name := range s.libraryOverrides() {
		rs := s.presenceSources(noLibraries(t.TempDir(), name, "relative/lib-drivertest.so"))
		require.NotEmpty(t, rs)
		var refused bool
		for _, r := range rs {
			if r.Err != nil && assert.ErrorIs(t, r.Err, presence.ErrBadOverride, "%s: %s", r.Source, r.Reason) {
				refused = true
				assert.Contains(t, r.Reason, name, "the reason names the variable")
			}
		}
		assert.True(t, refused, "%s=relative/... is refused by one of %s's sources", name, s.typ())
		assert.Equal(t, presence.SourceNodes, rs[len(rs)-1].Source, "the device nodes still answer, last")
	}
}
