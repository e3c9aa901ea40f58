package dl

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

const (
	// rtldDILinkmap is RTLD_DI_LINKMAP of glibc's <dlfcn.h>.
	rtldDILinkmap = 2
	// rtldNoload is RTLD_NOLOAD of glibc's <bits/dlfcn.h> (every Linux
	// architecture but MIPS, which flagshim does not target).
	rtldNoload = 0x00004
	// MaxCString is the bound GoString callers in this module use for C
	// strings: PATH_MAX, enough for a file name or a driver's message.
	MaxCString = 4096
)

// Loaded returns a library that the process has already loaded under one of
// spec.Sonames, without loading anything: each soname is asked for with
// dlopen(RTLD_NOLOAD), which never maps a file or runs its code. It is for
// attaching to a library the host program loaded itself (NVSHMEM in a
// Python process) instead of loading a second copy. The file the loader
// names (dlinfo) must be absolute and pass the same chain check as Open's
// candidates; the ELF check is moot for a mapped file and not applied.
// spec.EnvVar, spec.Dirs and LD_LIBRARY_PATH play no part.
//
// The error carries a Failure (FailureOf) wrapping ErrNotLoaded when no soname is loaded,
// or the reason a loaded copy was refused (ErrUnsafePath, ...).
func Loaded(spec Spec) (*Library, error) {
	s := newSearch(spec)
	mode := s.mode | rtldNoload
	sentinel := ErrNotLoaded
	var cause error
	for _, so := range spec.Sonames {
		if so == "" || strings.ContainsRune(so, '/') {
			s.log(so, fmt.Errorf("%w: a soname must be a bare file name, not %q", ErrOpen, so), FromLoaded)
			continue
		}
		h, err := dlopen(so, mode)
		if err != nil || h == 0 {
			s.log(so, fmt.Errorf("%w: no object with soname %s", ErrNotLoaded, so), FromLoaded)
			continue
		}
		p, err := s.checkLoaded(so, h)
		if err != nil {
			_ = dlclose(h) // balance the RTLD_NOLOAD reference
			s.log(so, err, FromLoaded)
			if sentinel == ErrNotLoaded {
				sentinel, cause = sentinelOf(err), err
			}
			continue
		}
		s.attempts = append(s.attempts, Attempt{Path: so, File: p, From: FromLoaded})
		return s.library(p, h), nil
	}
	return s.fail("", sentinel, cause)
}

// checkLoaded asks the loader which file h is and checks that file's chain.
func (s *search) checkLoaded(so string, h uintptr) (string, error) {
	p := loadedPath(h)
	switch {
	case p == "":
		return "", fmt.Errorf("%w: %s is loaded but the loader does not say from which file", ErrOpen, so)
	case !filepath.IsAbs(p):
		return "", fmt.Errorf("%w: %s was loaded from %q, a path relative to the working directory; load it by an absolute path", ErrRelativePath, so, p)
	case isStub(p):
		return "", fmt.Errorf("%w: %s was loaded from %s, under a stubs folder", ErrStubPath, so, p)
	}
	if _, err := checkChain(s.fs, s.trust, p); err != nil {
		return "", fmt.Errorf("%s was loaded from %s: %w", so, p, err)
	}
	return p, nil
}

var dlinfoAddr = sync.OnceValue(func() uintptr {
	a, err := dlsym(purego.RTLD_DEFAULT, "dlinfo")
	if err != nil {
		return 0
	}
	return a
})

// loadedPath asks the dynamic loader which file the handle h belongs to
// (dlinfo RTLD_DI_LINKMAP, then link_map.l_name), the file checked for an
// object this package loaded through /proc/self/fd/N. It returns "" when
// the loader cannot say.
func loadedPath(h uintptr) string { return checkedName(rawLoadedPath(h)) }

// rawLoadedPath is the loader's own name of h's object (l_name).
func rawLoadedPath(h uintptr) string {
	lm, ok := linkMap(dlinfoAddr(), h)
	if !ok {
		return ""
	}
	// struct link_map { ElfW(Addr) l_addr; char *l_name; ... }
	name := *(*uintptr)(unsafe.Add(ptr(lm), unsafe.Sizeof(uintptr(0))))
	return GoString(name, MaxCString)
}

// linkMap is h's struct link_map (dlinfo RTLD_DI_LINKMAP, through fn).
func linkMap(fn, h uintptr) (uintptr, bool) {
	if fn == 0 || h == 0 {
		return 0, false
	}
	var lm uintptr
	runtime.LockOSThread()
	r, _, _ := purego.SyscallN(fn, h, rtldDILinkmap, uintptr(unsafe.Pointer(&lm)))
	runtime.UnlockOSThread()
	return lm, r == 0 && lm != 0
}

// ptr turns an address owned by C into a pointer without tripping go vet's
// unsafeptr check; the memory is not managed by Go.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
