package maca

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type of MetaX's backend. MetaX's PyTorch claims
// "cuda" (NVIDIA's name, which flagshim must not take); "maca" is what
// MetaX's own code calls the platform: vLLM-metax's platform.py
// (device_name = "maca"), its Triton target (FlagTree
// third_party/metax/backend/driver.py, GPUTarget("maca", ...)) and TVM
// (MetaX-MACA/mcTVM, kDLMACA).
const Type device.Type = "maca"

// The package's variables.
const (
	// EnvVar overrides the search for libmcruntime.so with an absolute path.
	EnvVar = "FLAGOS_LIBMCRUNTIME_PATH"
	// CUDAVisibleDevicesEnv is the visible-devices variable of MetaX's own
	// stack: vLLM-metax's platform.py (device_control_env_var =
	// "CUDA_VISIBLE_DEVICES") and Ray's MetaX accelerator manager
	// (ray-project/ray python/ray/_private/accelerators/metax_gpu.py).
	CUDAVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"
	// VisibleDevicesEnv is the one FlagOS's and FlagScale's MetaX recipes
	// set (FlagCX docs, FlagScale's platform table) and a third party says
	// the runtime reads. Which of the two the MACA runtime itself applies
	// is not confirmed by any MetaX source: both are reported, and the
	// presence tier applies CUDA_VISIBLE_DEVICES only (see visible.go).
	VisibleDevicesEnv = "MACA_VISIBLE_DEVICES"
)

// PCIVendorMetaX is MetaX's PCI vendor id: the Linux kernel's
// include/linux/pswiotlb.h "#define BL_PCI_VENDOR_ID_METAX 0x9999"
// (openeuler-mirror/kernel 3aaebbce), gpustack/runtime's
// detector/metax.py get_pci_devices(vendor="0x9999"), MetaX's UEFI GOP
// driver "#define METAX_VENDOR_ID 0x9999".
const PCIVendorMetaX = 0x9999

// AutoRank is MACA's place in FLAGOS_BACKEND=auto (docs/architecture.md
// gives the whole order): after MUSA and HIP, before CUDA.
const AutoRank = 50

// Vendor is the MACA runtime of MetaX (libmcruntime.so, mc*) as data for
// the driver core, with its presence tier (MXSML, /dev/mxcd and the metax
// render nodes). The description is shared and read-only; see the package
// documentation for what is bound and what is not.
func Vendor() *driver.Vendor { return vendor }

var vendor = &driver.Vendor{
	Type: Type,
	Name: "MetaX",
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_metax/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/maca_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 third_party/metax).
	Names: device.VendorNames{FlagOS: "metax", FlagGems: "metax", FlagCX: "MACA", FlagTree: "metax"},
	Library: clib.Library{
		Name:   "libmcruntime",
		EnvVar: EnvVar,
		// libmcruntime.so is the one name used: FlagTree's driver.py links
		// -lmcruntime, InfiniTensor/mxdrv runtime/build.rs
		// rustc-link-lib=dylib=mcruntime, ctypes users open
		// /opt/maca/lib/libmcruntime.so; no versioned soname was seen.
		Sonames: []string{"libmcruntime.so"},
		// ${MACA_PATH}/lib, MACA_PATH=/opt/maca (MetaX-MACA/mcPytorch
		// README_MACA.md), often a link to /opt/maca-<version>.
		Dirs: []string{"/opt/maca/lib", "/opt/maca-*/lib"},
		// MetaX's container instructions pass --device=/dev/mxcd (the
		// control device) with /dev/dri (MetaX-MACA/mcoplib README.md,
		// vLLM-metax docs): without it the runtime reaches no GPU.
		Nodes: []string{"/dev/mxcd"},
	},
	Symbols:     Symbols,
	Adapters:    Adapters,
	Results:     Results,
	ErrorPrefix: "MACA_",
	ErrorText:   driver.ErrorTextReturned, // const char *mcGetErrorName(mcError_t): mcTVM maca_module.cc
	// Attributes is zero: mcDeviceAttribute_t's numbers are not confirmed
	// (two sources disagree: 21/22 or 75/76 for the compute capability),
	// so the OpDeviceAttribute adapter answers mcErrorNotSupported and the
	// core leaves the compute capability and multiprocessors unknown (0).
	Context: driver.PrimaryContext,
	// VersionBase is 0: mcDriverGetVersion's shape is confirmed, its
	// encoding is not (third parties only assume CUDA's), so the number is
	// reported as it is.
	VisibleEnv: []string{CUDAVisibleDevicesEnv, VisibleDevicesEnv},
	Visibility: Visibility,
	Presence:   presenceSources,
	Container:  container,
	Vars: []driver.Var{{Name: MXSMLEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of MXSML (libmxsml.so), which FLAGOS_PROBE=presence reads, to open instead of searching"}},
	Auto:       AutoRank,
	PCIVendors: []uint16{PCIVendorMetaX},
}

// Symbols is the MACA symbol table: each operation's one function. The
// prototypes are not from MetaX's headers (mcr/mc_runtime.h is not public)
// but from code that compiles against them, cited beside each; every one
// has the C shape driver.Op gives, or an adapter (Adapters). No mc* name
// has a _v2 form.
var Symbols = map[driver.Op][]string{
	// mcError_t mcInit(unsigned int flags): InfiniTensor/mxdrv runtime/src/lib.rs (bindgen of mcr/mc_runtime.h)
	driver.OpInit: {"mcInit"},
	// mcError_t mcDriverGetVersion(int *driverVersion): a Cython extern block of mcr/mc_runtime.h
	driver.OpDriverVersion: {"mcDriverGetVersion"},
	// mcError_t mcGetDeviceCount(int *count): flagos-ai/FlagCX flagcx/adaptor/device/maca_adaptor.cc; mxdrv device.rs
	driver.OpDeviceCount: {"mcGetDeviceCount"},
	// mcError_t mcDeviceGet(MCdevice *dev, int ordinal), MCdevice an int: FlagTree third_party/metax/backend/driver.c; mxdrv device.rs
	driver.OpDeviceGet: {"mcDeviceGet"},
	// mcError_t mcDeviceGetName(char *name, int len, MCdevice dev): MetaX-MACA/mcTVM maca_device_api.cc; mxdrv device.rs
	driver.OpDeviceName: {"mcDeviceGetName"},
	// mcError_t mcDeviceGetAttribute(int *value, mcDeviceAttribute_t attr, int device): mcTVM; FlagTree driver.c.
	// Never called: see Adapters.
	driver.OpDeviceAttribute: {"mcDeviceGetAttribute"},
	// mcError_t mcDeviceGetPCIBusId(char *pciBusId, int len, int device): FlagCX maca_adaptor.cc
	driver.OpDevicePCIBusID: {"mcDeviceGetPCIBusId"},
	// const char *mcGetErrorName(mcError_t): mcTVM maca_module.cc; const char *mcGetErrorString(mcError_t): FlagTree driver.c
	driver.OpErrorName:   {"mcGetErrorName"},
	driver.OpErrorString: {"mcGetErrorString"},

	// mcError_t mcDevicePrimaryCtxRetain(MCcontext *ctx, MCdevice dev), mcCtxSetCurrent(MCcontext),
	// mcCtxGetCurrent(MCcontext *): FlagTree driver.c; mxdrv context.rs. MCcontext is a pointer.
	driver.OpPrimaryCtxRetain: {"mcDevicePrimaryCtxRetain"},
	driver.OpCtxSetCurrent:    {"mcCtxSetCurrent"},
	driver.OpCtxGetCurrent:    {"mcCtxGetCurrent"},
	// mcError_t mcCtxSynchronize(void): mxdrv context.rs
	driver.OpSynchronize: {"mcCtxSynchronize"},

	// mcError_t mcMemGetInfo(size_t *free, size_t *total): mcTVM maca_device_api.cc. It also gives
	// Properties' total memory: mcDeviceTotalMem's out-parameter width is not confirmed, so it is
	// not bound (OpDeviceTotalMem names nothing; the core reads this with the device current).
	driver.OpMemGetInfo: {"mcMemGetInfo"},
	// mcError_t mcMalloc(void **p, size_t bytes), mcFree(void *): FlagCX; mxdrv memory.rs. mcDeviceptr_t
	// is void *, 8 bytes like CUdeviceptr.
	driver.OpMemAlloc: {"mcMalloc"},
	driver.OpMemFree:  {"mcFree"},
	// mcError_t mcMemcpyHtoD(mcDeviceptr_t dst, const void *src, size_t), mcMemcpyDtoH(void *dst,
	// mcDeviceptr_t src, size_t): mxdrv memory.rs
	driver.OpMemcpyHtoD: {"mcMemcpyHtoD"},
	driver.OpMemcpyDtoH: {"mcMemcpyDtoH"},
	// mcError_t mcMallocHost(void **p, size_t bytes, unsigned int flags): 3 parameters in C, called with
	// 0 by mxdrv memory.rs (bindgen); mcFreeHost(void *): FlagCX; mxdrv
	driver.OpMemHostAlloc: {"mcMallocHost"},
	driver.OpMemFreeHost:  {"mcFreeHost"},

	// mcError_t mcModuleLoadData(mcModule_t *m, const void *image): FlagTree driver.c; mcTVM maca_module.cc.
	// No mcModuleLoadDataEx exists.
	driver.OpModuleLoadData: {"mcModuleLoadData"},
	// mcError_t mcModuleUnload(mcModule_t): mcTVM maca_module.cc
	driver.OpModuleUnload: {"mcModuleUnload"},
	// mcError_t mcModuleGetFunction(mcFunction_t *f, mcModule_t, const char *name): FlagTree; mcTVM
	driver.OpModuleGetFunction: {"mcModuleGetFunction"},
	// mcError_t mcModuleGetGlobal(mcDeviceptr_t *p, size_t *bytes, mcModule_t, const char *name): mcTVM
	driver.OpModuleGetGlobal: {"mcModuleGetGlobal"},
	// mcError_t mcModuleLaunchKernel(mcFunction_t, gx, gy, gz, bx, by, bz, unsigned sharedMemBytes,
	// mcStream_t, void **kernelParams, void **extra): cuLaunchKernel's order; FlagTree driver.py's launcher
	// (kernelParams, extra NULL). mcLaunchKernel is the runtime-style launch of another shape: not used.
	driver.OpLaunchKernel: {"mcModuleLaunchKernel"},

	// mcError_t mcStreamCreate(mcStream_t *): 1 parameter (mxdrv stream.rs, bindgen); see Adapters.
	driver.OpStreamCreate: {"mcStreamCreate"},
	// mcError_t mcStreamSynchronize(mcStream_t), mcStreamDestroy(mcStream_t): FlagCX; mxdrv
	driver.OpStreamSynchronize: {"mcStreamSynchronize"},
	driver.OpStreamDestroy:     {"mcStreamDestroy"},
	// mcError_t mcStreamWaitEvent(mcStream_t, mcEvent_t, unsigned int flags): mxdrv event.rs (3 arguments);
	// mcTVM passes 0
	driver.OpStreamWaitEvent: {"mcStreamWaitEvent"},
	// mcError_t mcMemcpyHtoDAsync(mcDeviceptr_t, const void *, size_t, mcStream_t): mxdrv memory.rs.
	// mcMemcpyDtoHAsync is not seen in any caller: OpMemcpyDtoHAsync is not bound.
	driver.OpMemcpyHtoDAsync: {"mcMemcpyHtoDAsync"},
	// mcError_t mcEventCreate(mcEvent_t *): 1 parameter (mxdrv event.rs, bindgen); see Adapters.
	driver.OpEventCreate: {"mcEventCreate"},
	// mcError_t mcEventRecord(mcEvent_t, mcStream_t), mcEventSynchronize(mcEvent_t),
	// mcEventElapsedTime(float *ms, mcEvent_t start, mcEvent_t end), mcEventDestroy(mcEvent_t):
	// mcTVM; mxdrv event.rs; FlagCX
	driver.OpEventRecord:      {"mcEventRecord"},
	driver.OpEventSynchronize: {"mcEventSynchronize"},
	driver.OpEventElapsedTime: {"mcEventElapsedTime"},
	driver.OpEventDestroy:     {"mcEventDestroy"},
}

// The mcError_t codes the adapters answer with (Results).
const (
	mcErrorInvalidValue = 1
	mcErrorNotSupported = 801
)

// Adapters are the operations whose MACA function has another shape than
// CUDA's, or must not be called.
var Adapters = map[driver.Op]driver.Adapter{
	// mcDeviceGetAttribute's enum numbers are not confirmed (mcTVM and a
	// Cython transcription imply 21/22 for the compute capability, a third
	// party reads 75/76 from MACA 3.5.3 headers): calling it with a guessed
	// number could answer another attribute. So it is never called; the
	// core reads mcErrorNotSupported as "unknown" (Properties' Major, Minor
	// and MultiProcessors are 0; the presence tier has the compute
	// capability from MXSML).
	driver.OpDeviceAttribute: func(*clib.Func, ...uintptr) int { return mcErrorNotSupported },
	// mcStreamCreate(mcStream_t *stream) takes no flags (the core passes
	// CUDA's flags, always 0: the default stream kind); the numeric values
	// of mcStreamDefault/mcStreamNonBlocking are not confirmed, so
	// mcStreamCreateWithFlags is not used and other flags are refused.
	driver.OpStreamCreate: withoutFlags,
	// mcEventCreate(mcEvent_t *event): likewise (mcEventDefault's value is
	// not confirmed).
	driver.OpEventCreate: withoutFlags,
}

// withoutFlags calls a one-argument create function given CUDA's (out,
// flags): flags 0 is the default kind, anything else mcErrorInvalidValue.
func withoutFlags(fn *clib.Func, args ...uintptr) int {
	if args[1] != 0 {
		return mcErrorInvalidValue
	}
	return fn.CallCode(args[0])
}

// New returns a MACA backend (driver.New(Vendor, opts...)). It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
