package dl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// Errors wrapped by the errors of this package; test them with errors.Is.
var (
	ErrNotFound         = errors.New("dl: library not found")
	ErrRelativeOverride = errors.New("dl: override path is not absolute")
	ErrRelativePath     = errors.New("dl: relative or empty search folder")
	ErrUnsafePath       = errors.New("dl: library, a folder above it or a link on its way can be replaced by another user")
	ErrStubPath         = errors.New("dl: stub library folder")
	ErrBadELF           = errors.New("dl: not a well-formed shared library for this machine")
	ErrOpen             = errors.New("dl: cannot open library")
	ErrNotLoaded        = errors.New("dl: library is not loaded in this process")
	ErrMissingSymbol    = errors.New("dl: symbol not found")
	ErrClosed           = errors.New("dl: library is closed")
)

// Where an Attempt's candidate came from (Attempt.From).
const (
	FromOverride    = "override"          // Spec.EnvVar
	FromLibraryPath = "LD_LIBRARY_PATH"   // an element of LD_LIBRARY_PATH
	FromCache       = "ld.so.cache"       // the dynamic loader's cache
	FromDefault     = "default folder"    // the dynamic loader's default folders
	FromDirs        = "well-known folder" // Spec.Dirs
	FromLoaded      = "loaded"            // already in the process (Loaded)
)

// Spec says what to load and where to look.
type Spec struct {
	Name    string              // human name for messages: "libcuda"
	EnvVar  string              // override variable, e.g. FLAGOS_LIBCUDA_PATH; must hold an absolute path
	Sonames []string            // bare names searched as the dynamic loader would: "libcuda.so.1", "libcuda.so"
	Dirs    []string            // well-known absolute folders, in order; entries may be filepath.Glob patterns (matches sorted)
	Getenv  func(string) string // nil: os.Getenv (the override and LD_LIBRARY_PATH are read through it)
	Global  bool                // RTLD_GLOBAL instead of RTLD_LOCAL

	sys *system // nil: this machine's ld.so.cache and default folders (tests replace them)
}

// Attempt is one candidate of the search, or the outcome of one soname.
type Attempt struct {
	// Path is the candidate file, or for the outcome of a soname's search
	// (LD_LIBRARY_PATH, ld.so.cache, default folders) the soname itself.
	Path string
	// Err is nil when this candidate was opened; otherwise why it was
	// skipped or failed.
	Err error
	// File is, for a soname's outcome, the absolute file chosen and opened;
	// "" otherwise.
	File string
	// From says where the candidate came from: one of the From* constants.
	From string
}

// Message is the attempt's error text, "" when the candidate opened.
func (a Attempt) Message() string {
	if a.Err == nil {
		return ""
	}
	return a.Err.Error()
}

// Library is an opened library. Its methods are safe for concurrent use.
type Library struct {
	Name     string    // Spec.Name
	Path     string    // the absolute file that was opened (after its checks)
	Attempts []Attempt // every candidate, in order, the opened one last

	mu     sync.RWMutex
	handle uintptr // 0 once closed
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

// dlopen, dlsym and dlclose run on a locked OS thread: dlerror's message
// belongs to the thread that failed.
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
