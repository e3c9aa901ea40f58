package device

import "errors"

// Vendor-neutral errors. Every backend's errors match them with errors.Is,
// whatever the vendor (cuda, musa, ...), the virtual flagos device and the
// built-in cpu included, so code written for one accelerator tests errors
// the same way on every other:
//
//	if _, err := mem.Alloc(0, n); errors.Is(err, device.ErrOutOfMemory) { ... }
//
// A C library's own error (a *clib.Error) still carries its code, name
// and message; these sentinels say what kind of failure it is.
var (
	// ErrNotAvailable: the backend cannot run work here (no library, a stub,
	// init failed, no device). Its message is the probe's reason.
	ErrNotAvailable = errors.New("device: backend not available")
	// ErrInvalidIndex: a device index outside -1..DeviceCount()-1 (-1 is the
	// current device), or one the driver itself refused.
	ErrInvalidIndex = errors.New("device: invalid device index")
	// ErrOutOfMemory: an allocation the device (or pinned host memory) could
	// not satisfy.
	ErrOutOfMemory = errors.New("device: out of memory")
	// ErrNotFound: a named thing is not there (a kernel of a module, say).
	ErrNotFound = errors.New("device: not found")
	// ErrNotSupported: the backend, its driver or its library version does
	// not offer the operation.
	ErrNotSupported = errors.New("device: not supported")
	// ErrInvalidValue: an argument the backend refused (a bad pointer, a
	// size, a zero launch dimension, a Go type a kernel cannot take).
	ErrInvalidValue = errors.New("device: invalid value")
	// ErrInvalidImage: a module image the driver cannot load (not PTX,
	// cubin or fatbin of this device, a JIT error).
	ErrInvalidImage = errors.New("device: invalid module image")
	// ErrLaunchFailed: a kernel failed (a launch failure, an illegal address,
	// a trap); it may be reported by a later synchronizing call.
	ErrLaunchFailed = errors.New("device: kernel failed")
	// ErrNotReady: asynchronous work has not completed yet (an event's
	// elapsed time asked before it was reached).
	ErrNotReady = errors.New("device: not ready")
	// ErrReleased: a handle used after it was released (a module after
	// Unload, a stream or event after Destroy, a host buffer after Free).
	ErrReleased = errors.New("device: used after release")
)
