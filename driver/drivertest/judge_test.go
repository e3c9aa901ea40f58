package drivertest_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// The kit judged: it is run on vendors of its own (testdata/fake_libkit.c,
// a CUDA-shaped API under the kit prefix), valid ones it must accept
// whole and broken ones it must reject, each in a process of its own, and
// the cases each fails are asserted. A broken vendor is a Vendor
// description that lies about its library, or a library built broken
// (a -D switch of the fake).

// judged are the vendors the kit is run on: what is changed from the valid
// one, and the cases the kit must fail (none: the kit must accept it).
var judged = map[string]struct {
	tweak   func(v *driver.Vendor)
	defines []string
	env     []string
	fails   []string
}{
	// Valid: the kit accepts each, whatever it leaves out.
	"valid": {},
	// Validate accepts a vendor with no visible-devices variable (the kit
	// once indexed VisibleEnv[0] and crashed).
	"no_visible_devices_variable": {tweak: func(v *driver.Vendor) { v.VisibleEnv = nil }},
	// Without the global lookup the core declares modules unsupported
	// (driver.Vendor.Unbound): the module cases do not apply, and the rest
	// pass (the kit once failed 8 cases of such a vendor).
	"no_global_lookup": {tweak: func(v *driver.Vendor) { delete(v.Symbols, driver.OpModuleGetGlobal) }},
	// Only the operations the core requires: every optional feature is
	// unsupported, and the kit checks that the core says so.
	"required_only": {tweak: requiredOnly},

	// Broken: the kit rejects each, in the cases that show the lie.
	// A table that gives "invalid value" the out-of-memory error too.
	"invalid_value_is_out_of_memory_too": {tweak: func(v *driver.Vendor) {
		v.Results[1] = driver.Result{Name: "KIT_ERROR_INVALID_VALUE", Is: []error{device.ErrInvalidValue, device.ErrOutOfMemory}}
	}, fails: []string{"results_one_sentinel_each", "memory"}},
	// A table that calls out of memory an invalid value.
	"out_of_memory_is_invalid_value": {tweak: func(v *driver.Vendor) {
		v.Results[2] = driver.Result{Name: "KIT_ERROR_OUT_OF_MEMORY", Is: []error{device.ErrInvalidValue}}
	}, fails: []string{"results_one_sentinel_each", "memory"}},
	// A stream wait that does nothing, in the binding (an adapter that
	// never calls the library)...
	"wait_binding_does_nothing": {tweak: func(v *driver.Vendor) {
		v.Adapters = map[driver.Op]driver.Adapter{driver.OpStreamWaitEvent: func(*clib.Func, ...uintptr) int { return 0 }}
	}, fails: []string{"stream_wait_orders_work"}},
	// ... or in the library, which answers success and orders nothing.
	"wait_library_does_nothing": {defines: []string{"-DFAKE_WAIT_IGNORED"}, fails: []string{"stream_wait_orders_work"}},

	// No C compiler: every case that needs the fake fails, saying why;
	// none passes by running nothing (only the checks of the description
	// run).
	"no_c_compiler": {env: []string{"CC=/nonexistent/flagshim-no-cc"}, fails: judgedSuite(nil, nil).LibraryCases()},
}

// requiredOnly leaves v the operations the core requires of a
// PrimaryContext vendor, and nothing else.
func requiredOnly(v *driver.Vendor) {
	keep := []driver.Op{driver.OpInit, driver.OpDriverVersion, driver.OpDeviceCount, driver.OpDeviceGet, driver.OpDeviceName,
		driver.OpDeviceAttribute, driver.OpSynchronize, driver.OpPrimaryCtxRetain, driver.OpCtxSetCurrent}
	for op := range v.Symbols {
		if !slices.Contains(keep, op) {
			delete(v.Symbols, op)
		}
	}
}

// kitVendor is the valid vendor of testdata/fake_libkit.c.
func kitVendor() *driver.Vendor {
	v := cuda.Family("kit", "KIT_")
	v.Type, v.Name = "kit", "Kit"
	v.Library = clib.Library{Name: "libkit", EnvVar: "FLAGOS_LIBKIT_PATH", Sonames: []string{"libkit.so.1"}}
	v.VersionBase = 1000
	v.UUIDPrefix = "KIT-"
	v.VisibleEnv = []string{"KIT_VISIBLE_DEVICES"}
	return v
}

const variantEnv = "DRIVERTEST_JUDGED"

// TestJudged runs the kit on each of judged in a child process and asserts
// the cases it fails: none for a valid vendor, exactly the listed ones for
// a broken one (and no case may crash the kit).
func TestJudged(t *testing.T) {
	if os.Getenv(variantEnv) != "" {
		t.Skip("the parent of TestJudgedVendor")
	}
	if dltest.CC() == "" {
		t.Fatal("no C compiler (go env CC): the kit cannot be judged")
	}
	for name, j := range judged {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := runJudged(t, name)
			failed := failedCases(out)
			if j.fails == nil {
				assert.NoError(t, err, "the kit rejects a valid vendor:\n%s", out)
				assert.Empty(t, failed)
			} else {
				assert.Error(t, err, "the kit accepts a broken vendor")
				assert.ElementsMatch(t, j.fails, failed, "the cases the kit fails\n%s", tail(out))
			}
			assert.NotContains(t, out, "panic:", "the kit crashed")
			assert.Contains(t, out, "--- ", "the kit ran")
		})
	}
}

// TestJudgedVendor is the kit run on the vendor variantEnv names (a child of
// TestJudged; its own cases run in its children).
func TestJudgedVendor(t *testing.T) {
	name := os.Getenv(variantEnv)
	j, ok := judged[name]
	if !ok {
		t.Skip("runs only as a child of TestJudged")
	}
	judgedSuite(j.tweak, j.defines).Test(t)
}

// judgedSuite is the kit on the vendor of testdata/fake_libkit.c, changed
// by tweak, its fake built with defines.
func judgedSuite(tweak func(*driver.Vendor), defines []string) *drivertest.Suite {
	v := kitVendor()
	if tweak != nil {
		tweak(v)
	}
	return &drivertest.Suite{Vendor: v, FakeDefines: defines, Version: [2]int{1, 0}, Child: "TestJudgedVendor"}
}

// runJudged runs TestJudgedVendor on the vendor name in a process of its
// own, as a parent (its cases then run in its children), in the package's
// folder (where its fake is), with the environment scrubbed of the test's
// own markers and the fakes' knobs.
func runJudged(t *testing.T, name string) (string, error) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestJudgedVendor$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, dltest.ChildEnv+"=") && !strings.HasPrefix(kv, "FAKE_") && !strings.HasPrefix(kv, "FLAGOS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, variantEnv+"="+name)
	cmd.Env = append(cmd.Env, judged[name].env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

var failRE = regexp.MustCompile(`(?m)^ {4}--- FAIL: TestJudgedVendor/(\S+)`)

// failedCases are the kit's cases that failed in out.
func failedCases(out string) []string {
	var names []string
	for _, m := range failRE.FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}

func tail(s string) string {
	if len(s) > 6000 {
		return "..." + s[len(s)-6000:]
	}
	return s
}

// TestNeedsAreFeatures: every feature a case needs is one the core names
// (driver.Vendor.Unbound's), so a case never waits on a feature that no
// vendor lacks.
func TestNeedsAreFeatures(t *testing.T) {
	features := drivertest.Features()
	require.NotEmpty(t, features)
	for name, needs := range drivertest.CaseNeeds() {
		for _, f := range needs {
			assert.Contains(t, features, f, "case %s", name)
		}
	}
	names := drivertest.CaseNames()
	assert.Len(t, names, len(slices.Compact(slices.Sorted(slices.Values(names)))), "case names are unique")
}
