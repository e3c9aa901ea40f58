// Package gpudrv is the shared implementation of flagshim's vendor driver
// bindings. CUDA's driver API (libcuda, cu*) and MUSA's (libmusa, mu*) have
// the same shape, so one implementation serves both, parameterised by a
// [Vendor]: the device type, the symbol prefix, the error-name prefix, the
// loader's [dl.Spec] and the version encoding.
//
// It is layered like cudarc, each layer small:
//
//   - raw symbols (syms.go): addresses resolved once with dlsym, versioned
//     names first (cuDeviceTotalMem_v2, then cuDeviceTotalMem), required and
//     optional symbols told apart. A missing required symbol makes the driver
//     unusable with a clear reason; a missing optional one disables its
//     feature only (ErrNotSupported).
//   - checked calls (driver.go): one Go method per C function; the result code
//     becomes an *[Error] carrying the code, its name and the driver's
//     message.
//   - the safe backend (backend.go): lazy loading shared by the first
//     concurrent callers, the cached probe, device-index checks, primary
//     contexts and the current device; it implements device.Backend and
//     device.Describer.
//
// Modules and memory (module.go) are optional entries of the symbol table
// (cuModuleLoadDataEx / cuModuleLoadData, cuModuleGetFunction,
// cuModuleGetGlobal_v2, cuModuleUnload, cuLaunchKernel, cuMemAlloc_v2,
// cuMemFree_v2, cuMemcpyHtoD_v2, cuMemcpyDtoH_v2) and a Module type next to
// Backend. LoadModule applies the backend's device.Hooks to the *Module it
// returns and unloads it when a hook fails; Unload releases them first.
// Launch copies its arguments into a pooled, pinned buffer (values and the
// kernelParams array), so it allocates nothing and the driver never holds a
// Go pointer beyond the call.
//
// # Contexts, threads and the current device
//
// A driver context is current per OS thread, while goroutines move between
// threads. So the backend never relies on a thread's state between calls:
// every call that needs a context locks the goroutine to its thread, makes
// the device's primary context current there (retained once per device and
// cached for the life of the process), makes the call and unlocks. The
// primary context stays current on that thread afterwards, as the CUDA
// runtime's own calls leave it.
//
// "The current device" is therefore the backend's, per process, as in
// torch.cuda.current_device: SetCurrent stores the index (and makes the
// primary context current on the calling thread, which helps a caller that
// has locked its own thread and calls the driver itself); Current returns the
// stored index, 0 until SetCurrent is called; Synchronize(-1) and other calls
// given no index use it.
package gpudrv
