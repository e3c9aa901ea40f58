package dltest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// GoBuild builds the Go package pkg (a path as `go build` takes it,
// relative to the working directory) with cgo on:
//
//	CGO_ENABLED=1 go build -buildvcs=false flags... -o <dir>/name pkg
//
// into a fresh private folder of the test's and returns the output's path;
// what else the build writes beside it (the header of -buildmode=c-shared)
// is in the same folder. It skips the test where there is no go command or
// no C compiler, saying which.
//
// Builds are cached in the fixtures' cache folder, keyed by what decides
// their bytes: the build IDs `go list -deps -export` computes with the same
// flags for the package and every package it imports, directly or not
// (each covers its package's source files, the toolchain and the compile
// flags; the package's own ID alone does not cover a change two imports
// away that leaves the package in between compiled as before), the flags,
// the output's name, the C compiler's version (the external linker) and
// the environment that reaches the build (GOFLAGS, CGO_*FLAGS, CC, GOOS,
// GOARCH, GOAMD64, GOEXPERIMENT). A build replaces the cached builds of the same package
// folder, flags and output name (their sources changed), so the cache
// holds one of each. Go's own cache does not spare these builds: a
// -buildmode=c-shared build compiles every cgo package again each time
// (golang/go#29132), and no build mode keeps a linked output. VCS stamping
// is off, so the bytes depend on nothing the key leaves out. A hit is a
// copy; every failure to use the cache is a fresh build.
func GoBuild(tb testing.TB, pkg, name string, flags ...string) string {
	tb.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go command to build %s with: %v", pkg, err)
	}
	if CC() == "" {
		tb.Skipf("building %s needs cgo, and `go env CC` names no installed C compiler", pkg)
	}
	dir := PrivateDir(tb)
	out := filepath.Join(dir, name)
	flags = append([]string{"-buildvcs=false"}, flags...)
	env := append(os.Environ(), "CGO_ENABLED=1")
	// One build of a family at a time across this user's processes: two
	// test packages that need the same build (cmd/libflagshim's and the
	// Python suite's library) run at once under go test ./..., and in a
	// cold build cache each would otherwise compile the world for it; the
	// second waits and copies the first's.
	defer lockFamily(pkg, name, flags)()
	key := goBuildKey(goTool, env, pkg, name, flags)
	if key != "" && fromGoCache(key, dir) {
		return out
	}
	cmd := exec.Command(goTool, append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("CGO_ENABLED=1 go build %s -o %s %s: %v\n%s", strings.Join(flags, " "), out, pkg, err, b)
	}
	if key != "" {
		toGoCache(key, dir)
	}
	return out
}

// CSharedFlags are the flags every test that builds a c-shared library
// (the C library cmd/libflagshim, the FlagCX plugin cmd/libflagcxshim)
// builds it with: pip's build backend's
// (python/_build_backend/flagshim_build.py). One set of flags makes one
// build, which GoBuild's cache then serves to each test, and one compile of
// the standard library and every dependency in that mode in a cold build
// cache: -trimpath, -tags and the build mode each change every compile, so
// the three sets the tests used (plain, netgo, pip's) compiled the world
// three times in a new user's first run.
var CSharedFlags = []string{"-trimpath", "-tags=netgo", "-buildmode=c-shared"}

// goBuildEnv are the variables whose values reach a build without showing
// in its package's build ID.
var goBuildEnv = []string{"GOFLAGS", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "CC", "CXX", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT"}

// goBuildKey names a build, "" when the cache is off or go cannot say
// what the package's build ID is.
func goBuildKey(goTool string, env []string, pkg, name string, flags []string) string {
	if cacheDir() == "" {
		return ""
	}
	list := exec.Command(goTool, append(append([]string{"list", "-deps", "-export", "-f", "{{.DepOnly}}\t{{.ImportPath}}\t{{.BuildID}}\t{{.Dir}}"},
		listFlags(flags)...), pkg)...)
	list.Env = env
	listed, err := list.Output()
	if err != nil {
		return ""
	}
	dir, ids, ok := buildIDs(string(listed))
	if !ok {
		return ""
	}
	goEnv := exec.Command(goTool, append([]string{"env"}, goBuildEnv...)...)
	goEnv.Env = env
	vars, err := goEnv.Output()
	if err != nil {
		return ""
	}
	// The family: one package (by its folder, however pkg names it), flags
	// and output name.
	family := sha256.Sum256(fmt.Appendf(nil, "go build\x00%s\x00%s\x00%q", dir, name, flags))
	h := sha256.New()
	fmt.Fprintf(h, "%x\x00%s\x00%s\x00%s", family, ids, vars, cache.version)
	return "go-" + hex.EncodeToString(family[:8]) + "-" + hex.EncodeToString(h.Sum(nil))
}

// buildIDs reads go list -deps -export's lines (DepOnly, import path, build
// ID, folder; the package itself and every package it imports, directly or
// not) into the package's folder and the import paths with their build IDs,
// one a line. Every package's ID is in the key, not the package's alone: a
// package's ID moves with its own sources and its direct imports' compiled
// bytes, and a change deeper down (a function body two imports away) can
// leave those bytes as they were, while the linked program changes. ok is
// false where a package other than unsafe (which is never compiled) has no
// ID, or there is not exactly one package asked for.
func buildIDs(listed string) (dir, ids string, ok bool) {
	var b strings.Builder
	roots := 0
	for _, line := range strings.Split(strings.TrimSpace(listed), "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 || f[1] == "" {
			return "", "", false
		}
		if f[2] == "" && f[1] != "unsafe" {
			return "", "", false
		}
		if f[0] == "false" {
			roots++
			dir = f[3]
		}
		fmt.Fprintf(&b, "%s %s\n", f[1], f[2])
	}
	return dir, b.String(), roots == 1 && dir != ""
}

// listFlags are the build flags go list is given for the build ID: all but
// -buildmode and -trimpath, which stay in the key through the family.
// Under -buildmode=c-shared, go list -export writes the package's export
// header as ".h" into its working folder (the test's package folder)
// whenever it compiles; and each of the two makes go list compile every
// package again in a mode of its own (in a cold build cache, the standard
// library and every dependency once more, besides the build's own).
// Without them the ID still moves with every source file, the toolchain
// and the tags (which choose the files).
func listFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		if !strings.HasPrefix(f, "-buildmode=") && f != "-trimpath" {
			out = append(out, f)
		}
	}
	return out
}

// lockFamily takes an exclusive lock for the builds of pkg with flags as
// name, in the fixtures' cache folder, and returns its release; where the
// cache is off or the lock cannot be had, a release that does nothing.
func lockFamily(pkg, name string, flags []string) func() {
	if cacheDir() == "" {
		return func() {}
	}
	dir, err := filepath.Abs(pkg)
	if err != nil {
		return func() {}
	}
	family := sha256.Sum256(fmt.Appendf(nil, "go build lock\x00%s\x00%s\x00%q", dir, name, flags))
	f, err := os.OpenFile(filepath.Join(cacheDir(), "go-"+hex.EncodeToString(family[:8])+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the descriptor releases the lock
}

// fromGoCache copies every file of the cached build key into dir; false
// when there is none or a copy failed.
func fromGoCache(key, dir string) bool {
	src := filepath.Join(cacheDir(), key)
	ents, err := os.ReadDir(src)
	if err != nil || len(ents) == 0 {
		return false
	}
	for _, e := range ents {
		if copyFile(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())) != nil {
			return false
		}
	}
	return true
}

// toGoCache keeps a copy of every file in dir as the build of key: a
// folder filled under a temporary name, then renamed, so a reader sees all
// of a build or none of it. A build already there (another test binary's,
// of the same key) is kept. The builds of the key's family under other
// keys are removed: a reader copying from one when it goes fails its copy
// and builds afresh.
func toGoCache(key, dir string) {
	root := cacheDir()
	tmp, err := os.MkdirTemp(root, "build-*")
	if err != nil {
		return
	}
	ents, err := os.ReadDir(dir)
	if err == nil {
		for _, e := range ents {
			if err = copyFile(filepath.Join(dir, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
				break
			}
		}
	}
	if err != nil || os.Rename(tmp, filepath.Join(root, key)) != nil {
		os.RemoveAll(tmp)
		return
	}
	family := key[:len("go-")+16+1]
	old, _ := filepath.Glob(filepath.Join(root, family+"*"))
	for _, o := range old {
		if filepath.Base(o) != key {
			os.RemoveAll(o)
		}
	}
}
