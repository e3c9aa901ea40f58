// Package hip is the HIP runtime API of AMD ROCm and Hygon DTK (DCU)
// (libamdhip64, hip*) described as data for flagshim's driver core (package
// driver): its library, its symbol table, its hipError_t codes and the
// sentinels each matches, its attribute numbers and its context model.
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (hip.New) and registers it and its
// probe. The library is looked for on first use: $FLAGOS_LIBHIP_PATH (an
// absolute path, no fallback), then libamdhip64.so.7, .so.6, .so.5 and the
// development link libamdhip64.so as the dynamic loader would resolve them
// (newest major first), then /opt/rocm/lib, /opt/rocm-*/lib, /opt/dtk/lib,
// /opt/dtk-*/lib and /opt/dtk/hip/lib. The major is ROCm's (ROCm 6 ships
// libamdhip64.so.6); DTK releases based on HIP 5 ship .so.5. libamdhip64.so.4
// is never named: ROCm 5.0 renumbered hipDeviceAttribute_t, so a ROCm 4
// runtime answers other attributes for the numbers used here.
//
// How HIP differs from CUDA, and what the description does about it:
//   - There are no contexts to make current: each call selects its device on
//     its locked OS thread with hipSetDevice(ordinal) (driver.CurrentDevice);
//     the deprecated hipCtx* and hipDevicePrimaryCtx* functions are not bound.
//   - hipDevice_t is the ordinal (hipDeviceGet returns it); hipDeviceGetAttribute
//     and hipDeviceGetPCIBusId are declared with an int ordinal (OrdinalArgs).
//   - hipGetErrorName and hipGetErrorString return const char * (ErrorTextReturned);
//     for a code it does not know hipGetErrorName answers "hipErrorUnknown".
//   - hipModuleLoadDataEx ignores its JIT options (no error log on AMD), so the
//     vendor has no JIT numbers and the Ex form is called without options.
//   - hipDriverGetVersion reports HIP_VERSION, the runtime's build version
//     (major*10000000 + minor*100000 + build number), not the amdgpu kernel
//     driver's; VersionBase decodes major and minor.
//   - With no device, hipInit succeeds and hipGetDeviceCount returns
//     hipErrorNoDevice with a count of 0; the core reads that as zero devices.
//     A runtime that cannot initialize (no access to /dev/kfd, say) answers
//     hipErrorInvalidDevice to hipInit. So where /dev/kfd is not a character
//     device the searched library is found and checked but not loaded
//     (Library.Nodes): loading libamdhip64 maps the HSA runtime and LLVM,
//     20-40 ms on a CUDA machine that happens to have ROCm installed, for an
//     answer known in advance. FLAGOS_LIBHIP_PATH always loads its library.
//   - There is no stub library and no stub result code (CUDA's 34).
//   - hipGetDeviceProperties is a macro for hipGetDevicePropertiesR0600 since
//     ROCm 6, and the exported plain symbol fills the ROCm 5 (R0000) struct
//     layout: the binding never uses the properties struct, only
//     hipDeviceGetName, hipDeviceTotalMem, hipDeviceGetUuid and
//     hipDeviceGetAttribute, whose numbers (multiprocessors 63, compute
//     capability 23 and 61, the gfx target's major and minor) are the same
//     from ROCm 5.0 to 7.x.
//   - Streams and events come from hipStreamCreateWithFlags and
//     hipEventCreateWithFlags (hipStreamCreate and hipEventCreate take no
//     flags: another shape); pinned memory from hipHostMalloc (exported by
//     ROCm 5 to 7; the later hipExtHostAlloc is not in every release).
//
// ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES are
// applied by the runtime itself (in that order; CUDA_VISIBLE_DEVICES only
// when HIP_VISIBLE_DEVICES is unset or empty) and only reported.
// Properties.Vendor is "AMD/Hygon": AMD's runtime and Hygon's DTK build of it
// are the same library and API, and nothing the binding reads tells them
// apart; Properties.Name is the product's own name.
//
// No AMD or Hygon hardware exists where flagshim is developed: the package
// is proven only against a fake libamdhip64.so.6 with the real names and C
// signatures (testdata/fake_libamdhip64.c), which the tests build from C.
// The prototypes, numbers and behaviours above come from ROCm's public
// headers and the CLR sources, not from a run on a GPU.
package hip
