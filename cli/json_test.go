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

// documentedPaths reads the first column of docs/json.md's tables.
func documentedPaths(t *testing.T) []string {
	b, err := os.ReadFile("../docs/json.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?m)^\\| `([a-z_.\\[\\]]+)` \\|")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
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
