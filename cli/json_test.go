package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/vendors"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
)

// jsonPaths lists the keys of t's JSON form as docs/json.md names them:
// "backends[].properties[].uuid".
func jsonPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		path := prefix + name
		out = append(out, path)
		ft := f.Type
		suffix := ""
		if ft.Kind() == reflect.Slice {
			ft, suffix = ft.Elem(), "[]"
		}
		if ft.Kind() == reflect.Struct {
			out = append(out, jsonPaths(ft, path+suffix+".")...)
		}
	}
	return out
}

// documentedPaths reads the first column of docs/json.md's tables: the
// keys of info --json (and explain --json).
func documentedPaths(t *testing.T) []string { return documentedOf(t, "") }

// otherOutputs are the commands whose JSON docs/json.md documents with
// their name before each key ("list.devices[].uuid").
var otherOutputs = []string{"list", "resolve", "version"}

// documentedOf reads the keys docs/json.md documents for cmd's JSON: those
// of info --json when cmd is "", else those that start with cmd + ".",
// without it.
func documentedOf(t *testing.T, cmd string) []string {
	b, err := os.ReadFile("../docs/json.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?m)^\\| `([a-z_.\\[\\]]+)` \\|")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		key := m[1]
		if cmd != "" {
			if k, ok := strings.CutPrefix(key, cmd+"."); ok {
				out = append(out, k)
			}
			continue
		}
		other := false
		for _, o := range otherOutputs {
			other = other || strings.HasPrefix(key, o+".")
		}
		if !other {
			out = append(out, key)
		}
	}
	return out
}

// Every key of info --json is documented in docs/json.md, and every
// documented key exists.
func TestJSONKeysAreDocumented(t *testing.T) {
	keys := jsonPaths(reflect.TypeFor[report.Info](), "")
	doc := documentedPaths(t)
	require.NotEmpty(t, doc)
	sort.Strings(keys)
	for _, k := range keys {
		assert.Contains(t, doc, k, "docs/json.md does not document the key %q", k)
	}
	for _, k := range doc {
		assert.Contains(t, keys, k, "docs/json.md documents %q, which the JSON does not have", k)
	}
	assert.Len(t, doc, len(slices.Compact(slices.Sorted(slices.Values(doc)))), "a key is documented twice")
}

// The same from a real output: walk the keys of what info --json prints.
func TestJSONOutputKeysAreDocumented(t *testing.T) {
	code, out, errOut := runCLI("info", "--json")
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, fmt.Sprintf("{\n  \"schema_version\": %d,\n", report.SchemaVersion)), "schema_version is the first key, an int")
	var v any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	doc := documentedPaths(t)
	seen := 0
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				seen++
				assert.Contains(t, doc, p, "the output has a key docs/json.md does not document")
				if p != "backends[].extra" { // its names are the drivers': documented as an object of strings
					walk(e, p)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]")
			}
		}
	}
	walk(v, "")
	assert.Greater(t, seen, 40, "the walk saw the keys")
	m := v.(map[string]any)
	assert.Equal(t, float64(report.SchemaVersion), m["schema_version"])
	for _, k := range []string{"backends", "probes", "phases", "env"} {
		assert.IsType(t, []any{}, m[k], "%s is an array, never null", k)
	}
	assert.IsType(t, "", m["verdict"])
}

// flagshim.Variables is the one list of the variables; docs/environment.md's
// table carries each of them, docs/json.md flagshim's own (a vendor's are
// the environment table's alone, so adding a vendor touches no other page).
func TestEnvVarsAreDocumented(t *testing.T) {
	EnvVars := envNames()
	page, err := os.ReadFile("../docs/environment.md")
	require.NoError(t, err)
	_, env, ok := strings.Cut(string(page), "\n## Environment\n")
	require.True(t, ok, "docs/environment.md has an Environment section")
	env, _, _ = strings.Cut(env, "\n## ")
	doc, err := os.ReadFile("../docs/json.md")
	require.NoError(t, err)
	vendorVar := map[string]bool{}
	for _, v := range vendors.Variables() {
		vendorVar[v.Name] = true
	}
	for _, v := range EnvVars {
		assert.Contains(t, env, "`"+v+"`", "docs/environment.md's table lacks %s", v)
		if !vendorVar[v] {
			assert.Contains(t, string(doc), "`"+v+"`", "docs/json.md lacks %s", v)
		}
	}
	// FLAGOS_BACKEND's row gives auto's order: the registry's.
	var order []string
	for _, typ := range vendors.AutoOrder() {
		order = append(order, string(typ))
	}
	assert.Contains(t, env, "`auto` (default: the first available of "+strings.Join(order, ", ")+")",
		"docs/environment.md's FLAGOS_BACKEND row gives auto's order as the vendor registry does")
	assert.Len(t, EnvVars, len(slices.Compact(slices.Sorted(slices.Values(EnvVars)))), "a variable is listed twice")
	code, out, _ := runCLI("info", "--json")
	require.Equal(t, exitOK, code)
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	var names []string
	for _, e := range s.Env {
		names = append(names, e.Name)
		assert.True(t, e.Set, e.Name)
		assert.Equal(t, os.Getenv(e.Name), e.Value)
	}
	assert.Equal(t, []string{"FLAGOS_LIBCUDA_PATH", "FLAGOS_LIBMUSA_PATH"}, names, "the JSON reports the variables that are set (TestMain's), in order")
	code, out, _ = runCLI("explain")
	require.Equal(t, exitOK, code)
	for _, v := range EnvVars {
		assert.Contains(t, out, "\n  "+v, "explain lists every variable, set or not")
	}
}

// envNames are the names of flagshim.Variables, in order.
func envNames() []string {
	var names []string
	for _, v := range flagshim.Variables() {
		names = append(names, v.Name)
	}
	return names
}

// list --json, resolve --json and version --json: every key documented,
// every documented key in the output types, and the outputs as documented.
func TestListAndResolveJSONAreDocumented(t *testing.T) {
	for cmd, typ := range map[string]reflect.Type{
		"list":    reflect.TypeFor[listOutput](),
		"resolve": reflect.TypeFor[resolveOutput](),
		"version": reflect.TypeFor[versionInfo](),
	} {
		keys := jsonPaths(typ, "")
		doc := documentedOf(t, cmd)
		require.NotEmpty(t, doc, cmd)
		assert.ElementsMatch(t, keys, doc, "%s --json's keys and docs/json.md's table", cmd)
	}

	code, out, _ := runCLI("list", "--json")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, fmt.Sprintf("{\n  \"schema_version\": %d,\n", report.SchemaVersion)), out)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 1, "TestMain's machine has no accelerator")
	assert.Equal(t, listed{Device: "cpu:0", Type: "cpu", Index: 0, Name: l.Devices[0].Name}, l.Devices[0])

	code, out, errOut := runCLI("list", "--json", "--accelerators-only")
	assert.Equal(t, exitNoDevice, code)
	assert.JSONEq(t, fmt.Sprintf(`{"schema_version": %d, "devices": [], "unusable": []}`, report.SchemaVersion), out)
	assert.Contains(t, errOut, "no accelerator found")

	code, out, errOut = runCLI("resolve", "--json", "cpu:01", "CPU")
	assert.Equal(t, exitError, code, "an invalid argument is an error, as without --json")
	var r resolveOutput
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Devices, 2)
	assert.Equal(t, resolved{Input: "cpu:01", Device: "cpu:1"}, r.Devices[0])
	assert.Equal(t, "CPU", r.Devices[1].Input)
	assert.Empty(t, r.Devices[1].Device)
	assert.Contains(t, r.Devices[1].Error, `invalid device string "CPU"`)
	assert.Contains(t, errOut, `invalid device string "CPU"`, "stderr names it too")
}

// checkSmall checks the JSON of info --json says each fact once:
// alias.reason one sentence within 300 bytes, each backend's long reason
// whole in that backend only (everywhere else "see backend X"), and each
// long attempt error whole once.
func checkSmall(t *testing.T, out string) report.Info {
	t.Helper()
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.LessOrEqual(t, len(s.Alias.Reason), alias.ReasonMax, "alias.reason: %s", s.Alias.Reason)
	assert.Equal(t, 1, strings.Count(s.Alias.Reason+" ", ". "), "alias.reason is one sentence: %s", s.Alias.Reason)
	once := func(what, text string) {
		quoted, _ := json.Marshal(text)
		inner := string(quoted[1 : len(quoted)-1])
		assert.Equal(t, 1, strings.Count(out, inner), "%s is given more than once:\n%s", what, text)
	}
	for _, be := range s.Backends {
		if len([]rune(be.Reason)) > report.ReferMin {
			once(string(be.Type)+"'s reason", be.Reason)
		}
		for _, a := range be.Attempts {
			if len([]rune(a.Error)) > report.ReferMin {
				once(string(be.Type)+"'s attempt", a.Error)
			}
		}
	}
	assert.NotContains(t, s.Verdict, "\n")
	return s
}

// infoJSONMax is the most info --json may print on a machine without an
// accelerator: the no-GPU answer is for people too.
const infoJSONMax = 8 << 10

// On TestMain's machine (no accelerator: every vendor's search fails, and
// flagos's reason carries them all), the JSON says each fact once and stays
// under 8 KB, in every tier. TestMain names no file for most vendors, so
// their libraries are searched for where the loader looks: each search's
// message, which names every folder, is the longest fact.
func TestInfoJSONSize(t *testing.T) {
	for _, tier := range []string{"", "isolated", "presence", "exact"} {
		t.Run("tier="+tier, func(t *testing.T) {
			if !dltest.IsChild(t) {
				dltest.MustChild(t, t.Name(), "FLAGOS_PROBE="+tier)
				return
			}
			code, out, errOut := runCLI("info", "--json")
			require.Equal(t, exitOK, code, errOut)
			s := checkSmall(t, out)
			assert.Regexp(t, `^no usable CUDA runtime( \(cuda: [^()]*\))? and no flagos device( \(flagos: [^()]*\))?, so cuda is left as it is\.$`, s.Alias.Reason)
			assert.Empty(t, s.Probes, "every probe answers as its backend")
			want := "no accelerator found; cuda means cuda; isolated tier, the default of the flagshim command"
			if tier != "" {
				want = "no accelerator found; cuda means cuda; " + tier + " tier, chosen by FLAGOS_PROBE"
			}
			assert.Equal(t, want, s.Verdict)
			t.Logf("info --json: %d bytes, %d backends", len(out), len(s.Backends))
			limit := infoJSONMax
			if tier == "presence" {
				// The presence tier's reasons say what each vendor's
				// management library and device nodes answered too (9.2
				// KB on the test machine). The C library and Python, whose
				// default it is, give it without indentation: under 8 KB
				// (cmd/libflagshim's test).
				limit += 2 << 10
			}
			assert.LessOrEqual(t, len(out), limit, "info --json on a machine without accelerators (%d backends)", len(s.Backends))
		})
	}
}

// The same on the fake MUSA machine, where the alias is active.
func TestJSONSaysEachFactOnceWithAlias(t *testing.T) {
	if !dltest.IsChild(t) {
		lib := vendorstest.Driver(t, musa.Vendor(), dltest.PrivateDir(t))
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+lib,
			"FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6")
		return
	}
	for _, args := range [][]string{{"info", "--json"}, {"explain", "--json"}} {
		code, out, errOut := runCLI(args...)
		require.Equal(t, exitOK, code, errOut)
		s := checkSmall(t, out)
		assert.True(t, s.Alias.Active)
		assert.Equal(t, `no usable CUDA runtime (cuda: libcuda: FLAGOS_LIBCUDA_PATH="/nonexistent/libcuda.so.1"), so cuda now means flagos (2 devices); set FLAGOS_ALIAS_CUDA=0 to keep cuda failing.`, s.Alias.Reason)
		assert.Equal(t, "musa: 2 devices (Fake GPU 0, Fake GPU 1); cuda means flagos (routes to musa); isolated tier, the default of the flagshim command", s.Verdict)
		for _, be := range s.Backends {
			if be.Type == "flagos" {
				assert.Equal(t, "routes to musa: see backend musa", be.Reason)
			}
		}
		require.Len(t, s.Probes, 1, "the redirected cuda probe only")
		assert.Equal(t, []string{"alias"}, s.Probes[0].RedirectedBy)
		assert.Equal(t, "see backend cuda", s.Probes[0].Original.Reason)
	}
}
