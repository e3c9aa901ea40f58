package flagshim_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/vendors"
)

// No list of vendors is written by hand where a test does not check it
// against the registry (vendors.All()): adding a vendor then touches
// only the files docs/architecture.md's "Adding a vendor" names, and every
// list it makes stale fails here, saying where.

// vendorTypes are the registered vendors' types.
func vendorTypes(t *testing.T) []string {
	var out []string
	for _, v := range vendors.All() {
		out = append(out, string(v.Type))
	}
	require.NotEmpty(t, out)
	return out
}

// trackedFiles are the repository's files git tracks.
func trackedFiles(t *testing.T) []string {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the test reads the checkout's files)", err)
	}
	return strings.Fields(string(out))
}

// subsets are the lists that name some vendors on purpose, for a fact of
// theirs alone (a new vendor does not make them wrong): file, then the
// list as written (white space folded), and why.
var subsets = map[[2]string]string{
	{"docs/kubernetes.md", "MUSA, MLU, NPU, GCU and Kunlunxin"}: "the vendors whose node-to-device facts are not confirmed",
	{"docs/flagcx.md", "CUDA, MUSA and HIP"}:                    "the fake libraries the plugin's C test drives",
}

// TestVendorListsAreComplete: a run of three or more vendor types in
// prose, comments or goldens ("cuda, musa, hip and flagos") names every
// registered vendor, or says it is an example ("e.g.", "such as", a
// trailing "...", also at the start of the next line), or is a row of a Markdown table (a table's row is about
// the vendors it names; a new vendor gets a row of its own), or is one of
// subsets. A complete list that a new vendor makes partial fails here
// until it is brought up to date (or its golden regenerated: see -update).
func TestVendorListsAreComplete(t *testing.T) {
	types := vendorTypes(t)
	word := `(?:drivers/)?(?:` + strings.Join(append(slices.Clone(types), "flagos", "cpu"), "|") + `)`
	sep := `(?:\s*[,/]\s*(?:and\s+|or\s+|then\s+)?|\s+(?:and|or|then)\s+)`
	run := regexp.MustCompile(`(?i)\b` + word + `(?:` + sep + word + `)+\b`)
	name := regexp.MustCompile(`(?i)\b(?:` + strings.Join(types, "|") + `)\b`)
	example := regexp.MustCompile(`(?i)(e\.g\.|such as|for example|like)[^.;:]*$`)
	lists := 0
	for _, f := range trackedFiles(t) {
		if !regexp.MustCompile(`\.(go|md|h|py|sh|txtar)$`).MatchString(f) || strings.HasSuffix(f, "_test.go") ||
			f == "CHANGELOG.md" || strings.HasPrefix(f, "docs/benchmarks") || strings.HasPrefix(f, "docs/hardware") {
			continue // tests name the vendors they exercise; the changelog and measurement logs are history
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s := string(b)
		for _, m := range run.FindAllStringIndex(s, -1) {
			var named []string
			for _, n := range name.FindAllString(s[m[0]:m[1]], -1) {
				if n = strings.ToLower(n); slices.Contains(types, n) && !slices.Contains(named, n) {
					named = append(named, n)
				}
			}
			if len(named) < 3 {
				continue
			}
			lists++
			if len(named) == len(types) {
				continue // every vendor: complete
			}
			before, after := s[max(0, m[0]-80):m[0]], s[m[1]:min(len(s), m[1]+8)]
			lineStart := strings.LastIndex(s[:m[0]], "\n") + 1
			if _, ok := subsets[[2]string{f, strings.Join(strings.Fields(s[m[0]:m[1]]), " ")}]; ok ||
				strings.HasPrefix(s[lineStart:], "|") || example.MatchString(before) || strings.HasPrefix(strings.TrimLeft(after, " ,\n\t/"), "...") ||
				strings.HasPrefix(strings.TrimLeft(after, " ,\n\t/"), "…") {
				continue // an example, said to be one
			}
			line := strings.Count(s[:m[0]], "\n") + 1
			t.Errorf("%s:%d: %q names %d of the %d registered vendors (%s): name them all, or say it is an example (e.g. ..., or a trailing ...)",
				f, line, s[m[0]:m[1]], len(named), len(types), strings.Join(types, ", "))
		}
	}
	assert.Positive(t, lists, "the scan found the lists it checks (settings.txtar's FLAGOS_BACKEND values, at least)")
}

// TestDocsAutoOrder: docs/architecture.md's FLAGOS_BACKEND=auto order is
// every ranked vendor's, with its rank, in the registry's order.
func TestDocsAutoOrder(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	require.NoError(t, err)
	_, para, ok := strings.Cut(string(doc), "`FLAGOS_BACKEND=auto` tries the vendors with an `Auto` rank, lowest first")
	require.True(t, ok, "docs/architecture.md explains FLAGOS_BACKEND=auto's order")
	para, _, _ = strings.Cut(para, "\n\n")
	var doc2 []string
	for _, m := range regexp.MustCompile(`\b([a-z][a-z0-9]*)(?:\s+last)?\s+\((\d+)\)`).FindAllStringSubmatch(para, -1) {
		doc2 = append(doc2, m[1]+" "+m[2])
	}
	var want []string
	for _, typ := range vendors.AutoOrder() {
		v, ok := vendors.Lookup(typ)
		require.True(t, ok)
		want = append(want, string(typ)+" "+strconv.Itoa(v.Auto))
	}
	assert.Equal(t, want, doc2, "docs/architecture.md: the auto order, as \"type (rank)\" in order")
}

// libraryVars are the registered vendors' library-path variables (their
// drivers' and management libraries' overrides).
func libraryVars() []string {
	var out []string
	for _, x := range vendors.Variables() {
		if x.Kind == driver.VarLibraryPath {
			out = append(out, x.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestVendorTablesMatchRegistry: the tables of vendors outside Go that
// tests and scripts keep (the Python suite's library overrides,
// scripts/walkthrough.sh's fakes and the libraries it hides) are the
// registry's.
func TestVendorTablesMatchRegistry(t *testing.T) {
	py, err := os.ReadFile("python/tests/support.py")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(py), "\n_LIBRARIES = {\n")
	require.True(t, ok, "python/tests/support.py has _LIBRARIES")
	table, _, _ = strings.Cut(table, "\n}")
	var pyVars []string
	for _, m := range regexp.MustCompile(`"(FLAGOS_LIB\w+_PATH)"`).FindAllStringSubmatch(table, -1) {
		pyVars = append(pyVars, m[1])
	}
	slices.Sort(pyVars)
	assert.Equal(t, libraryVars(), pyVars, "python/tests/support.py's _LIBRARIES: every vendor's library overrides")

	sh, err := os.ReadFile("scripts/walkthrough.sh")
	require.NoError(t, err)
	var shVars []string
	_, hidden, ok := strings.Cut(string(sh), "for lib in ")
	require.True(t, ok, "scripts/walkthrough.sh hides every vendor's libraries")
	hidden, _, _ = strings.Cut(hidden, "; do")
	for _, m := range regexp.MustCompile(`\b([A-Z0-9]+):\S+`).FindAllStringSubmatch(hidden, -1) {
		shVars = append(shVars, "FLAGOS_LIB"+m[1]+"_PATH")
	}
	slices.Sort(shVars)
	assert.Equal(t, libraryVars(), shVars, "scripts/walkthrough.sh's hidden libraries: every vendor's")

	// The walkthrough's fakes: every vendor's but cuda's (a walkthrough shows
	// flagos on a machine without CUDA), each its package's
	// testdata/fake_<Library.Name>.c as the conformance kit builds it.
	recipe := regexp.MustCompile(`(?m)^(\w+)\) src=(\S+) soname=(\S+) defs=(\S*) var=(\S+) ;;$`)
	seen := map[string]bool{}
	for _, m := range recipe.FindAllStringSubmatch(string(sh), -1) {
		v, ok := vendors.Lookup(device.Type(m[1]))
		if !assert.True(t, ok, "scripts/walkthrough.sh: %s is no registered vendor", m[1]) {
			continue
		}
		seen[m[1]] = true
		assert.Equal(t, "drivers/"+m[1]+"/testdata/fake_"+v.Library.Name+".c", m[2], m[1])
		assert.Contains(t, v.Library.Sonames, m[3], m[1])
		assert.Equal(t, v.Library.EnvVar, m[5], m[1])
	}
	for _, typ := range vendorTypes(t) {
		if typ != string(device.CUDA) {
			assert.True(t, seen[typ], "scripts/walkthrough.sh has no walkthrough recipe for %s", typ)
		}
	}
}
