package dltest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The fixtures' build cache. Every test builds its fakes into a folder of
// its own, and the same fake (the same sources, headers, flags and
// compiler) is built again and again across cases, packages and runs; a
// build is a copy of the cached file instead. The cache is a folder only
// this user can reach (0700, owned by the effective user: checked before
// each use, since the tests load what it holds); where it cannot be made
// so, nothing is cached. FLAGSHIM_TEST_NO_CACHE=1 turns it off.

var cache struct {
	once    sync.Once
	dir     string // "" when unusable
	version string // the compiler's --version
}

func cacheDir() string {
	cache.once.Do(func() {
		if os.Getenv("FLAGSHIM_TEST_NO_CACHE") != "" {
			return
		}
		dir := filepath.Join(os.TempDir(), "flagshim-test-fakes-"+itoa(os.Geteuid()))
		if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
			return
		}
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
			return // not ours alone: never load what it holds
		}
		cc := CC()
		if cc == "" {
			return
		}
		out, err := exec.Command(strings.Fields(cc)[0], append(strings.Fields(cc)[1:], "--version")...).Output()
		if err != nil {
			return
		}
		cache.dir, cache.version = dir, string(out)
	})
	return cache.dir
}

// cacheKey names a build: the compiler and its version, the flags, every
// source and every file of the folders given with -I and of the sources'
// own folders (the headers they may include). "" when the cache is off or
// a file cannot be read.
func cacheKey(cc string, flags, srcs []string) string {
	if cacheDir() == "" {
		return ""
	}
	h := sha256.New()
	io.WriteString(h, cc+"\x00"+cache.version+"\x00")
	dirs := map[string]bool{}
	for _, f := range flags {
		io.WriteString(h, f+"\x00")
		if d, ok := strings.CutPrefix(f, "-I"); ok {
			dirs[d] = true
		}
	}
	for _, src := range srcs {
		dirs[filepath.Dir(src)] = true
		if !hashFile(h, src) {
			return ""
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		ents, err := os.ReadDir(d)
		if err != nil {
			return ""
		}
		for _, e := range ents {
			if name := e.Name(); strings.HasSuffix(name, ".h") || strings.HasSuffix(name, ".c") {
				if !hashFile(h, filepath.Join(d, name)) {
					return ""
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashFile(h io.Writer, p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	io.WriteString(h, p+"\x00")
	_, err = io.Copy(h, f)
	return err == nil
}

// fromCache copies the cached build of key to out; false when there is
// none.
func fromCache(key, out string) bool {
	src := filepath.Join(cacheDir(), key)
	return copyFile(src, out) == nil
}

// toCache keeps a copy of out as the build of key.
func toCache(key, out string) {
	dir := cacheDir()
	tmp, err := os.CreateTemp(dir, "build-*")
	if err != nil {
		return
	}
	tmp.Close()
	if copyFile(out, tmp.Name()) != nil || os.Rename(tmp.Name(), filepath.Join(dir, key)) != nil {
		os.Remove(tmp.Name())
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, 0o755)
}

func itoa(n int) string { return strconv.Itoa(n) }
