package cdi

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
)

// maxHops bounds a chain of symbolic links, as the kernel's 40 does.
const maxHops = 40

// Links are the files a container needs for the library at p: each link
// of the chain from p to its real file, the link its soname names beside
// the real file (libcuda.so.1 -> libcuda.so.580.95.05) where it leads to
// the same file, and the real file last. Each is mounted read-only at the
// same path: a bind mount of a link gives the container the real file's
// content there, so the name a program asks for resolves whatever the
// image holds. A real file that others may write to is refused, as the
// loader refuses it.
func Links(p string) (files []string, real string, err error) {
	if !filepath.IsAbs(p) {
		return nil, "", fmt.Errorf("%q is not an absolute path", p)
	}
	cur := filepath.Clean(p)
	for hop := 0; ; hop++ {
		if hop > maxHops {
			return nil, "", fmt.Errorf("%s: more than %d symbolic links", p, maxHops)
		}
		st, err := os.Lstat(cur)
		if err != nil {
			return nil, "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			if !st.Mode().IsRegular() {
				return nil, "", fmt.Errorf("%s is not a regular file", cur)
			}
			if st.Mode().Perm()&0o002 != 0 {
				return nil, "", fmt.Errorf("%s may be written by anyone", cur)
			}
			real = cur
			break
		}
		files = append(files, cur)
		target, err := os.Readlink(cur)
		if err != nil {
			return nil, "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(cur), target)
		}
		cur = filepath.Clean(target)
	}
	if name := soname(real); name != "" {
		rst, err := os.Stat(real)
		for _, dir := range []string{filepath.Dir(real), filepath.Dir(filepath.Clean(p))} {
			link := filepath.Join(dir, name)
			if err != nil || link == real || contains(files, link) {
				continue
			}
			if lst, lerr := os.Stat(link); lerr == nil && os.SameFile(lst, rst) {
				files = append(files, link)
			}
		}
	}
	return append(files, real), real, nil
}

// soname is the DT_SONAME of the shared object at p; "" when it has none
// or is not an ELF file.
func soname(p string) string {
	f, err := elf.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	names, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(names) == 0 || filepath.Base(names[0]) != names[0] {
		return ""
	}
	return names[0]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// glob is filepath.Glob (a variable for tests).
var glob = filepath.Glob
