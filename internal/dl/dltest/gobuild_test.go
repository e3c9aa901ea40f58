package dltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoBuildCache proves the Go build cache on a module of its own: a
// second build of the same sources is a copy of the cached one (a cached
// output replaced by a marker comes back as the marker); a changed source
// or flag is a fresh build, and a fresh build of the same package, flags
// and name replaces the stale one in the cache.
func TestGoBuildCache(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command: %v", err)
	}
	if CC() == "" {
		t.Skip("GoBuild builds with cgo: no C compiler (go env CC)")
	}
	if cacheDir() == "" {
		t.Skip("the fixtures' cache is off (FLAGSHIM_TEST_NO_CACHE, or its folder is not this user's alone): GoBuild builds every time, nothing to test")
	}
	mod := t.TempDir()
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/gobuildcache\n\ngo 1.25\n")
	source := func(v string) {
		// No fmt: the smallest program links fastest (three builds).
		write("main.go", "package main\n\nimport \"os\"\n\nvar tag = \""+v+"\"\n\nfunc main() { os.Stdout.WriteString(\"build \" + tag + \"\\n\") }\n")
	}
	t.Chdir(mod)
	run := func(p string) string {
		out, err := exec.Command(p).CombinedOutput()
		require.NoError(t, err, "%s: %s", p, out)
		return strings.TrimSpace(string(out))
	}
	entries := func() []string {
		m, err := filepath.Glob(filepath.Join(cacheDir(), "go-*"))
		require.NoError(t, err)
		var mine []string
		for _, e := range m {
			if _, err := os.Stat(filepath.Join(e, "prog-"+stamp)); err == nil {
				mine = append(mine, e)
			}
		}
		return mine
	}
	t.Cleanup(func() {
		for _, e := range entries() {
			os.RemoveAll(e)
		}
	})
	name := "prog-" + stamp

	source("v1")
	first := GoBuild(t, ".", name)
	assert.Equal(t, "build v1", run(first))
	cached := entries()
	require.Len(t, cached, 1, "the build is cached")

	// A hit copies the cached output: replace it with a marker.
	marker := "#!/bin/sh\necho from the cache\n"
	require.NoError(t, os.WriteFile(filepath.Join(cached[0], name), []byte(marker), 0o755))
	again := GoBuild(t, ".", name)
	assert.NotEqual(t, first, again, "each build is the test's own copy")
	assert.Equal(t, "from the cache", run(again), "the same sources: a copy of the cached build")

	// A changed source is another key: a fresh build, which replaces the
	// stale one.
	source("v2")
	assert.Equal(t, "build v2", run(GoBuild(t, ".", name)))
	now := entries()
	require.Len(t, now, 1, "one build of the package, flags and name stays cached")
	assert.NotEqual(t, cached[0], now[0])

	// Flags are part of the key.
	assert.Equal(t, "build v3", run(GoBuild(t, ".", name, "-ldflags=-X main.tag=v3")))
	assert.Equal(t, "build v2", run(GoBuild(t, ".", name)), "the unflagged build is still the v2 sources'")
}

// The build ID is asked of go list without -buildmode, which would make it
// write an export header (".h") into the test's package folder.
func TestListFlags(t *testing.T) {
	assert.Equal(t, []string{"-buildvcs=false", "-tags=netgo"}, listFlags([]string{"-buildvcs=false", "-tags=netgo", "-buildmode=c-shared"}))
	assert.Equal(t, []string{"-ldflags=-X main.tag=v3"}, listFlags([]string{"-ldflags=-X main.tag=v3"}))
	assert.Empty(t, listFlags([]string{"-buildmode=plugin"}))
}
