// Package musa binds the MUSA driver API (libmusa.so.1) without cgo, through
// purego, for flagshim's device model.
//
// Importing the package does no I/O and registers nothing: flagshim's
// drivers phase does
//
//	b := musa.New(musa.WithLogger(log))
//	devs.Register(b)
//	probes.Register("musa", b.Available)
//
// # Loading
//
// The library is looked for on the first call of any Backend method, once;
// concurrent first callers share that load and its outcome (the library or
// the reasons it is not there) is kept. The search: $FLAGOS_LIBMUSA_PATH when set (an
// absolute path, else an error; no fallback), then the sonames libmusa.so.1 and
// libmusa.so through the dynamic loader (LD_LIBRARY_PATH, ld.so.cache), then
// well-known folders. Stub libraries, relative paths, the working directory
// and files or folders anyone may write to are never opened. Describe
// reports every attempt.
//
// MUSA is available when the library loads, muInit(0) succeeds and there is at
// least one device. A stub library (34), no device (100), a driver mismatch
// (803, 804) or an unknown failure (999) make it unavailable, with a reason
// naming the error (MUSA_ERROR_STUB_LIBRARY) and the library path.
//
// # Threads, contexts and the current device
//
// A driver context is current per OS thread, and goroutines move between
// threads. Every call that needs a context therefore locks its goroutine to
// the thread, makes the device's primary context current there (each primary
// context is retained once, on first use, and kept for the life of the
// process), calls and unlocks; the context stays current on that thread
// afterwards, as the vendor runtime's own calls leave it. No call depends on
// what an earlier call left on a thread.
//
// The current device is the Backend's, per process, like
// torch.cuda.current_device: SetCurrent(i) records i (after checking it and
// making its context current on the calling thread, which serves callers that
// locked their own thread to call the driver themselves), Current returns it
// (0 until set) and Synchronize(-1) uses it. Per-goroutine state would be
// invisible to other goroutines and lost on migration, so there is none.
//
// MUSA_VISIBLE_DEVICES is applied by the driver itself: indices are those the driver shows.
// The backend does not read it except to report it in Describe().Extra.
//
// # Modules
//
// LoadModule(index, image, label) loads PTX (a NUL is appended when the
// bytes lack one), a cubin or a fatbin on one device with
// muModuleLoadDataEx (the JIT's error log comes back in the error) and then
// applies the backend's module hooks (WithHooks; device.DefaultHooks by
// default). The *Module it returns is what the hooks see (device.Module:
// Backend, Handle, Label, Global); a hook that fails or panics fails that
// load alone, names itself in the error, and the module is unloaded.
// Module.Function and Module.Global look names up (a missing global is ok
// false, not an error; a missing function matches ErrNotFound);
// Module.Unload finalizes the hooks in reverse and unloads, once.
//
// Alloc, Free, CopyHtoD and CopyDtoH move device memory; Launch queues a
// kernel on the default stream with scalar or DevicePtr arguments, copied
// into pinned memory for the call, and returns without waiting (CopyDtoH
// and Synchronize wait). Every one of these calls locks its thread and makes
// the device's primary context current, as above; a module remembers its
// device. The symbols are optional: a library without them gives
// ErrNotSupported for these calls and serves the rest.
//
// # Errors
//
// Driver result codes become *Error values carrying the code, the name
// (MUSA_ERROR_NO_DEVICE) and the driver's message; errors.Is matches them
// against the package's sentinels (ErrNoDevice for code 100, ErrNotAvailable
// for codes that mean the runtime cannot run work, ...). WithUnavailableNote
// adds a sentence of the caller's to every error of an unavailable backend
// (flagshim says there whether the cuda->flagos alias is off). An index outside the
// devices is an error matching ErrInvalidDevice that names the valid range.
//
// # Cost
//
// Current, SetCurrent and Synchronize call cached symbol addresses with
// purego.SyscallN and allocate nothing; see the benchmarks.
package musa
