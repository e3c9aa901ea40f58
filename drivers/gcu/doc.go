// Package gcu is Enflame's GCU accelerators (S60, T20, I20, ...) through
// the TOPS runtime of Enflame's TopsRider SDK (libtopsrt.so,
// tops_runtime_api.h, tops*), described as data for flagshim's driver core
// (package driver): its library, its symbol table, its topsError_t codes and
// the sentinels each matches, its presence tier (EFML, then /dev/gcu<N>
// nodes) and its variables. The device type is "gcu", torch_gcu's own name.
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (New) and registers it and its probe.
// The library is looked for on first use: $FLAGOS_LIBTOPSRT_PATH (an
// absolute path, no fallback), then libtopsrt.so as the dynamic loader
// would resolve it (Enflame's own loader opens that name; no versioned
// soname is confirmed), then /opt/tops/lib.
//
// The TOPS runtime is HIP's shape under the tops prefix, and the
// description is HIP's, with these differences (the prototypes are
// tops_runtime_api.h's, EnflameTechnology/tops-codec-headers, the TopsRider
// 2.3 header; vendor.go cites each):
//   - A current device per thread (topsSetDevice, driver.CurrentDevice):
//     the header declares topsCtx_t but no context function.
//     topsDeviceGetPCIBusId takes the int ordinal (OrdinalArgs).
//   - topsGetErrorName and topsGetErrorString return const char *
//     (ErrorTextReturned); topsGetDeviceCount with no device returns
//     topsErrorNoDevice, which the core reads as zero devices.
//   - The version is 1000*major + 10*minor, as the header documents it
//     (VersionBase 1000); what TopsRider 3.x and 4.x report is not confirmed.
//   - topsDeviceAttribute_t is a small enum numbered from 0 whose numbers are
//     confirmed for the 2.3 header only, so no attribute number is passed:
//     the compute capability comes from topsDeviceComputeCapability(&major,
//     &minor, device) through an adapter, and the multiprocessor count is not
//     asked for (Properties.MultiProcessors is 0, unknown). Major.minor is
//     the GCU architecture (gcu300 is 3.0).
//   - There is no UUID function: Properties.UUID is empty in the exact tier
//     (EFML gives one in the presence tier).
//   - Modules are topscc device fat binaries, loaded with topsModuleLoadData
//     (topsModuleLoadDataEx ignores its options and is not bound).
//   - Launches go through topsModuleLaunchKernel, cuLaunchKernel's shape,
//     with kernelParams, as Enflame's FlagTree launcher and UHHI do on
//     current runtimes. The 2.3 header warns that kernelParams "is not yet
//     implemented in TOPS. Please use extra instead": a TopsRider 2.x runtime
//     may not pass the arguments. What grid and block mean on a GCU is the
//     kernel's (FlagTree passes num_warps as blockDim.x on gcu300), and
//     topsModuleLaunchKernelEx (gcu400's thread-dimension attribute) is not
//     in any public header, so it is not bound.
//   - Streams and events come from topsStreamCreateWithFlags and
//     topsEventCreateWithFlags (topsStreamCreate and topsEventCreate take no
//     flags); pinned memory from topsHostMalloc.
//   - There is no stub library and no stub result code (CUDA's 34).
//
// That TopsRider 3.x and topsPlatform 4.0 kept the 2.3 header's result
// numbers is not confirmed (no later header is public); the names come from
// the library's own topsGetErrorName whatever the table says.
//
// The presence tier (FLAGOS_PROBE=presence) asks EFML, the Enflame
// Management Library (libefml.so; FLAGOS_LIBEFML_PATH overrides the
// search), through its index-based Efml* calls, for the GCUs, their names,
// UUIDs (as EFML writes them), memory, PCI addresses and the driver version,
// without initializing the TOPS runtime (efml.go cites efml.h); where EFML
// cannot answer, it counts the /dev/gcu<N> nodes (and notes a missing
// /dev/gcuctl). TOPS_VISIBLE_DEVICES is applied by the TOPS runtime itself:
// the backend reports it and the presence tier applies its ordinal form to
// what it counts; its DRS-<uuid> form (a DRS partition) cannot be resolved
// there, and the tier says so. ENFLAME_VISIBLE_DEVICES is the container
// toolkit's (that the runtime reads it is not confirmed): not reported.
//
// No Enflame hardware exists where flagshim is developed: the package is
// proven only against fakes with the real names and C signatures
// (testdata/fake_libtopsrt.c, testdata/fake_efml.c), which the tests build
// from C. The prototypes, numbers and behaviours above come from Enflame's
// public headers and code (tops-codec-headers, gcu-exporter's go-eflib,
// gcushare, vllm-gcu) and FlagOS's (FlagTree, FlagCX), not from a run on a
// GCU.
package gcu
