package gpudrv

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
)

// DevicePtr is an address in device memory (CUdeviceptr, MUdeviceptr).
type DevicePtr uint64

// Function is a kernel of a loaded module, as Module.Function returns it.
// The zero Function is not launchable.
type Function struct {
	h    uintptr
	m    *Module
	name string
}

// Handle is the driver's function handle (CUfunction, MUfunction).
func (f Function) Handle() uintptr { return f.h }

// Name is the kernel's name.
func (f Function) Name() string { return f.name }

// Module is the module the function belongs to; nil for the zero Function.
func (f Function) Module() *Module { return f.m }

// Module is a module loaded on one device by Backend.LoadModule. It
// implements device.Module: the hook registry sees this very pointer, from
// Apply to Release. Its methods are safe for concurrent use; each makes the
// module's device's primary context current on a locked OS thread.
type Module struct {
	b     *Backend
	s     *state
	index int
	h     uintptr
	label string

	mu   sync.Mutex // serialises Unload
	gone atomic.Bool
}

var _ device.Module = (*Module)(nil)

// Backend is the vendor's device type (device.Module).
func (m *Module) Backend() device.Type { return m.b.v.Type }

// Handle is the driver's module handle (CUmodule, MUmodule); it stays
// readable after Unload, for messages, but is then stale.
func (m *Module) Handle() uintptr { return m.h }

// Label names the module in messages: the label given to LoadModule, or
// "module#N".
func (m *Module) Label() string { return m.label }

// Device is the index of the device the module is loaded on.
func (m *Module) Device() int { return m.index }

// Unloaded reports whether Unload has completed.
func (m *Module) Unloaded() bool { return m.gone.Load() }

// Applied names the hooks applied to the module, in order (diagnostics).
func (m *Module) Applied() []string { return m.b.hooks.Applied(m) }

// Image formats LoadModule tells apart by their first bytes.
var (
	elfMagic    = []byte{0x7f, 'E', 'L', 'F'}    // cubin
	fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba} // fatbin (0xBA55ED50, little-endian)
)

// moduleImage returns the bytes to hand the driver: cubin and fatbin
// images as they are; anything else is text (PTX), which the driver reads up
// to a NUL, so it is copied with one appended unless it ends with one.
func moduleImage(image []byte) []byte {
	if bytes.HasPrefix(image, elfMagic) || bytes.HasPrefix(image, fatbinMagic) {
		return image
	}
	if image[len(image)-1] == 0 {
		return image
	}
	img := make([]byte, len(image)+1)
	copy(img, image)
	return img
}

// cString is name with a NUL appended; a name holding a NUL is an error.
func cName(what, name string) ([]byte, error) {
	if name == "" || bytes.IndexByte([]byte(name), 0) >= 0 {
		return nil, fmt.Errorf("invalid %s name %q", what, name)
	}
	return append([]byte(name), 0), nil
}

// CUjit_option values (MUjit_option has the same numbers).
const (
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
	jitLogSize                 = 8192
)

// ModuleLoadData is cuModuleLoadDataEx with an error-log buffer (the JIT's
// own words on a bad PTX), or cuModuleLoadData when the library lacks the
// Ex form. A context must be current.
func (d *Driver) ModuleLoadData(image []byte) (h uintptr, jitLog string, err error) {
	if d.s.moduleLoadDataEx == 0 {
		r, _, _ := purego.SyscallN(d.s.moduleLoadData, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])))
		return h, "", d.check(r)
	}
	logBuf := make([]byte, jitLogSize)
	// optionValues holds the buffer's address: pin the buffer for the call.
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	defer pin.Unpin()
	opts := [2]int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes}
	vals := [2]uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	r, _, _ := purego.SyscallN(d.s.moduleLoadDataEx, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(logBuf)
	if err := d.check(r); err != nil {
		return 0, cString(logBuf), err
	}
	return h, "", nil
}

// enter locks the calling goroutine to its thread and makes device index's
// primary context current there. On success the caller must call
// runtime.UnlockOSThread.
func (s *state) enter(index int) error {
	ctx, err := s.context(index)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	if r := s.setCurrent(ctx); result(r) != resultSuccess {
		runtime.UnlockOSThread()
		return s.opErr("CtxSetCurrent", index, r)
	}
	return nil
}

// ready is nil when the backend is usable, else its unavailable error.
func (b *Backend) ready(s *state) error {
	if s.err != nil {
		return b.unavail(s)
	}
	return nil
}

// lacks is the error of a call that needs an optional symbol the library
// does not have.
func (b *Backend) lacks(s *state, call, suffix string) error {
	return fmt.Errorf("%w: %s lacks %s, which %s needs", b.v.Errors.NotSupported, s.path, b.v.sym(suffix), call)
}

// LoadModule loads image on device index and applies the backend's hooks
// to it. image is PTX text (copied with a NUL appended when it lacks one), a
// cubin (ELF) or a fatbin; the driver copies it during the call. label names
// the module in messages and to hooks ("" gives "module#N").
//
// If a hook fails or panics, the hooks already applied are finalized (by the
// registry), the module is unloaded and the error (a *device.HookError naming
// the hook, matching device.ErrHookFailed) is returned. A PTX the JIT
// rejects gives the driver's error followed by the JIT's log.
func (b *Backend) LoadModule(index int, image []byte, label string) (*Module, error) {
	s := b.load()
	if err := b.ready(s); err != nil {
		return nil, err
	}
	d := &s.drv.s
	switch {
	case d.moduleLoadData == 0 && d.moduleLoadDataEx == 0:
		return nil, b.lacks(s, "LoadModule", "ModuleLoadData")
	case d.moduleUnload == 0:
		return nil, b.lacks(s, "LoadModule", "ModuleUnload")
	case d.moduleGetGlobal == 0:
		return nil, b.lacks(s, "LoadModule", "ModuleGetGlobal_v2")
	}
	load := "ModuleLoadDataEx"
	if d.moduleLoadDataEx == 0 {
		load = "ModuleLoadData"
	}
	if label == "" {
		label = "module#" + strconv.FormatUint(b.modSeq.Add(1), 10)
	}
	if len(image) == 0 {
		return nil, fmt.Errorf("%s: LoadModule %q: empty image", b.v.Pkg, label)
	}
	img := moduleImage(image)
	if err := s.enter(index); err != nil {
		return nil, err
	}
	h, jitLog, err := s.drv.ModuleLoadData(img)
	runtime.UnlockOSThread()
	runtime.KeepAlive(img)
	if err != nil {
		err = fmt.Errorf("%s(device %d, module %q): %w", b.v.sym(load), index, label, err)
		if jitLog != "" {
			err = fmt.Errorf("%w; JIT log: %s", err, jitLog)
		}
		return nil, err
	}
	m := &Module{b: b, s: s, index: index, h: h, label: label}
	if err := b.hooks.Apply(m); err != nil {
		uerr := m.unload()
		return nil, errors.Join(fmt.Errorf("%s: module %q on device %d was unloaded: %w", b.v.Pkg, label, index, err), uerr)
	}
	b.log.Debug(b.v.Pkg+" module loaded", zap.String("module", label), zap.Int("device", index), zap.Strings("hooks", b.hooks.Applied(m)))
	return m, nil
}

// unload calls cuModuleUnload with the module's context current and marks
// the module gone when it succeeds.
func (m *Module) unload() error {
	s := m.s
	if err := s.enter(m.index); err != nil {
		return err
	}
	r := call1(s.drv.s.moduleUnload, m.h)
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return fmt.Errorf("%s(device %d, module %q): %w", m.b.v.sym("ModuleUnload"), m.index, m.label, s.drv.Err(result(r)))
	}
	m.gone.Store(true)
	return nil
}

func (m *Module) unloadedErr(op string) error {
	return fmt.Errorf("%w: %s on module %q (device %d)", m.b.v.Errors.Unloaded, op, m.label, m.index)
}

// Unload finalizes the hooks applied to the module (in reverse order of
// application) and then unloads it. A second call does nothing and returns
// nil. Finalize errors are returned joined with any unload error; the module
// is unloaded either way. If the driver refuses the unload, the module stays
// loaded and Unload may be called again.
func (m *Module) Unload() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone.Load() {
		return nil
	}
	var herr error
	if err := m.b.hooks.Release(m); err != nil {
		herr = fmt.Errorf("%s: finalizing hooks of module %q: %w", m.b.v.Pkg, m.label, err)
	}
	return errors.Join(herr, m.unload())
}

// Global looks up a global variable of the module (cuModuleGetGlobal_v2).
// A name the module lacks gives ok false and a nil error, as device.Module
// requires.
func (m *Module) Global(name string) (addr uintptr, size uint64, ok bool, err error) {
	s := m.s
	if m.gone.Load() {
		return 0, 0, false, m.unloadedErr("Global(" + strconv.Quote(name) + ")")
	}
	cname, err := cName("global", name)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%s: module %q: %w", m.b.v.Pkg, m.label, err)
	}
	if err := s.enter(m.index); err != nil {
		return 0, 0, false, err
	}
	var a, n uint64 // zeroed: a legacy 32-bit writer fills the low halves
	r, _, _ := purego.SyscallN(s.drv.s.moduleGetGlobal, uintptr(unsafe.Pointer(&a)), uintptr(unsafe.Pointer(&n)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	runtime.UnlockOSThread()
	switch result(r) {
	case resultSuccess:
		if !s.drv.v2("ModuleGetGlobal") {
			a, n = a&0xffffffff, n&0xffffffff
		}
		return uintptr(a), n, true, nil
	case resultNotFound:
		return 0, 0, false, nil
	}
	return 0, 0, false, fmt.Errorf("%s(device %d, module %q, %q): %w", s.drv.s.foundName(m.b.v, "ModuleGetGlobal"), m.index, m.label, name, s.drv.Err(result(r)))
}

// foundName is the symbol name found for base, or the vendor's base name.
func (s *syms) foundName(v *Vendor, base string) string {
	if n := s.found[base]; n != "" {
		return n
	}
	return v.sym(base)
}

// Function looks up a kernel of the module (cuModuleGetFunction). A name
// the module lacks is an error matching the vendor's NotFound.
func (m *Module) Function(name string) (Function, error) {
	s := m.s
	if s.drv.s.moduleGetFunction == 0 {
		return Function{}, fmt.Errorf("%w: %s lacks %s", m.b.v.Errors.NotSupported, s.path, m.b.v.sym("ModuleGetFunction"))
	}
	if m.gone.Load() {
		return Function{}, m.unloadedErr("Function(" + strconv.Quote(name) + ")")
	}
	cname, err := cName("function", name)
	if err != nil {
		return Function{}, fmt.Errorf("%s: module %q: %w", m.b.v.Pkg, m.label, err)
	}
	if err := s.enter(m.index); err != nil {
		return Function{}, err
	}
	var f uintptr
	r, _, _ := purego.SyscallN(s.drv.s.moduleGetFunction, uintptr(unsafe.Pointer(&f)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	runtime.UnlockOSThread()
	if code := result(r); code != resultSuccess {
		if code == resultNotFound {
			return Function{}, fmt.Errorf("%s: module %q (device %d) has no function %q: %w", m.b.v.Pkg, m.label, m.index, name, s.drv.Err(code))
		}
		return Function{}, fmt.Errorf("%s(device %d, module %q, %q): %w", m.b.v.sym("ModuleGetFunction"), m.index, m.label, name, s.drv.Err(code))
	}
	return Function{h: f, m: m, name: name}, nil
}

// MaxLaunchArgs is the most arguments Launch takes.
const MaxLaunchArgs = 64

// launchBuf is the memory of one launch: the argument values, the
// kernelParams array pointing at them and SyscallN's argument list. It is
// pinned for the call (kernelParams holds addresses inside it) and reused
// through a pool, so a launch allocates nothing.
type launchBuf struct {
	vals [MaxLaunchArgs]uint64
	ptrs [MaxLaunchArgs]uintptr
	call [11]uintptr
	pin  runtime.Pinner
}

var launchPool = sync.Pool{New: func() any { return new(launchBuf) }}

// set stores argument i as the kernel reads it: 8 bytes for pointers and
// 64-bit scalars, the low 4 bytes (little-endian) for 32-bit ones.
func (lb *launchBuf) set(i int, a any) error {
	var v uint64
	switch x := a.(type) {
	case DevicePtr:
		v = uint64(x)
	case uintptr:
		v = uint64(x)
	case int32:
		v = uint64(uint32(x))
	case uint32:
		v = uint64(x)
	case int64:
		v = uint64(x)
	case uint64:
		v = x
	case float32:
		v = uint64(math.Float32bits(x))
	case float64:
		v = math.Float64bits(x)
	case int:
		return fmt.Errorf("argument %d is a Go int, whose size C does not share: pass int32/uint32 (C int) or int64/uint64", i)
	case uint:
		return fmt.Errorf("argument %d is a Go uint, whose size C does not share: pass int32/uint32 (C int) or int64/uint64", i)
	default:
		// reflect.TypeOf keeps a from escaping, so callers' arguments
		// can stay on their stacks.
		return fmt.Errorf("argument %d has type %s: Launch takes DevicePtr, uintptr, int32, uint32, int64, uint64, float32 and float64", i, reflect.TypeOf(a))
	}
	lb.vals[i] = v
	lb.ptrs[i] = uintptr(unsafe.Pointer(&lb.vals[i]))
	return nil
}

// Launch runs fn on device index with the given grid and block dimensions
// and dynamic shared memory, on the context's default (NULL) stream
// (cuLaunchKernel). args are DevicePtr, uintptr, int32, uint32, int64,
// uint64, float32 or float64 values, in the kernel's parameter order; at
// most MaxLaunchArgs. No Go pointer is kept by the driver after the call:
// the values are copied into a pinned buffer that the driver reads during
// the call.
//
// Launch is asynchronous, as cuLaunchKernel is: it returns once the kernel
// is queued, and a fault in the kernel shows at the next synchronizing call
// (Synchronize, CopyDtoH, CopyHtoD on the same device).
func (b *Backend) Launch(index int, fn Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	s := b.load()
	if err := b.ready(s); err != nil {
		return err
	}
	if s.drv.s.launchKernel == 0 {
		return b.lacks(s, "Launch", "LaunchKernel")
	}
	m := fn.m
	switch {
	case m == nil || fn.h == 0:
		return fmt.Errorf("%s: Launch: the zero Function (use Module.Function)", b.v.Pkg)
	case m.s != s:
		return fmt.Errorf("%s: Launch: function %q belongs to another backend", b.v.Pkg, fn.name)
	case m.index != index:
		return fmt.Errorf("%w: %s: Launch on device %d of function %q of module %q, which is loaded on device %d",
			b.v.Errors.InvalidDevice, b.v.Pkg, index, fn.name, m.label, m.index)
	case m.gone.Load():
		return m.unloadedErr("Launch(" + strconv.Quote(fn.name) + ")")
	case len(args) > MaxLaunchArgs:
		return fmt.Errorf("%s: Launch %q: %d arguments, at most %d", b.v.Pkg, fn.name, len(args), MaxLaunchArgs)
	}
	ctx, err := s.context(index)
	if err != nil {
		return err
	}
	lb := launchPool.Get().(*launchBuf)
	for i, a := range args {
		if err := lb.set(i, a); err != nil {
			launchPool.Put(lb)
			return fmt.Errorf("%s: Launch %q: %w", b.v.Pkg, fn.name, err)
		}
	}
	var params uintptr
	if len(args) > 0 {
		params = uintptr(unsafe.Pointer(&lb.ptrs[0]))
	}
	lb.call = [11]uintptr{fn.h, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(sharedMem), 0, params, 0}
	lb.pin.Pin(lb)
	runtime.LockOSThread()
	r := s.setCurrent(ctx)
	op := "CtxSetCurrent"
	if result(r) == resultSuccess {
		r, _, _ = purego.SyscallN(s.drv.s.launchKernel, lb.call[:]...)
		op = "LaunchKernel"
	}
	runtime.UnlockOSThread()
	lb.pin.Unpin()
	launchPool.Put(lb)
	if result(r) != resultSuccess {
		return fmt.Errorf("%s(device %d, %q of module %q): %w", b.v.sym(op), index, fn.name, m.label, s.drv.Err(result(r)))
	}
	return nil
}

// legacyMax is the largest size the unversioned (32-bit) memory functions
// take.
const legacyMax = math.MaxUint32

func (b *Backend) sizeErr(s *state, base string, n uint64) error {
	if n > legacyMax && !s.drv.v2(base) {
		return fmt.Errorf("%w: %s has only the 32-bit %s: %d bytes is too many", b.v.Errors.NotSupported, s.path, s.drv.s.foundName(b.v, base), n)
	}
	return nil
}

// Alloc allocates n bytes of device memory on device index (cuMemAlloc_v2).
func (b *Backend) Alloc(index int, n uint64) (DevicePtr, error) {
	s := b.load()
	if err := b.ready(s); err != nil {
		return 0, err
	}
	if s.drv.s.memAlloc == 0 {
		return 0, b.lacks(s, "Alloc", "MemAlloc_v2")
	}
	if err := b.sizeErr(s, "MemAlloc", n); err != nil {
		return 0, err
	}
	if err := s.enter(index); err != nil {
		return 0, err
	}
	var p uint64
	r, _, _ := purego.SyscallN(s.drv.s.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n))
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return 0, fmt.Errorf("%s(device %d, %d bytes): %w", s.drv.s.foundName(b.v, "MemAlloc"), index, n, s.drv.Err(result(r)))
	}
	if !s.drv.v2("MemAlloc") {
		p &= 0xffffffff
	}
	return DevicePtr(p), nil
}

// Free frees memory Alloc returned (cuMemFree_v2).
func (b *Backend) Free(index int, p DevicePtr) error {
	s := b.load()
	if err := b.ready(s); err != nil {
		return err
	}
	if s.drv.s.memFree == 0 {
		return b.lacks(s, "Free", "MemFree_v2")
	}
	if err := s.enter(index); err != nil {
		return err
	}
	r := call1(s.drv.s.memFree, uintptr(p))
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return fmt.Errorf("%s(device %d, %#x): %w", s.drv.s.foundName(b.v, "MemFree"), index, uint64(p), s.drv.Err(result(r)))
	}
	return nil
}

// CopyHtoD copies src to device memory at dst on device index
// (cuMemcpyHtoD_v2); it returns when src may be reused.
func (b *Backend) CopyHtoD(index int, dst DevicePtr, src []byte) error {
	s := b.load()
	if err := b.ready(s); err != nil {
		return err
	}
	if s.drv.s.memcpyHtoD == 0 {
		return b.lacks(s, "CopyHtoD", "MemcpyHtoD_v2")
	}
	if len(src) == 0 {
		return nil
	}
	if err := b.sizeErr(s, "MemcpyHtoD", uint64(len(src))); err != nil {
		return err
	}
	if err := s.enter(index); err != nil {
		return err
	}
	r, _, _ := purego.SyscallN(s.drv.s.memcpyHtoD, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", s.drv.s.foundName(b.v, "MemcpyHtoD"), index, uint64(dst), len(src), s.drv.Err(result(r)))
	}
	return nil
}

// CopyDtoH copies len(dst) bytes of device memory at src on device index
// into dst (cuMemcpyDtoH_v2). It waits for the work queued before it on the
// default stream, so it follows a Launch safely.
func (b *Backend) CopyDtoH(index int, dst []byte, src DevicePtr) error {
	s := b.load()
	if err := b.ready(s); err != nil {
		return err
	}
	if s.drv.s.memcpyDtoH == 0 {
		return b.lacks(s, "CopyDtoH", "MemcpyDtoH_v2")
	}
	if len(dst) == 0 {
		return nil
	}
	if err := b.sizeErr(s, "MemcpyDtoH", uint64(len(dst))); err != nil {
		return err
	}
	if err := s.enter(index); err != nil {
		return err
	}
	r, _, _ := purego.SyscallN(s.drv.s.memcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
	runtime.UnlockOSThread()
	if result(r) != resultSuccess {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", s.drv.s.foundName(b.v, "MemcpyDtoH"), index, uint64(src), len(dst), s.drv.Err(result(r)))
	}
	return nil
}
