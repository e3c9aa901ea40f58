package devicetest

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim/device"
)

// imagePrefix starts the images AddModule returns.
const imagePrefix = "devicetest-module:"

// Kernel is a fake kernel: a Go function that runs when the kernel is
// launched (at once on the default stream, when its stream is synchronized
// otherwise). An error it returns fails the launch with an error matching
// device.ErrLaunchFailed.
type Kernel func(l *Launch) error

// Module is a fake module: its kernels and its globals (name -> size in
// bytes, zeroed device memory allocated on load).
type Module struct {
	Kernels map[string]Kernel
	Globals map[string]uint64
}

// Launch is what a Kernel is given.
type Launch struct {
	Device      int
	Grid, Block [3]uint32
	SharedMem   uint32
	Args        []any // as given to Launch: device.Ptr, uintptr, fixed-size numbers

	mem *memory
}

// Threads is the number of threads launched: grid times block.
func (l *Launch) Threads() int {
	n := 1
	for i := range 3 {
		n *= int(l.Grid[i]) * int(l.Block[i])
	}
	return n
}

// Bytes is n bytes of the device's memory at p, for the kernel to read and
// write; an error when they do not lie in one allocation (a fault on a
// GPU).
func (l *Launch) Bytes(p device.Ptr, n int) ([]byte, error) { return l.mem.span(p, n) }

// AddModule registers a module under name and returns the image that
// LoadModule accepts for it. Registering a name again replaces it for later
// loads.
func (b *Backend) AddModule(name string, m Module) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.modules[name] = m
	return []byte(imagePrefix + name)
}

// LoadedModule is a module loaded on one device: a device.LoadedModule that
// hooks see from load to unload.
type LoadedModule struct {
	b       *Backend
	d       *dev
	name    string
	label   string
	m       Module
	globals map[string]device.Ptr

	mu   sync.Mutex
	gone bool
}

// function is a kernel of a LoadedModule.
type function struct {
	mod  *LoadedModule
	name string
	k    Kernel
}

func (f *function) Name() string { return f.name }

var _ device.LoadedModule = (*LoadedModule)(nil)

// Backend is the backend's type.
func (m *LoadedModule) Backend() device.Type { return m.b.typ }

// Handle is a stand-in for a driver handle: the module's address in Go
// memory (stable for its life).
func (m *LoadedModule) Handle() uintptr { return reflect.ValueOf(m).Pointer() }

// Label names the module in messages.
func (m *LoadedModule) Label() string { return m.label }

// Device is the index of the module's device.
func (m *LoadedModule) Device() int { return m.d.index }

// Global looks up a global; a missing name gives ok false.
func (m *LoadedModule) Global(name string) (addr uintptr, size uint64, ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone {
		return 0, 0, false, m.released("Global")
	}
	p, ok := m.globals[name]
	if !ok {
		return 0, 0, false, nil
	}
	return uintptr(p), m.m.Globals[name], true, nil
}

// Function looks a kernel up; a missing name matches device.ErrNotFound.
func (m *LoadedModule) Function(name string) (device.Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone {
		return nil, m.released("Function")
	}
	k, ok := m.m.Kernels[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s: module %q has no function %q", device.ErrNotFound, m.b.typ, m.label, name)
	}
	return &function{mod: m, name: name, k: k}, nil
}

// Unload finalizes the module's hooks in reverse and frees its globals; a
// second call does nothing.
func (m *LoadedModule) Unload() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone {
		return nil
	}
	err := m.b.hooks.Release(m)
	m.freeGlobals()
	m.gone = true
	return err
}

func (m *LoadedModule) freeGlobals() {
	m.d.mem.mu.Lock()
	defer m.d.mem.mu.Unlock()
	for _, p := range m.globals {
		_ = m.d.mem.free(p)
	}
}

func (m *LoadedModule) released(op string) error {
	return fmt.Errorf("%w: %s: %s on module %q, which was unloaded", device.ErrReleased, m.b.typ, op, m.label)
}

// LoadModule loads an image AddModule returned on device index and applies
// the hooks; anything else is an error matching device.ErrInvalidImage.
func (b *Backend) LoadModule(index int, image []byte, label string) (device.LoadedModule, error) {
	d, err := b.device(index)
	if err != nil {
		return nil, err
	}
	name, ok := strings.CutPrefix(string(bytes.TrimRight(image, "\x00")), imagePrefix)
	b.mu.Lock()
	mod, known := b.modules[name]
	b.modSeq++
	seq := b.modSeq
	b.mu.Unlock()
	if !ok || !known {
		return nil, fmt.Errorf("%w: %s: not an image AddModule returned (%d bytes)", device.ErrInvalidImage, b.typ, len(image))
	}
	if label == "" {
		label = fmt.Sprintf("module#%d", seq)
	}
	m := &LoadedModule{b: b, d: d, name: name, label: label, m: mod, globals: map[string]device.Ptr{}}
	d.mem.mu.Lock()
	for g, size := range mod.Globals {
		p, err := d.mem.alloc(size)
		if err != nil {
			d.mem.mu.Unlock()
			m.freeGlobals()
			return nil, fmt.Errorf("%s: module %q: global %q: %w", b.typ, label, g, err)
		}
		m.globals[g] = p
	}
	d.mem.mu.Unlock()
	if err := b.hooks.Apply(m); err != nil {
		m.freeGlobals()
		return nil, fmt.Errorf("%s: module %q on device %d was unloaded: %w", b.typ, label, d.index, err)
	}
	return m, nil
}

// Launch runs fn on device index's default stream: at once, after the
// device's queued stream work.
func (b *Backend) Launch(index int, fn device.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	f, err := b.kernel(fn, d)
	if err != nil {
		return err
	}
	if err := d.mem.flushAll(); err != nil {
		return err
	}
	return b.run(f, d, grid, block, sharedMem, args)
}

// kernel checks fn is a live kernel of a module of this backend on d.
func (b *Backend) kernel(fn device.Function, d *dev) (*function, error) {
	f, ok := fn.(*function)
	switch {
	case !ok || f == nil:
		return nil, fmt.Errorf("%w: %s: Launch needs a function from one of its modules, got %T", device.ErrInvalidValue, b.typ, fn)
	case f.mod.b != b:
		return nil, fmt.Errorf("%w: %s: function %q belongs to another backend", device.ErrInvalidValue, b.typ, f.name)
	case f.mod.d != d:
		return nil, fmt.Errorf("%w: %s: function %q is loaded on device %d, not %d", device.ErrInvalidValue, b.typ, f.name, f.mod.d.index, d.index)
	}
	f.mod.mu.Lock()
	gone := f.mod.gone
	f.mod.mu.Unlock()
	if gone {
		return nil, f.mod.released("Launch")
	}
	return f, nil
}

// run checks the launch and runs the kernel.
func (b *Backend) run(f *function, d *dev, grid, block [3]uint32, sharedMem uint32, args []any) error {
	for i := range 3 {
		if grid[i] == 0 || block[i] == 0 {
			return fmt.Errorf("%w: %s: Launch %q: zero grid or block dimension", device.ErrInvalidValue, b.typ, f.name)
		}
	}
	for i, a := range args {
		switch a.(type) {
		case device.Ptr, uintptr, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32, float64:
		default:
			return fmt.Errorf("%w: %s: Launch %q: argument %d has type %T, which a kernel cannot take", device.ErrInvalidValue, b.typ, f.name, i, a)
		}
	}
	l := &Launch{Device: d.index, Grid: grid, Block: block, SharedMem: sharedMem, Args: append([]any(nil), args...), mem: &d.mem}
	d.mem.mu.Lock()
	err := f.k(l)
	d.mem.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %s: kernel %q of module %q: %w", device.ErrLaunchFailed, b.typ, f.name, f.mod.label, err)
	}
	return nil
}
