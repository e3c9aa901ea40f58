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
// (of a package the program imports through another) or flag is a fresh
// build, and a fresh build of the same package, flags
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
	// main imports mid, which imports dep; the version is in dep, in a
	// function never inlined: a change there moves neither mid's compiled
	// package nor main's, only dep's and the linked program (the cache once
	// keyed builds by the main package's build ID alone, and served a stale
	// cmd/flagshim after a change to report/report.go).
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "mid"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "dep"), 0o755))
	write(filepath.Join("mid", "mid.go"), "package mid\n\nimport \"example.com/gobuildcache/dep\"\n\n//go:noinline\nfunc Tag() string { return dep.Tag() }\n")
	// No fmt: the smallest program links fastest (four builds).
	write("main.go", "package main\n\nimport (\n\t\"os\"\n\n\t\"example.com/gobuildcache/mid\"\n)\n\n"+
		"var tag string\n\nfunc main() {\n\tif tag == \"\" {\n\t\ttag = mid.Tag()\n\t}\n\tos.Stdout.WriteString(\"build \" + tag + \"\\n\")\n}\n")
	source := func(v string) {
		write(filepath.Join("dep", "dep.go"), "package dep\n\n//go:noinline\nfunc Tag() string { return \""+v+"\" }\n")
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

	// A changed source, two imports away, is another key: a fresh build,
	// which replaces the stale one.
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
	// -trimpath stays in the key through the family: go list without it
	// computes the same IDs from the build cache the tests filled, instead
	// of compiling everything again in -trimpath's mode.
	assert.Empty(t, listFlags([]string{"-trimpath"}))
	assert.Equal(t, []string{"-buildvcs=false", "-tags=netgo"}, listFlags(append([]string{"-buildvcs=false"}, CSharedFlags...)))
}

// Two builds of one family never run at once: the second waits for the
// first's lock (and then finds its build in the cache), whichever process
// holds it; another family does not wait.
func TestLockFamily(t *testing.T) {
	if cacheDir() == "" {
		t.Skip("the fixtures' cache is off: GoBuild takes no lock")
	}
	name := "lock-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	release := lockFamily(".", name, []string{"-tags=x"})
	other := lockFamily(".", name, []string{"-tags=y"}) // another family: granted at once
	other()
	got := make(chan struct{})
	go func() {
		defer close(got)
		lockFamily(".", name, []string{"-tags=x"})()
	}()
	select {
	case <-got:
		t.Fatal("a second lock of the family was granted while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	<-got // granted once released (go test's timeout catches a hang)
}

// buildIDs keys a build by every package's ID; a list it cannot read
// whole turns the cache off (a fresh build), never a key that leaves a
// package out.
func TestBuildIDs(t *testing.T) {
	const good = "true\tunsafe\t\t/go/src/unsafe\ntrue\tos\tA/B\t/go/src/os\ntrue\tex/dep\tC/D\t/m/dep\nfalse\tex\tE/F\t/m\n"
	dir, ids, ok := buildIDs(good)
	require.True(t, ok)
	assert.Equal(t, "/m", dir)
	assert.Equal(t, "unsafe \nos A/B\nex/dep C/D\nex E/F\n", ids)
	_, changed, _ := buildIDs(strings.Replace(good, "C/D", "C/X", 1))
	assert.NotEqual(t, ids, changed, "a dependency's ID is in the key")

	for name, listed := range map[string]string{
		"empty":                "",
		"no package asked":     "true\tos\tA/B\t/go/src/os\n",
		"two packages asked":   "false\ta\tA/B\t/a\nfalse\tb\tC/D\t/b\n",
		"a dependency's ID":    "true\tex/dep\t\t/m/dep\nfalse\tex\tE/F\t/m\n",
		"the package's ID":     "false\tex\t\t/m\n",
		"the package's folder": "false\tex\tE/F\t\n",
		"a short line":         "true\tos\nfalse\tex\tE/F\t/m\n",
	} {
		_, _, ok := buildIDs(listed)
		assert.False(t, ok, name)
	}
}

func FuzzBuildIDs(f *testing.F) {
	f.Add("true\tos\tA/B\t/go/src/os\nfalse\tex\tE/F\t/m\n")
	f.Add("false\tex\t\t/m")
	f.Fuzz(func(t *testing.T, listed string) {
		dir, ids, ok := buildIDs(listed)
		if ok {
			assert.NotEmpty(t, dir)
			assert.NotEmpty(t, ids)
		}
	})
}
