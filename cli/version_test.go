package cli

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/report"
)

func TestModuleVersion(t *testing.T) {
	main := func(path, version string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: path, Version: version}, Settings: settings}, true
		}
	}
	tests := []struct {
		name string
		info func() (*debug.BuildInfo, bool)
		want string
	}{
		{"a checkout", main(modulePath, "(devel)"), "module github.com/flagos-ai/flagshim (devel)"},
		{"go install @v0.2.0", main(modulePath, "v0.2.0"), "module github.com/flagos-ai/flagshim v0.2.0"},
		{"no version", main(modulePath, ""), "module github.com/flagos-ai/flagshim (devel)"},
		{"a checkout with vcs", main(modulePath, "(devel)",
			debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			"module github.com/flagos-ai/flagshim (devel), commit 0123456789ab+dirty"},
		{"clean vcs", main(modulePath, "v0.2.1-0.20260101-0123456789ab",
			debug.BuildSetting{Key: "vcs.revision", Value: "0123456"},
			debug.BuildSetting{Key: "vcs.modified", Value: "false"}),
			"module github.com/flagos-ai/flagshim v0.2.1-0.20260101-0123456789ab, commit 0123456"},
		{"go install @<commit>: a pseudo-version", main(modulePath, "v0.0.0-20260101120000-0123456789ab"),
			"module github.com/flagos-ai/flagshim v0.0.0-20260101120000-0123456789ab, commit 0123456789ab"},
		{"a pseudo-version after a tag", main(modulePath, "v0.2.1-0.20260101120000-0123456789ab+incompatible"),
			"module github.com/flagos-ai/flagshim v0.2.1-0.20260101120000-0123456789ab+incompatible, commit 0123456789ab"},
		{"a pre-release is no pseudo-version", main(modulePath, "v0.3.0-rc.1"), "module github.com/flagos-ai/flagshim v0.3.0-rc.1"},
		{"a dependency at a commit", func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{
				Main: debug.Module{Path: "example.com/acme", Version: "v1.0.0"},
				Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0-20260101120000-0123456789ab"}},
			}, true
		}, "module github.com/flagos-ai/flagshim v0.0.0-20260101120000-0123456789ab, commit 0123456789ab"},
		{"a dependency of another program", func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{
				Main: debug.Module{Path: "example.com/acme", Version: "v1.0.0"},
				Deps: []*debug.Module{{Path: "go.uber.org/zap", Version: "v1.28.0"}, {Path: modulePath, Version: "v0.2.0"}},
				// The program's commit is not flagshim's: not shown.
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "feedface"}},
			}, true
		}, "module github.com/flagos-ai/flagshim v0.2.0"},
		{"a replaced dependency", func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{
				Main: debug.Module{Path: "example.com/acme"},
				Deps: []*debug.Module{{Path: modulePath, Version: "v0.2.0", Replace: &debug.Module{Path: "../flagshim"}}},
			}, true
		}, "module github.com/flagos-ai/flagshim (devel)"},
		{"not in the build information", main("example.com/other", "v1.0.0"), "module github.com/flagos-ai/flagshim not in the build information"},
		{"no build information", func() (*debug.BuildInfo, bool) { return nil, false }, "module version unknown: no build information in the binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := readBuildInfo
			readBuildInfo = tt.info
			t.Cleanup(func() { readBuildInfo = prev })
			assert.Equal(t, tt.want, moduleVersion(buildVersion()))
			assert.Equal(t, "flagshim "+Version+", "+tt.want+", "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n", versionLine())
		})
	}
}

// The version and --version forms print the same line, from the real build
// information of the test binary.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}, {"-v", "version"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Equal(t, versionLine(), out, args)
		assert.Empty(t, errOut, args)
	}
	assert.Regexp(t, `^flagshim \d+\.\d+\.\d+\S*, module github.com/flagos-ai/flagshim \S+(, commit [0-9a-f]+(\+dirty)?)?, go\S+ \w+/\w+\n$`, versionLine())
}

// version --json is one JSON object with the facts of the line, one a key,
// before the command or after it; the fields say what the line says.
func TestVersionJSON(t *testing.T) {
	prev := readBuildInfo
	t.Cleanup(func() { readBuildInfo = prev })
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	for _, args := range [][]string{{"version", "--json"}, {"--json", "version"}, {"--json", "--version"}, {"-v", "version", "-json"}} {
		code, out, errOut := runCLI(args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errOut)
		assert.Empty(t, errOut)
		dec := json.NewDecoder(strings.NewReader(out))
		var v map[string]any
		require.NoError(t, dec.Decode(&v), args)
		assert.False(t, dec.More(), "%v: one JSON object", args)
		assert.Equal(t, map[string]any{
			"schema_version": float64(report.SchemaVersion), "version": Version, "module": modulePath,
			"module_version": "(devel)", "commit": "0123456789ab", "modified": true,
			"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH,
		}, v, args)
		assert.True(t, strings.HasPrefix(out, "{\n  \"schema_version\": "), "schema_version first")
	}
	readBuildInfo = func() (*debug.BuildInfo, bool) { return nil, false }
	_, out, _ := runCLI("version", "--json")
	var v versionInfo
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "module version unknown: no build information in the binary", v.Note)
	assert.Empty(t, v.ModuleVersion)
}
