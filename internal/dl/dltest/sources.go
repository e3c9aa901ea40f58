package dltest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Sources writes the files of fsys (the C sources and headers a test kit
// embeds) into a folder and returns its absolute path, to give BuildLib as
// a source's folder or with -I. The kits embed their C, so a test binary
// built with -trimpath, or run from a module cache's read-only copy of its
// package, has every file it compiles; nothing is looked up beside the
// kit's Go source.
//
// The folder is named by the files' names and contents, in the fixtures'
// cache folder (see BuildLib): the same files are the same path in every
// run, so a build's cache key (which holds the -I folder's path) is too.
// It is filled under a temporary name and renamed, so a reader sees all of
// it or none. Where the cache is off or unusable, the files go to a
// private folder of tb's instead.
func Sources(tb testing.TB, fsys fs.FS) string {
	tb.Helper()
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		files[p] = b
		return err
	})
	if err != nil {
		tb.Fatalf("dltest: reading embedded sources: %v", err)
	}
	if len(files) == 0 {
		tb.Fatal("dltest: no embedded sources")
	}
	h := sha256.New()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		h.Write([]byte(n + "\x00"))
		h.Write(files[n])
		h.Write([]byte{0})
	}
	root := cacheDir()
	if root == "" {
		dir := PrivateDir(tb)
		if err := writeFiles(dir, files); err != nil {
			tb.Fatalf("dltest: writing embedded sources: %v", err)
		}
		return dir
	}
	dir := filepath.Join(root, "src-"+hex.EncodeToString(h.Sum(nil))[:24])
	if st, err := os.Lstat(dir); err == nil && st.IsDir() {
		return dir
	}
	tmp, err := os.MkdirTemp(root, "srctmp-*")
	if err == nil {
		if err = writeFiles(tmp, files); err == nil {
			err = os.Rename(tmp, dir)
		}
		if err != nil {
			os.RemoveAll(tmp)
		}
	}
	if st, serr := os.Lstat(dir); serr == nil && st.IsDir() {
		return dir // ours, or another process's of the same files
	}
	tb.Fatalf("dltest: writing embedded sources into %s: %v", dir, err)
	return ""
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for n, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
