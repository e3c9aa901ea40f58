package nvshmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBNVSHMEM_PATH"

// Soname is the host library's name.
const Soname = "libnvshmem_host.so.3"

// Errors of this package; test them with errors.Is.
var (
	ErrNotFound       = errors.New("nvshmem: library not found")
	ErrNotLoaded      = errors.New("nvshmem: library not loaded by the host")
	ErrNotInitialized = errors.New("nvshmem: not initialized")
	ErrAlreadyInit    = errors.New("nvshmem: already initialized")
	ErrInvalid        = errors.New("nvshmem: invalid argument")
	ErrFinalized      = errors.New("nvshmem: library finalized")
	ErrWrongBackend   = errors.New("nvshmem: module is not a CUDA module")
	ErrCall           = errors.New("nvshmem: call failed")
)

// Error is a non-zero status returned by an NVSHMEM function. It matches
// [ErrCall].
type Error struct {
	Func string // "nvshmemx_cumodule_init"
	Code int    // nvshmemx_status: 7 is NVSHMEMX_ERROR_INTERNAL
}

func (e *Error) Error() string {
	return fmt.Sprintf("nvshmem: %s returned %d (%s)", e.Func, e.Code, statusName(e.Code))
}

// Is makes errors.Is(err, ErrCall) true.
func (e *Error) Is(target error) bool { return target == ErrCall }

// statusName names nvshmemx_status, in the order of non_abi/nvshmemx_error.h
// of the NVSHMEM 3.4.5 wheel (read on the H200 machine).
func statusName(code int) string {
	names := []string{"NVSHMEMX_SUCCESS", "NVSHMEMX_ERROR_INVALID_VALUE", "NVSHMEMX_ERROR_OUT_OF_MEMORY",
		"NVSHMEMX_ERROR_NOT_SUPPORTED", "NVSHMEMX_ERROR_SYMMETRY", "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
		"NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED", "NVSHMEMX_ERROR_INTERNAL"}
	if code >= 0 && code < len(names) {
		return names[code]
	}
	return "unknown status"
}

// Option configures Open.
type Option func(*options)

type options struct {
	getenv func(string) string
	device int
	cuda   *driver.Backend
}

// WithGetenv replaces os.Getenv for the search (tests, embedding).
func WithGetenv(f func(string) string) Option {
	return func(o *options) {
		if f != nil {
			o.getenv = f
		}
	}
}

// WithDevice names the CUDA device of this PE (default 0).
func WithDevice(ordinal int) Option { return func(o *options) { o.device = ordinal } }

// Lib is an opened NVSHMEM host library. Its methods are safe for concurrent
// use; calls into the library are serialised.
type Lib struct {
	Path     string           // the file opened
	Attempts []device.Attempt // the search, in order

	mu       sync.Mutex // serialises every call into the library
	lib      *dl.Library
	s        syms
	opts     options
	uid      *UniqueID // kept alive: nvshmemx_set_attr_uniqueid_args stores a pointer to it
	attr     *initAttr
	done     bool           // finalized
	attached bool           // Attach: the host owns NVSHMEM
	remove   []func() error // hooks registered through Register
}

type syms struct {
	getUniqueID, setAttrUniqueID, hostlibInit, hostlibFinalize uintptr
	initStatus, myPE, nPEs, cumoduleInit, cumoduleFinalize     uintptr
	vendorVersion                                              uintptr // optional
}

// spec is the library search of Open, with getenv for $VIRTUAL_ENV, $HOME
// and $CONDA_PREFIX (nil: os.Getenv).
func spec(getenv func(string) string) dl.Spec {
	if getenv == nil {
		getenv = os.Getenv
	}
	return dl.Spec{
		Name:    "libnvshmem_host",
		EnvVar:  EnvVar,
		Sonames: []string{Soname},
		Dirs:    wheelDirs(getenv),
		Getenv:  getenv,
	}
}

// wheelDirs lists where pip puts the nvidia-nvshmem-cu* wheel's library.
func wheelDirs(getenv func(string) string) []string {
	const sub = "nvidia/nvshmem/lib"
	var dirs []string
	add := func(root string) {
		if root == "" || !filepath.IsAbs(root) {
			return // never relative to the working directory
		}
		for _, sp := range []string{"site-packages", "dist-packages"} {
			dirs = append(dirs, filepath.Join(root, "lib", "python3*", sp, sub))
		}
	}
	add(getenv("VIRTUAL_ENV"))
	add(getenv("CONDA_PREFIX"))
	if home := getenv("HOME"); home != "" {
		add(filepath.Join(home, ".local"))
	}
	add("/usr/local")
	dirs = append(dirs, filepath.Join("/usr/lib/python3/dist-packages", sub))
	add("/usr")
	add("/opt/conda")
	return dirs
}

// Open finds and opens libnvshmem_host.so.3 and resolves the functions the
// plugin calls. It opens nothing else until a call needs a CUDA context.
func Open(opts ...Option) (*Lib, error) {
	o := options{getenv: os.Getenv}
	for _, f := range opts {
		f(&o)
	}
	if o.device < 0 {
		return nil, fmt.Errorf("%w: device %d", ErrInvalid, o.device)
	}
	lib, err := dl.Open(spec(o.getenv))
	if err != nil {
		hint := fmt.Sprintf("install the NVSHMEM wheel (pip install nvidia-nvshmem-cu12 or -cu13), add its nvidia/nvshmem/lib folder to LD_LIBRARY_PATH, or set %s=/abs/path/to/%s", EnvVar, Soname)
		if errors.Is(err, dl.ErrNotFound) {
			return nil, fmt.Errorf("%w: %v; %s", ErrNotFound, err, hint)
		}
		return nil, fmt.Errorf("nvshmem: %w", err)
	}
	return fromLibrary(lib, o)
}

// Attach attaches to the NVSHMEM the host process already loaded and
// initialized (a Python host that brought NVSHMEM up with nvshmem4py, say):
// it finds the loaded libnvshmem_host.so.3 without loading a second copy
// (a second copy would be a second, uninitialized NVSHMEM), applies the same
// file checks as Open, and requires nvshmemx_init_status to say
// initialized. The host owns NVSHMEM: Finalize removes the plugin's hooks
// but never finalizes NVSHMEM itself. It fails with ErrNotLoaded when no
// copy is loaded and ErrNotInitialized when it is not initialized.
func Attach(opts ...Option) (*Lib, error) {
	o := options{getenv: os.Getenv}
	for _, f := range opts {
		f(&o)
	}
	if o.device < 0 {
		return nil, fmt.Errorf("%w: device %d", ErrInvalid, o.device)
	}
	lib, err := dl.Loaded(spec(o.getenv))
	if err != nil {
		if errors.Is(err, dl.ErrNotLoaded) {
			return nil, fmt.Errorf("%w: %s is not loaded in this process; load and initialize NVSHMEM first (nvshmem4py), or use Open and InitUniqueID: %v", ErrNotLoaded, Soname, err)
		}
		return nil, fmt.Errorf("nvshmem: %w", err)
	}
	l, err := fromLibrary(lib, o)
	if err != nil {
		return nil, err
	}
	l.attached = true
	if st := l.InitStatus(); !st.Initialized() {
		return nil, fmt.Errorf("%w: the host's NVSHMEM (%s) reports %v; initialize it before attaching", ErrNotInitialized, lib.Path, st)
	}
	return l, nil
}

// fromLibrary resolves the plugin's functions in an opened library.
func fromLibrary(lib *dl.Library, o options) (*Lib, error) {
	var err error
	l := &Lib{Path: lib.Path, lib: lib, opts: o}
	for _, a := range lib.Attempts {
		da := device.Attempt{Path: a.Path}
		if a.Err != nil {
			da.Error = a.Err.Error()
		}
		l.Attempts = append(l.Attempts, da)
	}
	for _, s := range []struct {
		p    *uintptr
		name string
	}{
		{&l.s.getUniqueID, "nvshmemx_get_uniqueid"},
		{&l.s.setAttrUniqueID, "nvshmemx_set_attr_uniqueid_args"},
		{&l.s.hostlibInit, "nvshmemx_hostlib_init_attr"},
		{&l.s.hostlibFinalize, "nvshmemx_hostlib_finalize"},
		{&l.s.initStatus, "nvshmemx_init_status"},
		{&l.s.myPE, "nvshmem_my_pe"},
		{&l.s.nPEs, "nvshmem_n_pes"},
		{&l.s.cumoduleInit, "nvshmemx_cumodule_init"},
		{&l.s.cumoduleFinalize, "nvshmemx_cumodule_finalize"},
	} {
		if *s.p, err = lib.Sym(s.name); err != nil {
			return nil, fmt.Errorf("nvshmem: %s is not a usable NVSHMEM 3 host library: %w", lib.Path, err)
		}
	}
	l.s.vendorVersion, _ = lib.Sym("nvshmemx_vendor_get_version_info")
	return l, nil
}

func call(fn uintptr, args ...uintptr) int {
	r, _, _ := purego.SyscallN(fn, args...)
	return int(int32(uint32(r)))
}

// check turns a status into an error.
func check(fn string, rc int) error {
	if rc != 0 {
		return &Error{Func: fn, Code: rc}
	}
	return nil
}

// Version is the library's vendor version (3, 4, 5); ok is false when the
// library does not export nvshmemx_vendor_get_version_info.
func (l *Lib) Version() (major, minor, patch int, ok bool) {
	if l.s.vendorVersion == 0 {
		return 0, 0, 0, false
	}
	var v [3]int32
	l.mu.Lock()
	defer l.mu.Unlock()
	purego.SyscallN(l.s.vendorVersion, uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&v[1])), uintptr(unsafe.Pointer(&v[2])))
	return int(v[0]), int(v[1]), int(v[2]), true
}

// InitStatus is nvshmemx_init_status().
func (l *Lib) InitStatus() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status()
}

func (l *Lib) status() Status { return Status(call(l.s.initStatus)) }

// MyPE is nvshmem_my_pe(); meaningful once initialized.
func (l *Lib) MyPE() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return call(l.s.myPE)
}

// NPEs is nvshmem_n_pes(); meaningful once initialized.
func (l *Lib) NPEs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return call(l.s.nPEs)
}

// GetUniqueID is nvshmemx_get_uniqueid: rank 0 calls it and hands the bytes
// to every rank (over any channel) before InitUniqueID.
func (l *Lib) GetUniqueID() (UniqueID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return UniqueID{}, ErrFinalized
	}
	uid := newUniqueID()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := call(l.s.getUniqueID, uintptr(unsafe.Pointer(uid)))
	runtime.KeepAlive(uid)
	if err := check("nvshmemx_get_uniqueid", rc); err != nil {
		return UniqueID{}, err
	}
	return *uid, nil
}

// InitUniqueID initialises this process as PE rank of nranks with the
// unique-id bootstrap: nvshmemx_set_attr_uniqueid_args, then
// nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID), on a locked thread
// with the device's primary context current. It is collective: every rank
// calls it with the same uid, and it returns when all have joined. After it,
// the init status must say initialized, or it is an error.
func (l *Lib) InitUniqueID(rank, nranks int, uid UniqueID) error {
	if nranks < 1 || rank < 0 || rank >= nranks || nranks > 1<<31-1 {
		return fmt.Errorf("%w: rank %d of %d PEs", ErrInvalid, rank, nranks)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return ErrFinalized
	}
	if st := l.status(); st != StatusNotInitialized {
		return fmt.Errorf("%w: init status is %v", ErrAlreadyInit, st)
	}
	// Both live in l: NVSHMEM keeps the attribute's pointer to the ID only
	// for the call, but nothing is lost by keeping them.
	l.uid = new(UniqueID)
	*l.uid = uid
	l.attr = newInitAttr()
	return l.withContext(func() error {
		rc := call(l.s.setAttrUniqueID, uintptr(rank), uintptr(nranks), uintptr(unsafe.Pointer(l.uid)), uintptr(unsafe.Pointer(l.attr)))
		if err := check("nvshmemx_set_attr_uniqueid_args", rc); err != nil {
			return err
		}
		rc = call(l.s.hostlibInit, initWithUniqueID, uintptr(unsafe.Pointer(l.attr)))
		runtime.KeepAlive(l.uid)
		runtime.KeepAlive(l.attr)
		if err := check("nvshmemx_hostlib_init_attr", rc); err != nil {
			return err
		}
		if st := l.status(); !st.Initialized() {
			return fmt.Errorf("%w: nvshmemx_hostlib_init_attr returned 0 but the init status is %v (was a CUDA context current?)", ErrNotInitialized, st)
		}
		return nil
	})
}

// CumoduleInit calls nvshmemx_cumodule_init on a raw CUmodule and returns its
// status as is, with no scope and no status check. It is for diagnostics and
// tests (on a plain module it returns 7); loading code uses the hook.
func (l *Lib) CumoduleInit(module uintptr) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rc int
	err := l.withContext(func() error { rc = call(l.s.cumoduleInit, module); return nil })
	return rc, err
}

// moduleCall runs fn (cumodule init or finalize) on m under the rules of the
// hook.
func (l *Lib) moduleCall(name string, fn uintptr, m device.Module) error {
	if b := m.Backend(); b != device.CUDA {
		return fmt.Errorf("%w: %s is a %s module", ErrWrongBackend, m.Label(), b)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return fmt.Errorf("%w: cannot run %s on %s", ErrFinalized, name, m.Label())
	}
	if st := l.status(); !st.Initialized() {
		return fmt.Errorf("%w: init status is %v; call InitUniqueID before loading NVSHMEM modules (%s)", ErrNotInitialized, st, m.Label())
	}
	return l.withContext(func() error { return check(name, call(fn, m.Handle())) })
}

// Finalize removes the hooks registered through Register (finalizing the
// modules they initialized) and then calls nvshmemx_hostlib_finalize when
// NVSHMEM was initialized by this Lib (not after Attach: the host owns it).
// Later calls do nothing.
func (l *Lib) Finalize() error {
	l.mu.Lock()
	removes := l.remove
	l.remove = nil
	l.mu.Unlock()
	var errs []error
	for _, r := range removes {
		if err := r(); err != nil {
			errs = append(errs, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return errors.Join(errs...)
	}
	l.done = true
	if !l.attached && l.status() != StatusNotInitialized {
		errs = append(errs, l.withContext(func() error { call(l.s.hostlibFinalize); return nil }))
	}
	return errors.Join(errs...)
}
