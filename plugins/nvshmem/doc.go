// Package nvshmem drives NVIDIA's NVSHMEM host library (libnvshmem_host.so.3)
// through purego, without cgo, and gives flagshim's module loading a scoped
// hook that runs nvshmemx_cumodule_init only on the modules that carry
// NVSHMEM's device code.
//
// A process opens the library, brings up its PE with the unique-id bootstrap
// and registers the hook:
//
//	lib, err := nvshmem.Open()
//	uid, err := lib.GetUniqueID()            // on rank 0; share the bytes with the other ranks
//	err = lib.InitUniqueID(rank, nranks, uid) // collective: every rank calls it
//	remove, err := lib.Register(hooks.DefaultHooks)
//
// Why a scoped hook: nvshmemx_cumodule_init looks up
// nvshmemi_device_lib_version_d and nvshmemi_device_state_d in the module; on
// a plain module it prints "named symbol not found" and returns 7. The hook's
// scope is [hooks.HasGlobals] of exactly those two names, so plain kernels
// are never touched, and a module holding only one of them fails its load
// with an error naming both.
//
// Search for the library: FLAGOS_LIBNVSHMEM_PATH (an absolute path; relative
// is an error), then the soname through the dynamic loader (LD_LIBRARY_PATH,
// ld.so.cache), then the python wheel's nvidia/nvshmem/lib folder under the
// usual site-packages ($VIRTUAL_ENV, $CONDA_PREFIX, ~/.local,
// /usr/local/lib/python3*, /usr/lib/python3, /opt/conda). Files or folders
// anyone may write to are refused, as for the drivers.
//
// Contexts: NVSHMEM runs one PE per process on one device, the CUDA device
// [WithDevice] names (0 by default, as numbered after CUDA_VISIBLE_DEVICES).
// Every call that needs a context (init, cumodule init and finalize, host
// finalize) runs on a locked OS thread with that device's primary context
// current, the thread's previous context restored afterwards; the plugin
// opens libcuda for that itself (FLAGOS_LIBCUDA_PATH, then the usual search).
// Without a current context nvshmemx_hostlib_init_attr only bootstraps
// (init status 1) and every cumodule init then fails; this was seen on an
// H200 with NVSHMEM 3.4.5. Modules must be loaded on that same device.
//
// All calls into the library are serialised by one mutex per [Lib]; NVSHMEM
// itself is initialised at most once per process.
package nvshmem
