package dl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// system is what the soname search reads besides LD_LIBRARY_PATH: the
// loader's cache and default folders. Tests give a Spec their own (see
// export_test.go); nothing in the environment can change them.
type system struct {
	cache    string   // path of ld.so.cache; "" for none
	defaults []string // the loader's default folders, in order
}

var hostSystem = system{cache: "/etc/ld.so.cache", defaults: defaultDirs}

// search is one run of Open.
type search struct {
	spec     Spec
	getenv   func(string) string
	mode     int
	sys      system
	fs       statFS
	trust    trust
	seen     map[string]bool
	attempts []Attempt
	dry      bool // Find: check, never dlopen
}

func newSearch(spec Spec) *search {
	s := &search{spec: spec, getenv: spec.Getenv, sys: hostSystem, fs: osFS{}, seen: map[string]bool{}}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if spec.sys != nil {
		s.sys = *spec.sys
	}
	s.mode = purego.RTLD_NOW | purego.RTLD_LOCAL
	if spec.Global {
		s.mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	euid := uint32(unix.Geteuid())
	acc := &hostAccounts{euid: euid}
	s.trust = trust{euid: euid, privateGroup: acc.privateTo}
	return s
}

func (s *search) fail(override string, sentinel, cause error) (*Library, error) {
	var soname string
	if len(s.spec.Sonames) > 0 {
		soname = s.spec.Sonames[0]
	}
	return nil, &openError{Failure{Name: s.spec.Name, EnvVar: s.spec.EnvVar, Soname: soname, Override: override, Attempts: s.attempts, Err: sentinel, Cause: cause}}
}

func (s *search) library(path string, h uintptr) *Library {
	return &Library{Name: s.spec.Name, Path: path, Attempts: s.attempts, handle: h}
}

func (s *search) log(path string, err error, from string) {
	s.attempts = append(s.attempts, Attempt{Path: path, Err: err, From: from})
}

// Open finds and opens the library described by spec. Nothing is ever
// opened by a bare name: the search decides which file the dynamic loader
// would pick (override; then for each soname LD_LIBRARY_PATH, ld.so.cache
// and the loader's default folders; then Spec.Dirs), checks it, and opens
// that absolute path. It never panics. The error carries a Failure (FailureOf).
func Open(spec Spec) (*Library, error) { return newSearch(spec).run() }

// Find runs Open's search and every one of its checks but opens nothing:
// the absolute path Open would dlopen, with the attempt log, or Open's
// error. It runs no code of any library (the presence tier uses it to say a
// driver library is there without loading it).
func Find(spec Spec) (path string, attempts []Attempt, err error) {
	s := newSearch(spec)
	s.dry = true
	lib, err := s.run()
	if err != nil {
		var oe *openError
		if errors.As(err, &oe) {
			return "", oe.Attempts, err
		}
		return "", nil, err
	}
	return lib.Path, lib.Attempts, nil
}

func (s *search) run() (*Library, error) {
	spec := s.spec

	// 1. The override: absolute only, no fallback.
	if spec.EnvVar != "" {
		if p := s.getenv(spec.EnvVar); p != "" {
			if !filepath.IsAbs(p) {
				err := fmt.Errorf("%w: %q", ErrRelativeOverride, p)
				s.log(p, err, FromOverride)
				return s.fail(p, ErrRelativeOverride, nil)
			}
			h, err := s.open(p)
			if err != nil {
				s.log(p, err, FromOverride)
				return s.fail(p, sentinelOf(err), err)
			}
			s.log(p, nil, FromOverride)
			return s.library(p, h), nil
		}
	}

	// 2. Each soname where the dynamic loader would look.
	if lib := s.sonames(); lib != nil {
		return lib, nil
	}

	// 3. Well-known absolute folders.
	for _, pattern := range spec.Dirs {
		if pattern == "" {
			continue // an entry for another platform
		}
		dirs := []string{pattern}
		if strings.ContainsAny(pattern, "*?[") {
			m, err := filepath.Glob(pattern)
			if err != nil || len(m) == 0 {
				continue // a pattern that matches nothing is not a place
			}
			slices.Sort(m)
			dirs = m
		}
		for _, dir := range dirs {
			for _, so := range spec.Sonames {
				p := filepath.Join(dir, so)
				if !filepath.IsAbs(p) {
					if !s.seen[p] {
						s.seen[p] = true
						s.log(p, fmt.Errorf("%w: folder %q is relative; relative folders and the working directory are never searched", ErrRelativePath, dir), FromDirs)
					}
					continue
				}
				if h, ok := s.try(p, FromDirs, false); ok {
					s.log(p, nil, FromDirs)
					return s.library(p, h), nil
				}
			}
		}
	}
	return s.fail("", ErrNotFound, nil)
}

// sonames runs the loader's search for each soname in turn and opens the
// first usable file; nil when none is.
func (s *search) sonames() *Library {
	var elems []string
	ldpath := s.getenv("LD_LIBRARY_PATH")
	if ldpath != "" && secureExecution() {
		s.log("LD_LIBRARY_PATH", fmt.Errorf("%w: ignored in a set-user-ID or set-group-ID process, as ld.so ignores it", ErrOpen), FromLibraryPath)
	} else {
		elems = splitLibraryPath(ldpath)
	}
	var cache *ldCache
	if s.sys.cache != "" {
		c, err := readLDCache(s.sys.cache)
		if err != nil {
			s.log(s.sys.cache, fmt.Errorf("%w: %v; its entries are not used (run ldconfig as root to rebuild it)", ErrOpen, err), FromCache)
		}
		cache = c
	}
	for _, so := range s.spec.Sonames {
		if so == "" || strings.ContainsRune(so, '/') {
			s.log(so, fmt.Errorf("%w: a soname must be a bare file name, not %q", ErrOpen, so), "")
			continue
		}
		before := len(s.attempts)
		seenElem := map[string]bool{}
		for _, elem := range elems {
			if err := libraryPathElement(elem); err != nil {
				if !seenElem[elem] {
					seenElem[elem] = true
					s.log(relCandidate(elem, so), err, FromLibraryPath)
				}
				continue
			}
			p := filepath.Join(elem, so)
			if h, ok := s.try(p, FromLibraryPath, false); ok {
				return s.chose(so, p, FromLibraryPath, h)
			}
		}
		if v := cache.lookup(so); v != "" {
			if !filepath.IsAbs(v) {
				s.log(v, fmt.Errorf("%w: the ld.so.cache entry for %s is not an absolute path", ErrRelativePath, so), FromCache)
			} else if h, ok := s.try(filepath.Clean(v), FromCache, true); ok {
				return s.chose(so, filepath.Clean(v), FromCache, h)
			}
		}
		for _, dir := range s.sys.defaults {
			p := filepath.Join(dir, so)
			if h, ok := s.try(p, FromDefault, false); ok {
				return s.chose(so, p, FromDefault, h)
			}
		}
		why := "not found"
		if n := len(s.attempts) - before; n > 0 {
			why = fmt.Sprintf("no usable file (%d candidate(s) refused, see above)", n)
		}
		s.log(so, fmt.Errorf("%w: %s in LD_LIBRARY_PATH (%s), %s or the loader's default folders (%s)",
			ErrNotFound, why, orUnset(ldpath), orNone(s.sys.cache), strings.Join(s.sys.defaults, ", ")), "")
	}
	return nil
}

// chose records the file chosen for soname and returns it opened.
func (s *search) chose(so, p, from string, h uintptr) *Library {
	s.attempts = append(s.attempts, Attempt{Path: so, File: p, From: from})
	return s.library(p, h)
}

// try checks and opens the candidate p once per search. A candidate that
// does not exist is logged only when logMissing is set; any other failure
// is logged with its reason. ok reports an opened handle.
func (s *search) try(p, from string, logMissing bool) (h uintptr, ok bool) {
	if s.seen[p] {
		return 0, false
	}
	s.seen[p] = true
	h, err := s.open(p)
	if err == nil {
		return h, true // in a dry run h is 0 and nothing was opened
	}
	if errors.Is(err, fs.ErrNotExist) && !logMissing {
		return 0, false
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w (a stale entry: run ldconfig as root)", err)
	}
	s.log(p, err, from)
	return 0, false
}

// open checks the absolute path p and dlopens it: the chain from / to the
// file and each link hop safe (checkChain), not under a stubs folder, a
// well-formed shared object for this machine (checkELF). The file loaded
// is the one checked: it is opened once, proven to be the file the chain
// check saw, checked through its descriptor and loaded through it
// (loadChecked), so a path changed meanwhile loads nothing else.
func (s *search) open(p string) (uintptr, error) {
	// A plain stat first (it reads no file's content): a missing file gets
	// the short message "stat /x/libcuda.so.1: no such file or directory".
	if _, err := os.Stat(p); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrOpen, err)
	}
	real, st, err := checkChainStat(s.fs, s.trust, p)
	if err != nil {
		return 0, err
	}
	if isStub(p) {
		return 0, fmt.Errorf("%w: %s is under a stubs folder (a link-time stub, not a driver)", ErrStubPath, p)
	}
	if isStub(real) {
		return 0, fmt.Errorf("%w: %s resolves to %s, under a stubs folder (a link-time stub, not a driver)", ErrStubPath, p, real)
	}
	if s.dry {
		return 0, checkELFFile(real) // Find: nothing is loaded
	}
	return s.loadChecked(p, real, st)
}

func isStub(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(p)), "/") {
		if part == "stubs" {
			return true
		}
	}
	return false
}

// relCandidate is how a refused LD_LIBRARY_PATH element shows in the log:
// the file ld.so would have tried ("./" for an empty element, as ld.so reads
// it).
func relCandidate(elem, so string) string {
	if elem == "" {
		elem = "."
	}
	return elem + "/" + so
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return fmt.Sprintf("%q", v)
}

func orNone(cache string) string {
	if cache == "" {
		return "no ld.so.cache"
	}
	return cache
}
