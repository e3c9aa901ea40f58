package dl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// Errors wrapped by the errors of this package; test them with errors.Is.
var (
	ErrNotFound         = errors.New("dl: library not found")
	ErrRelativeOverride = errors.New("dl: override path is not absolute")
	ErrUnsafePath       = errors.New("dl: library or its folder is writable by anyone")
	ErrStubPath         = errors.New("dl: stub library folder")
	ErrOpen             = errors.New("dl: cannot open library")
	ErrMissingSymbol    = errors.New("dl: symbol not found")
	ErrClosed           = errors.New("dl: library is closed")
)

// Spec says what to load and where to look.
type Spec struct {
	Name    string              // human name for messages: "libcuda"
	EnvVar  string              // override variable, e.g. FLAGOS_LIBCUDA_PATH; must hold an absolute path
	Sonames []string            // bare names tried through the dynamic loader: "libcuda.so.1", "libcuda.so"
	Dirs    []string            // well-known absolute folders, in order; entries may be filepath.Glob patterns (matches sorted)
	Getenv  func(string) string // nil: os.Getenv
	Global  bool                // RTLD_GLOBAL instead of RTLD_LOCAL
}

// Attempt is one candidate of the search.
type Attempt struct {
	Path string // what was passed to dlopen, or the candidate that was skipped
	Err  error  // nil: this one opened
}

// Library is an opened library. Its methods are safe for concurrent use.
type Library struct {
	Name     string    // Spec.Name
	Path     string    // the file that was opened (resolved through the loader for bare sonames)
	Attempts []Attempt // every candidate, in order, the opened one last

	mu     sync.RWMutex
	handle uintptr // 0 once closed
}

// OpenError is the error of Open. It wraps one of the sentinels (ErrNotFound,
// ErrRelativeOverride, ErrUnsafePath, ErrOpen) and, where there is one, the
// cause.
type OpenError struct {
	Name     string    // Spec.Name
	EnvVar   string    // Spec.EnvVar
	Override string    // the override's value; "" when unset
	Attempts []Attempt // every candidate, in order
	Err      error     // the sentinel
	Cause    error     // the underlying error, if any
}

func (e *OpenError) Error() string {
	var b strings.Builder
	if e.Override != "" {
		fmt.Fprintf(&b, "%s: %s=%q: ", e.Name, e.EnvVar, e.Override)
		switch {
		case errors.Is(e.Err, ErrRelativeOverride):
			fmt.Fprintf(&b, "the path must be absolute (relative paths and the working directory are never searched); set %s=/abs/path/to/%s", e.EnvVar, e.libFile())
		case e.Cause != nil:
			fmt.Fprintf(&b, "%v; fix the file or unset %s to search the usual places", e.Cause, e.EnvVar)
		default:
			fmt.Fprintf(&b, "%v", e.Err)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s not found; tried", e.Name)
	if len(e.Attempts) == 0 {
		b.WriteString(" nothing")
	}
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s (%v)", a.Path, a.Err)
	}
	b.WriteString(". Install the driver, add its folder to LD_LIBRARY_PATH")
	if e.EnvVar != "" {
		fmt.Fprintf(&b, ", or set %s=/abs/path/to/%s", e.EnvVar, e.libFile())
	}
	return b.String()
}

func (e *OpenError) libFile() string {
	return e.Name + ".so.1"
}

// Unwrap gives the sentinel and the cause.
func (e *OpenError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// Open finds and opens the library described by spec. It never panics. The
// error is an *OpenError.
func Open(spec Spec) (*Library, error) {
	getenv := spec.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if spec.Global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	fail := func(attempts []Attempt, override string, sentinel, cause error) (*Library, error) {
		return nil, &OpenError{Name: spec.Name, EnvVar: spec.EnvVar, Override: override, Attempts: attempts, Err: sentinel, Cause: cause}
	}

	// 1. The override: no fallback.
	if spec.EnvVar != "" {
		if p := getenv(spec.EnvVar); p != "" {
			if !filepath.IsAbs(p) {
				err := fmt.Errorf("%w: %q", ErrRelativeOverride, p)
				return fail([]Attempt{{Path: p, Err: err}}, p, ErrRelativeOverride, nil)
			}
			if err := checkFile(p); err != nil {
				return fail([]Attempt{{Path: p, Err: err}}, p, sentinelOf(err), err)
			}
			h, err := dlopen(p, mode)
			if err != nil {
				err = fmt.Errorf("%w: %v", ErrOpen, err)
				return fail([]Attempt{{Path: p, Err: err}}, p, ErrOpen, err)
			}
			return &Library{Name: spec.Name, Path: p, Attempts: []Attempt{{Path: p}}, handle: h}, nil
		}
	}

	var attempts []Attempt
	// 2. Bare sonames through the dynamic loader.
	for _, so := range spec.Sonames {
		if strings.ContainsRune(so, '/') {
			attempts = append(attempts, Attempt{Path: so, Err: fmt.Errorf("%w: a soname must be a bare file name", ErrOpen)})
			continue
		}
		h, err := dlopen(so, mode)
		if err != nil {
			attempts = append(attempts, Attempt{Path: so, Err: err})
			continue
		}
		real := loadedPath(h)
		if real == "" {
			// The loader did not say which file it chose: keep the
			// soname as the path rather than refusing a working library.
			real = so
		} else if err := checkFile(real); err != nil {
			dlclose(h)
			attempts = append(attempts, Attempt{Path: so, Err: fmt.Errorf("loader chose %s: %w", real, err)})
			continue
		}
		attempts = append(attempts, Attempt{Path: so})
		return &Library{Name: spec.Name, Path: real, Attempts: attempts, handle: h}, nil
	}

	// 3. Well-known absolute folders.
	seen := map[string]bool{}
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
				if seen[p] {
					continue
				}
				seen[p] = true
				if !filepath.IsAbs(p) {
					attempts = append(attempts, Attempt{Path: p, Err: fmt.Errorf("%w: relative folders are never searched", ErrOpen)})
					continue
				}
				if _, err := os.Stat(p); err != nil {
					if errors.Is(err, os.ErrNotExist) {
						continue // not there: not worth a line in the log
					}
					attempts = append(attempts, Attempt{Path: p, Err: err})
					continue
				}
				if err := checkFile(p); err != nil {
					attempts = append(attempts, Attempt{Path: p, Err: err})
					continue
				}
				h, err := dlopen(p, mode)
				if err != nil {
					attempts = append(attempts, Attempt{Path: p, Err: err})
					continue
				}
				attempts = append(attempts, Attempt{Path: p})
				return &Library{Name: spec.Name, Path: p, Attempts: attempts, handle: h}, nil
			}
		}
	}
	return fail(attempts, "", ErrNotFound, nil)
}

func sentinelOf(err error) error {
	for _, s := range []error{ErrUnsafePath, ErrStubPath} {
		if errors.Is(err, s) {
			return s
		}
	}
	return ErrOpen
}

// checkFile refuses stub folders and files or folders anyone may write to.
// Both the path as given and the path with symlinks resolved are checked.
func checkFile(p string) error {
	paths := []string{p}
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		paths = append(paths, r)
	}
	for _, q := range paths {
		if isStub(q) {
			return fmt.Errorf("%w: %s is under a stubs folder (a link-time stub, not a driver)", ErrStubPath, q)
		}
		var st unix.Stat_t
		if err := unix.Stat(q, &st); err != nil {
			return fmt.Errorf("%w: stat %s: %v", ErrOpen, q, err)
		}
		if st.Mode&0o002 != 0 {
			return fmt.Errorf("%w: %s has mode %#o; remove write permission for others (chmod o-w)", ErrUnsafePath, q, st.Mode&0o7777)
		}
		dir := filepath.Dir(q)
		if err := unix.Stat(dir, &st); err != nil {
			return fmt.Errorf("%w: stat %s: %v", ErrOpen, dir, err)
		}
		if st.Mode&0o002 != 0 {
			return fmt.Errorf("%w: folder %s has mode %#o; move the library or chmod o-w the folder", ErrUnsafePath, dir, st.Mode&0o7777)
		}
	}
	return nil
}

func isStub(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(p)), "/") {
		if part == "stubs" {
			return true
		}
	}
	return false
}

// Sym resolves one symbol. A missing symbol is an error wrapping
// ErrMissingSymbol that names the symbol and the library.
func (l *Library) Sym(name string) (uintptr, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.handle == 0 {
		return 0, fmt.Errorf("%w: %s (%s) while resolving %s", ErrClosed, l.Name, l.Path, name)
	}
	addr, err := dlsym(l.handle, name)
	if err != nil {
		return 0, fmt.Errorf("%w: %s in %s (%s): %v", ErrMissingSymbol, name, l.Name, l.Path, err)
	}
	return addr, nil
}

// SymAny resolves the first of names that exists, for versioned symbols with
// fallbacks: SymAny("cuDeviceTotalMem_v2", "cuDeviceTotalMem").
func (l *Library) SymAny(names ...string) (addr uintptr, found string, err error) {
	for _, n := range names {
		a, err := l.Sym(n)
		if err == nil {
			return a, n, nil
		}
		if !errors.Is(err, ErrMissingSymbol) {
			return 0, "", err
		}
	}
	return 0, "", fmt.Errorf("%w: none of %s in %s (%s)", ErrMissingSymbol, strings.Join(names, ", "), l.Name, l.Path)
}

// Close releases the handle. Symbols resolved before stay valid only as long
// as the loader keeps the library mapped; drivers never close theirs. A second
// Close does nothing.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handle == 0 {
		return nil
	}
	h := l.handle
	l.handle = 0
	return dlclose(h)
}

func dlopen(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}

func dlsym(h uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(h, name)
}

func dlclose(h uintptr) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlclose(h)
}
