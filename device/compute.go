package device

import "fmt"

// Ptr is an address in a device's memory (CUdeviceptr, MUdeviceptr,
// hipDeviceptr_t).
type Ptr uint64

// Memory is implemented by backends with device memory: every vendor's that
// binds it, and the flagos device, which forwards to the backend it routes to. Use
// [MemoryOf] to get it from a Backend with a clear error when it is absent.
//
// Every method takes a device index as Backend's methods do: -1 is the
// current device.
type Memory interface {
	// MemInfo is the device's free and total memory in bytes, as the
	// driver sees them now. total equals Properties(index).TotalMemory.
	MemInfo(index int) (free, total uint64, err error)
	// Alloc allocates size bytes of device memory. A size the device
	// cannot satisfy is an error matching ErrOutOfMemory.
	Alloc(index int, size uint64) (Ptr, error)
	// Free releases memory Alloc returned.
	Free(index int, p Ptr) error
	// CopyHtoD copies src into device memory at dst; it returns once src
	// may be reused.
	CopyHtoD(index int, dst Ptr, src []byte) error
	// CopyDtoH copies len(dst) bytes of device memory at src into dst,
	// after the work queued before it on the device's default stream.
	CopyDtoH(index int, dst []byte, src Ptr) error
}

// Compute is implemented by backends that load GPU code and launch kernels.
// Use [ComputeOf] to get it from a Backend.
type Compute interface {
	// LoadModule loads a module image (PTX, cubin or fatbin for CUDA; the
	// vendor's own formats elsewhere) on device index and applies the
	// backend's module hooks to it (see package hooks): a hook that fails fails
	// this load only, and the module is unloaded. label names the module in
	// messages ("" gives "module#N").
	LoadModule(index int, image []byte, label string) (LoadedModule, error)
	// Launch queues fn on device index's default stream and returns
	// without waiting; a kernel's fault shows at the next synchronizing
	// call. args are the kernel's parameters in order: Ptr, uintptr and
	// fixed-size scalars (int8..int64, uint8..uint64, float32, float64);
	// a Go int or uint, whose size C does not share, is an error.
	Launch(index int, fn Function, grid, block [3]uint32, sharedMem uint32, args ...any) error
}

// LoadedModule is a module loaded by Compute.LoadModule.
type LoadedModule interface {
	Module // Backend, Handle, Label, Global: what hooks see
	// Function looks up a kernel by name; a name the module lacks is an
	// error matching ErrNotFound.
	Function(name string) (Function, error)
	// Unload finalizes the hooks applied to the module, in reverse order,
	// then unloads it. A second call does nothing.
	Unload() error
}

// Function is a kernel of a LoadedModule, for Launch.
type Function interface {
	Name() string
}

// MemoryOf returns b's Memory, or an error matching ErrNotSupported that
// names the backend when it has none.
func MemoryOf(b Backend) (Memory, error) {
	if m, ok := b.(Memory); ok {
		return m, nil
	}
	return nil, lacks(b, "device memory (device.Memory)")
}

// ComputeOf returns b's Compute, or an error matching ErrNotSupported that
// names the backend when it has none.
func ComputeOf(b Backend) (Compute, error) {
	if c, ok := b.(Compute); ok {
		return c, nil
	}
	return nil, lacks(b, "modules and launches (device.Compute)")
}

// StreamsOf returns b's Streams, or an error matching ErrNotSupported that
// names the backend when it has none.
func StreamsOf(b Backend) (Streams, error) {
	if s, ok := b.(Streams); ok {
		return s, nil
	}
	return nil, lacks(b, "streams and events (device.Streams)")
}

func lacks(b Backend, what string) error {
	if b == nil {
		return fmt.Errorf("%w: no backend given", ErrNotSupported)
	}
	return fmt.Errorf("%w: the %s backend has no %s", ErrNotSupported, b.Type(), what)
}
