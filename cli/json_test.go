package cli

import (
	"encoding/json"
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
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
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
var otherOutputs = []string{"list", "resolve"}

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
	assert.True(t, strings.HasPrefix(out, "{\n  \"schema_version\": 1,\n"), "schema_version is the first key, an int")
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
}

// flagshim.Variables is the one list of the variables; README.md's
// environment table and docs/json.md carry each of them.
func TestEnvVarsAreDocumented(t *testing.T) {
	EnvVars := envNames()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, env, ok := strings.Cut(string(readme), "\n## Environment\n")
	require.True(t, ok, "README.md has an Environment section")
	env, _, _ = strings.Cut(env, "\n## ")
	doc, err := os.ReadFile("../docs/json.md")
	require.NoError(t, err)
	for _, v := range EnvVars {
		assert.Contains(t, env, "`"+v+"`", "README.md's environment table lacks %s", v)
		assert.Contains(t, string(doc), "`"+v+"`", "docs/json.md lacks %s", v)
	}
	assert.Len(t, EnvVars, len(slices.Compact(slices.Sorted(slices.Values(EnvVars)))), "a variable is listed twice")
	code, out, _ := runCLI("info", "--json")
	require.Equal(t, exitOK, code)
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	var names []string
	for _, e := range s.Env {
		names = append(names, e.Name)
	}
	assert.Equal(t, EnvVars, names, "the JSON reports every variable, in order")
}

// envNames are the names of flagshim.Variables, in order.
func envNames() []string {
	var names []string
	for _, v := range flagshim.Variables() {
		names = append(names, v.Name)
	}
	return names
}

// list --json and resolve --json: every key documented, every documented
// key in the output types, and the outputs as documented.
func TestListAndResolveJSONAreDocumented(t *testing.T) {
	for cmd, typ := range map[string]reflect.Type{
		"list":    reflect.TypeFor[listOutput](),
		"resolve": reflect.TypeFor[resolveOutput](),
	} {
		keys := jsonPaths(typ, "")
		doc := documentedOf(t, cmd)
		require.NotEmpty(t, doc, cmd)
		assert.ElementsMatch(t, keys, doc, "%s --json's keys and docs/json.md's table", cmd)
	}

	code, out, _ := runCLI("list", "--json")
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "{\n  \"schema_version\": 1,\n"), out)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 1, "TestMain's machine has no accelerator")
	assert.Equal(t, listed{Device: "cpu:0", Type: "cpu", Index: 0, Name: l.Devices[0].Name}, l.Devices[0])

	code, out, errOut := runCLI("list", "--json", "--accelerators-only")
	assert.Equal(t, exitNoDevice, code)
	assert.JSONEq(t, `{"schema_version": 1, "devices": [], "unusable": []}`, out)
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
// alias.reason within 300 characters, and each backend's long reason
// whole in that backend only (everywhere else "see backend X").
func checkSmall(t *testing.T, out string) report.Info {
	t.Helper()
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.LessOrEqual(t, len(s.Alias.Reason), 300, "alias.reason: %s", s.Alias.Reason)
	for _, be := range s.Backends {
		if len([]rune(be.Reason)) <= report.ReferMin {
			continue
		}
		quoted, _ := json.Marshal(be.Reason)
		inner := string(quoted[1 : len(quoted)-1])
		assert.Equal(t, 1, strings.Count(out, inner), "%s's reason is given more than once:\n%s", be.Type, be.Reason)
	}
	return s
}

// On TestMain's machine (no accelerator: every vendor's search fails, and
// flagos's reason carries them all), the JSON stays small.
func TestJSONSaysEachFactOnce(t *testing.T) {
	code, out, errOut := runCLI("info", "--json")
	require.Equal(t, exitOK, code, errOut)
	s := checkSmall(t, out)
	assert.Equal(t, "no usable CUDA runtime (see backend cuda) and no flagos device (see backend flagos); cuda is left as it is.", s.Alias.Reason)
	for _, p := range s.Probes {
		if p.Name == "cuda" {
			assert.Equal(t, "see backend cuda", p.Original.Reason)
		}
	}
	// Each vendor adds its own facts (its reason, the places searched), so
	// the size grows with the registered vendors, by a bounded amount each,
	// never with their square (a reason repeated in every other's).
	for _, be := range s.Backends {
		b, err := json.MarshalIndent(be, "  ", "  ")
		require.NoError(t, err)
		assert.Less(t, len(b), 2<<10, "backend %s's object", be.Type)
	}
	assert.Less(t, len(out), 6<<10+len(s.Backends)<<11, "info --json on a machine without accelerators (%d backends)", len(s.Backends))
}

// The same on the fake MUSA machine, where the alias is active.
func TestJSONSaysEachFactOnceWithAlias(t *testing.T) {
	if !dltest.IsChild(t) {
		lib := drivertest.BuildFake(t, "musa", dltest.PrivateDir(t))
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+lib,
			"FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6")
		return
	}
	for _, args := range [][]string{{"info", "--json"}, {"explain", "--json"}} {
		code, out, errOut := runCLI(args...)
		require.Equal(t, exitOK, code, errOut)
		s := checkSmall(t, out)
		assert.True(t, s.Alias.Active)
		assert.Equal(t, "no usable CUDA runtime (see backend cuda); cuda now means flagos (2 devices). Set FLAGOS_ALIAS_CUDA=0 to keep cuda failing.", s.Alias.Reason)
		for _, be := range s.Backends {
			if be.Type == "flagos" {
				assert.Equal(t, "routes to musa: see backend musa", be.Reason)
			}
		}
	}
}
