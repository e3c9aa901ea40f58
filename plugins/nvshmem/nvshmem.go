package nvshmem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
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

// codes are nvshmemx_status, in the order of non_abi/nvshmemx_error.h of
// the NVSHMEM 3.4.5 wheel (read on the H200 machine). A non-zero status is
// a *clib.Error of library "nvshmem" that matches ErrCall ("nvshmem:
// nvshmemx_cumodule_init returned NVSHMEMX_ERROR_INTERNAL (7)").
var codes = &clib.Codes{
	Library: "nvshmem",
	Names: map[int]string{0: "NVSHMEMX_SUCCESS", 1: "NVSHMEMX_ERROR_INVALID_VALUE", 2: "NVSHMEMX_ERROR_OUT_OF_MEMORY",
		3: "NVSHMEMX_ERROR_NOT_SUPPORTED", 4: "NVSHMEMX_ERROR_SYMMETRY", 5: "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
		6: "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED", 7: "NVSHMEMX_ERROR_INTERNAL"},
	Always: []error{ErrCall},
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
	h        *clib.Handle
	s        syms
	opts     options
	uid      *UniqueID // kept alive: nvshmemx_set_attr_uniqueid_args stores a pointer to it
	attr     *initAttr
	done     bool           // finalized
	attached bool           // Attach: the host owns NVSHMEM
	remove   []func() error // hooks registered through Register
}

type syms struct {
	getUniqueID, setAttrUniqueID, hostlibInit, hostlibFinalize clib.Func
	initStatus, myPE, nPEs, cumoduleInit, cumoduleFinalize     clib.Func
	vendorVersion                                              clib.Func // optional
}

// table is the binding's symbol table (nvshmemx.h of NVSHMEM 3).
func (s *syms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.getUniqueID, Names: []string{"nvshmemx_get_uniqueid"}, Required: true, Sig: "p"},
		{Fn: &s.setAttrUniqueID, Names: []string{"nvshmemx_set_attr_uniqueid_args"}, Required: true, Sig: "iipp"},
		{Fn: &s.hostlibInit, Names: []string{"nvshmemx_hostlib_init_attr"}, Required: true, Sig: "up"},
		{Fn: &s.hostlibFinalize, Names: []string{"nvshmemx_hostlib_finalize"}, Required: true},
		{Fn: &s.initStatus, Names: []string{"nvshmemx_init_status"}, Required: true},
		{Fn: &s.myPE, Names: []string{"nvshmem_my_pe"}, Required: true},
		{Fn: &s.nPEs, Names: []string{"nvshmem_n_pes"}, Required: true},
		{Fn: &s.cumoduleInit, Names: []string{"nvshmemx_cumodule_init"}, Required: true, Sig: "h"},
		{Fn: &s.cumoduleFinalize, Names: []string{"nvshmemx_cumodule_finalize"}, Required: true, Sig: "h"},
		{Fn: &s.vendorVersion, Names: []string{"nvshmemx_vendor_get_version_info"}, Sig: "ppp"},
	}
}

// library is where Open looks, with getenv for $VIRTUAL_ENV, $HOME and
// $CONDA_PREFIX (nil: os.Getenv).
func library(getenv func(string) string) clib.Library {
	if getenv == nil {
		getenv = os.Getenv
	}
	return clib.Library{
		Name:    "libnvshmem_host",
		EnvVar:  EnvVar,
		Sonames: []string{Soname},
		Dirs:    wheelDirs(getenv),
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
	lib, err := library(o.getenv).Open(o.getenv)
	if err != nil {
		hint := fmt.Sprintf("install the NVSHMEM wheel (pip install nvidia-nvshmem-cu12 or -cu13), add its nvidia/nvshmem/lib folder to LD_LIBRARY_PATH, or set %s=/abs/path/to/%s", EnvVar, Soname)
		if errors.Is(err, clib.ErrNotFound) {
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
	lib, err := clib.Loaded(library(o.getenv))
	if err != nil {
		if errors.Is(err, clib.ErrNotLoaded) {
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
		return nil, fmt.Errorf("%w: the host's NVSHMEM (%s) reports %v; initialize it before attaching", ErrNotInitialized, lib.Path(), st)
	}
	return l, nil
}

// fromLibrary resolves the plugin's functions in an opened library.
func fromLibrary(lib *clib.Handle, o options) (*Lib, error) {
	l := &Lib{Path: lib.Path(), Attempts: clib.Attempts(lib.Attempts()), opts: o, h: lib}
	if err := lib.Resolve("nvshmem", l.s.table()); err != nil {
		return nil, fmt.Errorf("nvshmem: %s is not a usable NVSHMEM 3 host library: %w", lib.Path(), err)
	}
	return l, nil
}

// call runs fn with values (no Go addresses) and returns its int result.
func call(fn *clib.Func, args ...uintptr) int { return clib.Code(fn.CallList(args)) }

// Version is the library's vendor version (3, 4, 5); ok is false when the
// library does not export nvshmemx_vendor_get_version_info.
func (l *Lib) Version() (major, minor, patch int, ok bool) {
	if !l.s.vendorVersion.OK() {
		return 0, 0, 0, false
	}
	var v [3]int32
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s.vendorVersion.Call(uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&v[1])), uintptr(unsafe.Pointer(&v[2])))
	return int(v[0]), int(v[1]), int(v[2]), true
}

// InitStatus is nvshmemx_init_status().
func (l *Lib) InitStatus() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status()
}

func (l *Lib) status() Status { return Status(call(&l.s.initStatus)) }

// MyPE is nvshmem_my_pe(); meaningful once initialized.
func (l *Lib) MyPE() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return call(&l.s.myPE)
}

// NPEs is nvshmem_n_pes(); meaningful once initialized.
func (l *Lib) NPEs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return call(&l.s.nPEs)
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
	rc := l.s.getUniqueID.CallCode(uintptr(unsafe.Pointer(uid)))
	runtime.KeepAlive(uid)
	if err := codes.Check("nvshmemx_get_uniqueid", rc); err != nil {
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
		rc := l.s.setAttrUniqueID.CallCode(uintptr(rank), uintptr(nranks), uintptr(unsafe.Pointer(l.uid)), uintptr(unsafe.Pointer(l.attr)))
		if err := codes.Check("nvshmemx_set_attr_uniqueid_args", rc); err != nil {
			return err
		}
		rc = l.s.hostlibInit.CallCode(initWithUniqueID, uintptr(unsafe.Pointer(l.attr)))
		runtime.KeepAlive(l.uid)
		runtime.KeepAlive(l.attr)
		if err := codes.Check("nvshmemx_hostlib_init_attr", rc); err != nil {
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
	err := l.withContext(func() error { rc = call(&l.s.cumoduleInit, module); return nil })
	return rc, err
}

// moduleCall runs fn (cumodule init or finalize) on m under the rules of the
// hook.
func (l *Lib) moduleCall(name string, fn *clib.Func, m device.Module) error {
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
	return l.withContext(func() error { return codes.Check(name, call(fn, m.Handle())) })
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
		errs = append(errs, l.withContext(func() error { call(&l.s.hostlibFinalize); return nil }))
	}
	return errors.Join(errs...)
}
