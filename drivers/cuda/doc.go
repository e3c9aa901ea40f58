// Package cuda is the NVIDIA CUDA driver API (libcuda.so.1, cu*) described as
// data for flagshim's driver core (package driver): its library search, its
// symbol names with their versioned fallbacks, its result codes and their
// meaning, its attribute numbers. The core does the rest, without cgo.
//
// Importing the package does no I/O and registers nothing: flagshim's
// drivers phase does
//
//	b := cuda.New(driver.WithLogger(log))
//	devs.Register(b)
//	probes.Register("cuda", b.Available)
//
// and code that wants the backend itself asks device.Lookup(device.CUDA),
// which, on a machine without a usable CUDA, is the flagos backend (the
// cuda->flagos alias).
//
// The library is looked for on the first call, once: $FLAGOS_LIBCUDA_PATH
// when set (an absolute path, no fallback), then libcuda.so.1 and libcuda.so
// as the dynamic loader would resolve them (LD_LIBRARY_PATH, ld.so.cache, the
// default folders), then /usr/local/nvidia/lib64, the multiarch folder,
// /usr/lib64 and WSL's /usr/lib/wsl/lib; stubs, relative paths and anything
// others can write are never opened. CUDA is available when the library
// loads, cuInit(0) succeeds and there is at least one device; a stub library
// (34), no device (100), a driver mismatch (803, 804) make it unavailable
// with a reason naming the error and the library.
//
// CUDA_VISIBLE_DEVICES is applied by the driver itself; the backend only
// reports it. MUSA's driver API mirrors this one, so drivers/musa builds its
// description from [Symbols], [Results] and [Narrow].
package cuda
