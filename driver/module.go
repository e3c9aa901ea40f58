package driver

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// Module is a module loaded on one device by Backend.LoadModule: a
// device.LoadedModule. Hooks see this very pointer, from Apply to Release.
// Its methods are safe for concurrent use; each makes the module's device's
// context current on a locked OS thread.
type Module struct {
	// What a launch reads first, in one cache line.
	b    *Backend
	s    *state
	dev  *devState
	gone atomic.Bool
	// launches serialises launches of the module's functions on the
	// device's default stream, as Stream.launches does a stream's (kept
	// here, in the line a launch reads anyway: launches of two modules on
	// one device's default stream still meet in the driver, which is
	// correct, only slower under contention).
	launches sync.Mutex
	h        uintptr
	label    string

	mu sync.Mutex // serialises Unload
	// The allocator places a 128-byte object at a multiple of 128 bytes
	// (its size class's spans are page-aligned), so the line above is one
	// cache line; TestLaunchRecordsLayout keeps the size.
	_ [56]byte
}

var _ device.LoadedModule = (*Module)(nil)

// Function is a kernel of a Module, for Launch: a device.Function.
type Function struct {
	// What a launch reads comes first, in the first two cache lines (a
	// pair, which processors fetch together): a real driver's launch
	// leaves little of them cached for the next.
	h       uintptr
	m       *Module
	ordinal int // m's device, for the check that a launch names it
	// nparams is how many parameters the kernel takes and psize each
	// one's size, where the driver says (OpFuncGetParamInfo); nparams is
	// -1 where it cannot.
	nparams int
	// call is the launch prepared (cuLaunchKernel after the device's
	// selection: clib.Prepared), the eleven arguments given at each
	// launch; not OK where the vendor's shape or the platform has none,
	// and a launch then goes the general way.
	call  clib.Prepared
	psize [MaxLaunchArgs]uint16
	name  string
	// 256 bytes: the allocator places such an object at a multiple of
	// 256, so the fields above start a cache line (TestLaunchRecordsLayout).
	_ [16]byte
}

var _ device.Function = (*Function)(nil)

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// Handle is the driver's function handle (CUfunction, hipFunction_t).
func (f *Function) Handle() uintptr { return f.h }

// Module is the module the function belongs to.
func (f *Function) Module() *Module { return f.m }

// Backend is the vendor's device type (device.Module).
func (m *Module) Backend() device.Type { return m.b.v.Type }

// Handle is the driver's module handle (CUmodule, hipModule_t); it stays
// readable after Unload, for messages, but is then stale.
func (m *Module) Handle() uintptr { return m.h }

// Label names the module in messages: the label given to LoadModule, or
// "module#N".
func (m *Module) Label() string { return m.label }

// Device is the index of the device the module is loaded on.
func (m *Module) Device() int { return m.dev.ordinal }

// Unloaded reports whether Unload has completed.
func (m *Module) Unloaded() bool { return m.gone.Load() }

// Applied names the hooks applied to the module, in order (diagnostics).
func (m *Module) Applied() []string { return m.b.o.hooks.Applied(m) }

// Image formats LoadModule tells apart by their first bytes.
var (
	elfMagic    = []byte{0x7f, 'E', 'L', 'F'}    // cubin, HSA code object
	fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba} // fatbin (0xBA55ED50, little-endian)
)

// moduleImage returns the bytes to hand the driver: binary images as they
// are; anything else is text (PTX), which the driver reads up to a NUL, so it
// is copied with one appended unless it ends with one.
func moduleImage(image []byte) []byte {
	if bytes.HasPrefix(image, elfMagic) || bytes.HasPrefix(image, fatbinMagic) || image[len(image)-1] == 0 {
		return image
	}
	img := make([]byte, len(image)+1)
	copy(img, image)
	return img
}

// cName is name with a NUL appended; an empty name or one holding a NUL is
// an error matching device.ErrInvalidValue.
func cName(what, name string) ([]byte, error) {
	if name == "" || bytes.IndexByte([]byte(name), 0) >= 0 {
		return nil, fmt.Errorf("%w: %s name %q", device.ErrInvalidValue, what, name)
	}
	return append([]byte(name), 0), nil
}

// LoadModule loads a PTX (a NUL is appended when missing), cubin or fatbin
// image (HIP: a code object) on device index with the JIT's error log in the
// error on failure, and applies the backend's hooks. A failing or panicking
// hook fails this load only: its error names the hook, and the module is
// unloaded. label names the module in messages ("" gives "module#N").
func (b *Backend) LoadModule(index int, image []byte, label string) (device.LoadedModule, error) {
	s, err := b.ready("modules", OpModuleUnload, OpModuleGetFunction, OpModuleGetGlobal)
	if err != nil {
		return nil, err
	}
	if !s.api.has(OpModuleLoadData) && !s.api.has(OpModuleLoadDataEx) {
		return nil, s.lacks("modules", OpModuleLoadData)
	}
	if label == "" {
		label = "module#" + strconv.FormatUint(b.modSeq.Add(1), 10)
	}
	if len(image) == 0 {
		return nil, fmt.Errorf("%w: %s: LoadModule(%q): empty image", device.ErrInvalidImage, b.v.Type, label)
	}
	img := moduleImage(image)
	s, d, err := b.enter(index)
	if err != nil {
		return nil, err
	}
	h, jitLog, err := s.api.moduleLoad(img)
	leave()
	if err != nil {
		op := OpModuleLoadDataEx
		if !s.api.has(op) {
			op = OpModuleLoadData
		}
		err = fmt.Errorf("%s(device %d, module %q): %w", s.api.sym(op), d.ordinal, label, err)
		if jitLog != "" {
			err = fmt.Errorf("%w; JIT log: %s", err, jitLog)
		}
		return nil, err
	}
	m := &Module{b: b, s: s, dev: d, h: h, label: label}
	if err := b.o.hooks.Apply(m); err != nil {
		uerr := m.unload()
		return nil, errors.Join(fmt.Errorf("%s: module %q on device %d was unloaded: %w", b.v.Type, label, d.ordinal, err), uerr)
	}
	b.o.log.Debug(string(b.v.Type)+" module loaded", zap.String("module", label), zap.Int("device", d.ordinal), zap.Strings("hooks", b.o.hooks.Applied(m)))
	return m, nil
}

// unload calls OpModuleUnload with the module's context current and marks
// the module gone when it succeeds.
func (m *Module) unload() error {
	s := m.s
	if err := s.enterDev(m.dev); err != nil {
		return err
	}
	err := s.api.moduleUnload(m.h)
	leave()
	if err != nil {
		return fmt.Errorf("%s(device %d, module %q): %w", s.api.sym(OpModuleUnload), m.dev.ordinal, m.label, err)
	}
	m.gone.Store(true)
	return nil
}

func (m *Module) releasedErr(op string) error {
	return fmt.Errorf("%w: %s: %s on module %q (device %d), which was unloaded", device.ErrReleased, m.b.v.Type, op, m.label, m.dev.ordinal)
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
	if err := m.b.o.hooks.Release(m); err != nil {
		herr = fmt.Errorf("%s: finalizing hooks of module %q: %w", m.b.v.Type, m.label, err)
	}
	return errors.Join(herr, m.unload())
}

// Global looks up a global variable of the module (cuModuleGetGlobal_v2).
// A name the module lacks gives ok false and a nil error, as device.Module
// requires.
func (m *Module) Global(name string) (addr uintptr, size uint64, ok bool, err error) {
	if m.gone.Load() {
		return 0, 0, false, m.releasedErr("Global(" + strconv.Quote(name) + ")")
	}
	cname, err := cName("global", name)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%s: module %q: %w", m.b.v.Type, m.label, err)
	}
	s := m.s
	if err := s.enterDev(m.dev); err != nil {
		return 0, 0, false, err
	}
	a, n, err := s.api.moduleGetGlobal(m.h, cname)
	leave()
	switch {
	case err == nil:
		return uintptr(a), n, true, nil
	case errors.Is(err, device.ErrNotFound):
		return 0, 0, false, nil
	}
	return 0, 0, false, fmt.Errorf("%s(device %d, module %q, %q): %w", s.api.sym(OpModuleGetGlobal), m.dev.ordinal, m.label, name, err)
}

// Function looks up a kernel of the module (cuModuleGetFunction). A name
// the module lacks is an error matching device.ErrNotFound.
func (m *Module) Function(name string) (device.Function, error) {
	if m.gone.Load() {
		return nil, m.releasedErr("Function(" + strconv.Quote(name) + ")")
	}
	cname, err := cName("function", name)
	if err != nil {
		return nil, fmt.Errorf("%s: module %q: %w", m.b.v.Type, m.label, err)
	}
	s := m.s
	if err := s.enterDev(m.dev); err != nil {
		return nil, err
	}
	f, err := s.api.moduleGetFunction(m.h, cname)
	var fn *Function
	if err == nil {
		fn = &Function{h: f, m: m, ordinal: m.dev.ordinal, name: name, nparams: -1}
		s.paramInfo(fn)
		if sel := m.dev.sel.Load(); sel != nil { // enterDev made it
			fn.call = s.api.prepare(sel, OpLaunchKernel)
		}
	}
	leave()
	switch {
	case err == nil:
		return fn, nil
	case errors.Is(err, device.ErrNotFound):
		return nil, fmt.Errorf("%s: module %q (device %d) has no function %q: %w", m.b.v.Type, m.label, m.dev.ordinal, name, err)
	}
	return nil, fmt.Errorf("%s(device %d, module %q, %q): %w", s.api.sym(OpModuleGetFunction), m.dev.ordinal, m.label, name, err)
}

// paramInfo learns f's parameters from the driver where it can tell
// (OpFuncGetParamInfo: asked for each index until it answers "invalid
// value", one past the last); otherwise f.nparams stays -1. Called with f's
// device current.
func (s *state) paramInfo(f *Function) {
	if !s.api.has(OpFuncGetParamInfo) {
		return
	}
	for i := 0; i <= MaxLaunchArgs; i++ {
		_, size, err := s.api.funcParamInfo(f.h, i)
		switch {
		case err != nil && errors.Is(err, device.ErrInvalidValue):
			f.nparams = i
			return
		case err != nil:
			return // the driver cannot say: unchecked
		case i < MaxLaunchArgs:
			f.psize[i] = uint16(min(size, 1<<16-1))
		}
	}
	f.nparams = MaxLaunchArgs + 1 // more than Launch takes
}
