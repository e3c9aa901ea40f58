// Package mlu is Cambricon's MLU accelerators (MLU370, MLU590, ...)
// through CNDrv, the driver API of Cambricon's Neuware SDK (libcndrv.so,
// cn_api.h, cn*), described as data for flagshim's driver core (package
// driver): its library, its symbol table and adapters, its CNresult codes
// and the sentinels each matches, its attribute numbers, its presence tier
// (CNDev, then /dev/cambricon_dev* nodes) and its variables. The device
// type is "mlu", torch_mlu's own name.
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (New) and registers it and its probe.
// The library is looked for on first use: $FLAGOS_LIBCNDRV_PATH (an
// absolute path, no fallback), then libcndrv.so as the dynamic loader would
// resolve it (no versioned soname is known), then /usr/local/neuware/lib64.
// $NEUWARE_HOME/lib64 is not searched (it is no fixed folder): put it on
// LD_LIBRARY_PATH, as Neuware's setup does, or name the library in
// FLAGOS_LIBCNDRV_PATH.
//
// How CNDrv differs from CUDA, and what the description does about it (the
// prototypes are cn_api.h's, CNDrv 2.15.5; adapters.go cites each):
//   - CNdev, the device handle, is 64 bits (cn_uint64_t); the core reads
//     handles into 64 bits and passes them whole.
//   - cnDriverGetVersion writes three ints; an adapter composes them with
//     the header's own CN_VERSION formula, major*100000 + minor*1000 +
//     patch, which VersionBase decodes (215005 is 2.15). cn_api.h lists
//     CN_ERROR_NOT_INITIALIZED among its results, so where it fails before
//     cnInit the core reads it again after.
//   - There is no primary context: the per-device shared context
//     (cnSharedContextAcquire(&ctx, dev), reference-counted, released with
//     cnSharedContextRelease(dev)) has the primary context's shape and is
//     made current per thread with cnCtxSetCurrent, as torch_mlu and
//     FlagTree do (driver.PrimaryContext).
//   - cnMallocHost takes no flags; cnModuleLoadFatBinary, cnModuleGetKernel
//     and cnModuleGetSymbol take their outputs last: adapters. Modules are
//     Cambricon BANG fat binaries (cncc's output); there is no JIT and no
//     cnModuleLoadDataEx.
//   - Queues are streams and notifiers are events, in CUDA's shapes;
//     cnQueueWaitNotifierWithFlags is preferred, and an older library's
//     flag-less cnQueueWaitNotifier is called through an adapter.
//   - cnGetErrorName succeeds for a code it does not know with a sentence
//     instead of a name; an adapter turns that into no name, so the core
//     names the code CN_ERROR_UNKNOWN_CODE_<n>.
//   - There is no stub library and no stub result code (CUDA's 34).
//
// Not bound, and why:
//   - Kernel launches. cnInvokeKernel takes one task grid and the kernel's
//     task type (KernelClass: BLOCK, UNION1..UNION16), with no block
//     dimensions and no dynamic shared memory. No public code maps CUDA's
//     grid and block onto it in general (each caller picks the type for its
//     own kernels: FlagTree and torch_mlu's Inductor from Triton's num_warps,
//     others from a work-group size), and a wrong type runs the kernel on the
//     wrong cores. Launch (and a stream's Launch) reports
//     device.ErrNotSupported; memory, modules, globals, queues and notifiers
//     work.
//   - A kernel's parameter list (no CNDrv function tells it) and JIT
//     options (none).
//
// Properties: the name, cnDeviceTotalMem, compute capability
// (CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR) and, as
// "multiprocessors", the cluster count (CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT;
// torch_mlu's multi_processor_count is clusters x cores per cluster
// instead). UUIDs are written "MLU-" + the UUID, as Cambricon's k8s device
// plugin writes them.
//
// The presence tier (FLAGOS_PROBE=presence) asks CNDev, Cambricon's
// management library (libcndev.so; FLAGOS_LIBCNDEV_PATH overrides the
// search), for the MLUs, their names, UUIDs, memory, PCI addresses and the
// driver version, without initializing CNDrv (cndev.go cites cndev.h); where
// CNDev cannot answer, it counts the /dev/cambricon_dev<N> nodes (and notes
// a missing /dev/cambricon_ctl). MLU_VISIBLE_DEVICES (comma-separated
// ordinals; empty hides every MLU) is applied by the Cambricon runtime
// itself: the backend reports it and the presence tier applies it to what it
// counts. Whether it also takes UUIDs is not confirmed.
//
// No Cambricon hardware exists where flagshim is developed: the package is
// proven only against fakes with the real names and C signatures
// (testdata/fake_libcndrv.c, testdata/fake_cndev.c), which the tests build
// from C. The prototypes, numbers and behaviours above come from Cambricon's
// public headers and public code (torch_mlu, FlagTree, mlu-exporter, the k8s
// device plugin, the MLU kernel driver), not from a run on an MLU.
package mlu
