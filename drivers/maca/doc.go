// Package maca is MetaX's MACA runtime (C500/C550 "xcore" GPUs;
// libmcruntime.so, mc*) described as data for flagshim's driver core
// (package driver): its library, its symbol table and adapters, its
// mcError_t codes and the sentinels each matches, its context model, and its
// presence tier (MXSML, MetaX's management library, then device nodes).
//
// The device type is "maca": MetaX's PyTorch claims "cuda", NVIDIA's name,
// which flagshim must not take; "maca" is what MetaX's own code calls the
// platform (vLLM-metax, its Triton target, TVM).
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (maca.New) and registers it and its
// probe. The library is looked for on first use: $FLAGOS_LIBMCRUNTIME_PATH
// (an absolute path, no fallback), then libmcruntime.so as the dynamic
// loader would resolve it (MetaX's setup puts ${MACA_PATH}/lib on
// LD_LIBRARY_PATH), then /opt/maca/lib and /opt/maca-*/lib. MACA_PATH
// itself is not read: a folder taken from a variable would be a second
// override. Where /dev/mxcd, the control device every MACA process opens,
// is not a character device, a searched library is found and checked but
// not loaded (Library.Nodes); the override always loads.
//
// MACA has one user-mode library for both API styles: runtime-style calls
// (mcMalloc, mcStreamCreate, ...) and driver-style ones (mcInit,
// mcDeviceGet, mcDevicePrimaryCtxRetain, mcModuleLoadData,
// mcModuleLaunchKernel, ...). Its headers (mcr/mc_runtime.h) are not public:
// every prototype bound here is taken from code that compiles against them
// (InfiniTensor/mxdrv's bindgen output, FlagTree's MetaX backend, MetaX's
// mcTVM, FlagCX's MACA adaptor), cited beside each in vendor.go. How it
// differs from CUDA, and what the description does about it:
//   - The context model is CUDA's (driver.PrimaryContext): the device's
//     primary context is retained (mcDevicePrimaryCtxRetain) and made current
//     (mcCtxSetCurrent) on the calling thread for each call, as FlagTree's
//     MetaX launcher does; mcCtxSynchronize synchronizes.
//   - mcGetErrorName and mcGetErrorString return const char *
//     (driver.ErrorTextReturned); mcError_t numbers are the CUDA runtime's
//     (results.go), plus MetaX's own from 1003 and 10000
//     (mcErrorDriverMismatch 10003, mcErrorInvalidContext 10025, ...).
//   - mcStreamCreate and mcEventCreate take no flags: adapters call them
//     with the out-pointer alone (the core asks for the default kind, 0;
//     the values of mcStreamNonBlocking and mcEventDefault are not
//     confirmed, so the ...WithFlags forms are not used). mcMallocHost takes
//     three arguments, CUDA's shape. No name has a _v2 form, and there is no
//     mcModuleLoadDataEx (modules load with mcModuleLoadData, without a JIT
//     log).
//   - Modules are MACA code objects ("mcfatbin", or bitcode that
//     mcModuleLoadData compiles): a CUDA user's PTX or CUBIN does not load.
//     mcModuleLaunchKernel takes cuLaunchKernel's arguments in its order.
//
// What is not bound, and why (each feature's call answers an error
// matching device.ErrNotSupported that names it, or the value is unknown):
//   - The device attributes: mcDeviceGetAttribute's shape is confirmed but
//     the numbers of mcDeviceAttribute_t are not (sources disagree: 21/22 or
//     75/76 for the compute capability). The OpDeviceAttribute adapter never
//     calls it and answers mcErrorNotSupported, which the core reads as
//     "unknown": Properties' Major, Minor and MultiProcessors are 0. The
//     presence tier has the compute capability from MXSML
//     (mxSmlExDeviceGetComputeCapability; MetaX's architecture number, 10.0
//     for a C500).
//   - mcDeviceTotalMem: the width of its out-parameter is not confirmed.
//     Properties' total memory is mcMemGetInfo's total, read with the
//     device's context current (so reading Properties creates the context).
//   - mcDeviceGetUuid: its signature and mcUuid_t's layout are not known; the
//     exact tier has no UUIDs (MXSML gives them in the presence tier).
//   - mcMemcpyDtoHAsync: no caller was seen (mcMemcpyHtoDAsync is bound), so
//     a stream's CopyDtoH is not supported; Memory's synchronous copies are.
//   - The launch argument check (CUDA 12.4's cuFuncGetParamInfo): no MACA
//     counterpart is known.
//   - The driver version's encoding: mcDriverGetVersion's number is reported
//     as it is ("12345"), not decoded, since only third parties assume
//     CUDA's 1000*major + 10*minor; DriverVersion answers ErrNotSupported.
//     MXSML's driver version string is the presence tier's.
//
// Visible devices: which variable the MACA runtime itself applies is not
// confirmed by any MetaX source. MetaX's own stack selects devices with
// CUDA_VISIBLE_DEVICES (vLLM-metax's platform, Ray's MetaX manager);
// FlagOS's and FlagScale's recipes, and a third party's note that "MetaX
// reads MACA_VISIBLE_DEVICES", use MACA_VISIBLE_DEVICES. Both are reported.
// The presence tier applies CUDA_VISIBLE_DEVICES with CUDA's rules, and
// where MACA_VISIBLE_DEVICES is set it cannot decide
// (presence.ErrUndecidable: FLAGOS_PROBE=isolated asks the runtime).
//
// The presence tier: MXSML's handle-based API (libmxsml.so, searched in
// /opt/mxdriver/lib, /opt/maca/lib and /opt/mxn100/lib; FLAGOS_LIBMXSML_PATH
// overrides), from MetaX's public MxSmlExtension.h 2.3.1: names, UUIDs, PCI
// bus ids, compute capability, the driver version, and memory where
// mxSmlExMemory_t's disputed field order can be told from its values (see
// mxsml.go). Without MXSML, /dev/mxcd and the /dev/dri/renderD* nodes whose
// kernel driver is metax. Neither loads libmcruntime.
//
// No MetaX hardware exists where flagshim is developed: the package is
// proven only against a fake libmcruntime.so and a fake libmxsml.so with the
// names and C signatures above (testdata/), which the tests build from C.
package maca
