package drivertest

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// What every vendor package's own tests check besides the kit's cases:
// one scenario of its own in a child process, its result table, its
// symbol names and its variables.

// InChild runs check in a child process of the calling top-level test, on
// a backend of the fake built with defines (and FakeDefines), pointed at
// by the vendor's override variable, with env ("K=V") added: a scenario of
// the vendor's own (a code only its API has, a fallback only its library
// takes). In the parent it builds the fake and starts the child; in the
// child it runs check. A missing C compiler fails the test.
func (s *Suite) InChild(t *testing.T, defines, env []string, check func(t *testing.T, b *driver.Backend)) {
	t.Helper()
	if dltest.IsChild(t) {
		check(t, s.New())
		return
	}
	p := s.Build(t, defines...)
	out := dltest.MustChild(t, t.Name(), append([]string{s.envVar() + "=" + p, libEnv + "=" + p}, env...)...)
	if testing.Verbose() {
		t.Log(out)
	}
}

// CheckResults checks a vendor's table of result codes: every name matches
// names (the API's own spelling: `^hip(Success|Error[A-Z][A-Za-z]+)$`);
// each code of want is in the table and means exactly want's sentinels;
// and driver.ErrStubLibrary, the claim that a library is a link-time stub,
// is meant by the codes want gives it and no other. The kit's own case
// results_one_sentinel_each checks the rest of every table.
func CheckResults(t *testing.T, v *driver.Vendor, names string, want map[int][]error) {
	t.Helper()
	re := regexp.MustCompile(names)
	for code, r := range v.Results {
		assert.Regexp(t, re, r.Name, "code %d", code)
		if slices.Contains(r.Is, driver.ErrStubLibrary) {
			assert.Contains(t, want[code], driver.ErrStubLibrary, "%s (%d) claims a stub library: say so in want", r.Name, code)
		}
	}
	for code, w := range want {
		r, ok := v.Results[code]
		if assert.True(t, ok, "code %d is not in the table", code) {
			assert.ElementsMatch(t, w, r.Is, "%s (%d)", r.Name, code)
		}
	}
}

// CheckSymbols checks a vendor's description as a whole: Validate accepts
// it, and every name of every operation matches names (the API's prefix:
// `^hip[A-Z]`) with at most most names per operation (1 for an API that
// versions no function; 0: any number).
func CheckSymbols(t *testing.T, v *driver.Vendor, names string, most int) {
	t.Helper()
	require.NoError(t, v.Validate())
	re := regexp.MustCompile(names)
	for op, syms := range v.Symbols {
		if most > 0 {
			assert.LessOrEqual(t, len(syms), most, "%s: %v", op, syms)
		}
		for _, n := range syms {
			assert.Regexp(t, re, n, op)
		}
	}
}

// VariableNames are the names of v's variables (driver.Vendor.Variables),
// in order.
func VariableNames(v *driver.Vendor) []string {
	var out []string
	for _, x := range v.Variables() {
		out = append(out, x.Name)
	}
	return out
}

// CheckVersions checks v's decoding of driver version numbers: each of
// numbers (the library's number, then major and minor) decodes so.
func CheckVersions(t *testing.T, v *driver.Vendor, numbers ...[3]int) {
	t.Helper()
	for _, c := range numbers {
		major, minor := v.DecodeVersion(c[0])
		assert.Equal(t, [2]int{c[1], c[2]}, [2]int{major, minor}, fmt.Sprintf("version %d", c[0]))
	}
}
