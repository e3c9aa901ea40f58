package clib

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// Library says what a C library is called and where to look for it. The
// search is the loader's (docs/security.md): the override variable (an
// absolute path, no fallback), then each soname as the dynamic loader would
// resolve it, then the well-known folders, skipping anything others can
// write.
type Library struct {
	Name    string   // for messages: "libcuda"
	EnvVar  string   // the override variable: FLAGOS_LIBCUDA_PATH; "" for none
	Sonames []string // "libcuda.so.1", "libcuda.so": the first is the file advice names
	Dirs    []string // absolute folders, in order; filepath.Glob patterns allowed
	// Nodes are the device nodes without which a driver runtime finds no
	// device (HIP: "/dev/kfd"). The driver core does not load a searched
	// library when none of them is a character device (an override is
	// always loaded); other bindings ignore it.
	Nodes []string
	// Global opens the library RTLD_GLOBAL (its symbols then resolve
	// other libraries' references) instead of RTLD_LOCAL.
	Global bool
}

// Errors of the search, wrapped by the errors of Open, Find and Loaded.
var (
	ErrNotFound         = dl.ErrNotFound         // no candidate could be opened
	ErrRelativeOverride = dl.ErrRelativeOverride // the override variable holds a relative path
	ErrUnsafePath       = dl.ErrUnsafePath       // a candidate others can write, refused
	ErrBadELF           = dl.ErrBadELF           // not a shared object of this machine
	ErrNotLoaded        = dl.ErrNotLoaded        // Loaded: no copy in the process
	ErrMissingSymbol    = dl.ErrMissingSymbol    // a function the library lacks
)

// Attempt is one candidate of a search, or the outcome of one soname.
type Attempt struct {
	// Path is the candidate file, or for the outcome of a soname's search
	// (LD_LIBRARY_PATH, ld.so.cache, default folders) the soname itself.
	Path string
	// Err is nil when this candidate was opened; otherwise why it was
	// skipped or failed.
	Err error
	// File is, for a soname's outcome, the absolute file chosen; ""
	// otherwise.
	File string
	// From says where the candidate came from: "override",
	// "LD_LIBRARY_PATH", "ld.so.cache", "default folder", "well-known
	// folder" or "loaded".
	From string
}

// Message is the attempt's error text, "" when the candidate opened.
func (a Attempt) Message() string {
	if a.Err == nil {
		return ""
	}
	return a.Err.Error()
}

func attemptsOf(as []dl.Attempt) []Attempt {
	out := make([]Attempt, 0, len(as))
	for _, a := range as {
		out = append(out, Attempt{Path: a.Path, Err: a.Err, File: a.File, From: a.From})
	}
	return out
}

// OpenError is the error of a search that opened nothing (Open, Find,
// Loaded): every attempt, the override's value when one was set, the
// sentinel (ErrNotFound, ErrRelativeOverride, ErrUnsafePath, ErrBadELF,
// ErrNotLoaded, ...) and its cause. Its message says what was tried and
// what to do. It is flagshim's one error type for a library not opened:
// match it with errors.As (the loader underneath has no error type of its
// own, only the facts this one is made of).
type OpenError struct {
	Name     string    // Library.Name
	EnvVar   string    // Library.EnvVar
	Override string    // the override's value; "" when unset
	Attempts []Attempt // every candidate, in order
	Err      error     // the sentinel
	Cause    error     // the underlying error, if any
	msg      string
}

func (e *OpenError) Error() string { return e.msg }

// Unwrap gives the sentinel and the cause.
func (e *OpenError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// openError converts the loader's error: the same message, every attempt.
func openError(err error) error {
	f, ok := dl.FailureOf(err)
	if !ok {
		return err
	}
	return &OpenError{Name: f.Name, EnvVar: f.EnvVar, Override: f.Override, Attempts: attemptsOf(f.Attempts),
		Err: f.Err, Cause: f.Cause, msg: err.Error()}
}

// Handle is an opened library. Its methods are safe for concurrent use.
// flagshim never closes a driver library: the loader keeps it mapped.
type Handle struct {
	lib *dl.Library
}

// Path is the absolute file that was opened.
func (h *Handle) Path() string { return h.lib.Path }

// Attempts is every candidate of the search, in order, the opened one last.
func (h *Handle) Attempts() []Attempt { return attemptsOf(h.lib.Attempts) }

// Close releases the handle; Funcs resolved from it must not be called
// afterwards. Drivers never close theirs.
func (h *Handle) Close() error { return h.lib.Close() }

func (l Library) spec(getenv func(string) string) dl.Spec {
	if getenv == nil {
		getenv = os.Getenv
	}
	return dl.Spec{Name: l.Name, EnvVar: l.EnvVar, Sonames: l.Sonames, Dirs: l.Dirs, Getenv: getenv, Global: l.Global}
}

// Open finds, checks and opens the library; getenv reads the override
// variable and LD_LIBRARY_PATH (nil: os.Getenv). The error is an
// *OpenError listing every attempt.
func (l Library) Open(getenv func(string) string) (*Handle, error) {
	lib, err := dl.Open(l.spec(getenv))
	if err != nil {
		return nil, openError(err)
	}
	return &Handle{lib: lib}, nil
}

// Find runs Open's search and checks without opening anything, so none of
// the library's code runs: the file Open would open, and every attempt.
func (l Library) Find(getenv func(string) string) (path string, attempts []Attempt, err error) {
	path, as, err := dl.Find(l.spec(getenv))
	return path, attemptsOf(as), openError(err)
}

// Loaded attaches to a copy of the library the process already loaded
// under one of its sonames, loading nothing (dlopen with RTLD_NOLOAD); the
// file must pass the same ownership checks as Open's candidates.
func Loaded(l Library) (*Handle, error) {
	lib, err := dl.Loaded(l.spec(nil))
	if err != nil {
		return nil, openError(err)
	}
	return &Handle{lib: lib}, nil
}

// Attempts converts a search's attempts to the device model's, for
// reports.
func Attempts(as []Attempt) []device.Attempt {
	out := make([]device.Attempt, 0, len(as))
	for _, a := range as {
		out = append(out, device.Attempt{Path: a.Path, Error: a.Message()})
	}
	return out
}

// Tried lists the paths a failed search tried, for messages: "nothing"
// when it tried none.
func Tried(err error) string {
	var oe *OpenError
	if !errors.As(err, &oe) || len(oe.Attempts) == 0 {
		return "nothing"
	}
	paths := make([]string, 0, len(oe.Attempts))
	for _, a := range oe.Attempts {
		paths = append(paths, a.Path)
	}
	return strings.Join(paths, ", ")
}

// MissingSymbolError is Resolve's error for required functions the library
// lacks. It matches ErrMissingSymbol.
type MissingSymbolError struct {
	Library string     // the label the binding gave Resolve: "cuda", "NVML"
	Path    string     // the file
	Missing [][]string // each missing function's names, newest first
}

func (e *MissingSymbolError) Error() string {
	names := make([]string, 0, len(e.Missing))
	for _, m := range e.Missing {
		names = append(names, strings.Join(m, " / "))
	}
	noun := "symbol"
	if len(names) > 1 {
		noun = "symbols"
	}
	return fmt.Sprintf("%s lacks the required %s %s; it is too old or not %s's library", e.Path, noun, strings.Join(names, ", "), e.Library)
}

// Unwrap gives ErrMissingSymbol.
func (e *MissingSymbolError) Unwrap() error { return ErrMissingSymbol }
