package gcu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type: torch_gcu's own name for Enflame GCUs
// (EnflameTechnology/vllm-gcu vllm_gcu/gcu.py: device_type "gcu", the
// PrivateUse1 backend; torch.gcu in flagos-ai/FlagTree
// third_party/enflame/backend/driver.py).
const Type device.Type = "gcu"

// EnvVar names the variable that overrides the search for libtopsrt.so
// with an absolute path.
const EnvVar = "FLAGOS_LIBTOPSRT_PATH"

// VisibleDevicesEnv is the variable the TOPS runtime applies to hide GCUs:
// comma-separated ordinals, or DRS-<instance UUID> for a DRS partition
// (vllm-gcu's device_control_env_var; EnflameTechnology/gcushare
// gcushare-device-plugin/pkg/server/server.go). The backend only reports
// it; the presence tier applies the ordinal form. (ENFLAME_VISIBLE_DEVICES
// is the container toolkit's, set by the device plugin; that the runtime
// reads it is not confirmed, so it is not reported.)
const VisibleDevicesEnv = "TOPS_VISIBLE_DEVICES"

// PCIVendorEnflame is Enflame's PCI vendor id (pci.ids: "1e36  Shanghai
// Enflame Technology Co. Ltd").
const PCIVendorEnflame = 0x1e36

// AutoRank is the GCU's place in FLAGOS_BACKEND=auto: after the other
// non-NVIDIA families given lower ranks, before cuda (100)
// (docs/architecture.md gives the whole order).
const AutoRank = 60

// Vendor is Enflame's TOPS runtime (TopsRider; libtopsrt.so, tops*) as data
// for the driver core, with its presence tier (EFML, /dev/gcu*). The TOPS
// runtime is HIP-shaped: a current device per thread (topsSetDevice), the
// error name and text returned as const char *, streams and events created
// with flags. It has no UUID function and a small attribute enum whose
// numbers are confirmed for one header only, so the compute capability
// comes from topsDeviceComputeCapability and the multiprocessor count is
// left unknown. The description is shared and read-only.
func Vendor() *driver.Vendor { return vendor }

var vendor = &driver.Vendor{
	Type: Type,
	Name: "Enflame",
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_enflame/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/tops_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 README.md: third_party/enflame on its triton_v3.3.x branch).
	Names: device.VendorNames{FlagOS: "enflame", FlagGems: "enflame", FlagCX: "TOPS", FlagTree: "enflame"},
	Library: clib.Library{
		Name:   "libtopsrt",
		EnvVar: EnvVar,
		// Enflame's own loader opens "libtopsrt.so" (TOPS_RUNTIMES_LIBNAME,
		// EnflameTechnology/tops-codec-headers include/tops/dynlink_tops_loader.h);
		// no versioned soname is confirmed.
		Sonames: []string{"libtopsrt.so"},
		// TopsRider's folder (flagos-ai/FlagCX makefiles/enflame.mk DEVICE_HOME
		// /opt/tops/; FlagTree backend.py CAPS_PATH default /opt/tops, lib).
		Dirs: []string{"/opt/tops/lib"},
	},
	Symbols:     Symbols,
	Adapters:    Adapters,
	Results:     Results,
	ErrorPrefix: "TOPS_",
	ErrorText:   driver.ErrorTextReturned, // const char *topsGetErrorName(topsError_t)
	Attributes:  Attributes,
	// topsDeviceGetPCIBusId takes an int device, not a topsDevice_t.
	OrdinalArgs: []driver.Op{driver.OpDevicePCIBusID},
	Context:     driver.CurrentDevice,
	// JIT is zero: topsModuleLoadDataEx's options "are not used"; only
	// topsModuleLoadData is bound.
	VersionBase: 1000, // "(1000 major + 10 minor). For example, topsrider 2.2 would be represented by 2020"
	VisibleEnv:  []string{VisibleDevicesEnv},
	Visibility:  Visibility,
	Presence:    presenceSources,
	Container:   container,
	DeviceNodes: deviceNodes,
	Vars: []driver.Var{{Name: EFMLEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of EFML (libefml.so), which FLAGOS_PROBE=presence reads, to open instead of searching"}},
	Auto:       AutoRank,
	PCIVendors: []uint16{PCIVendorEnflame},
}

// Attributes: compute capability through topsDeviceComputeCapability (the
// OpDeviceAttribute adapter, adapters.go), keyed by the numbers
// topsDeviceAttribute_t gives those attributes in the one public header
// (1 and 2; no attribute number reaches the library). The multiprocessor
// count is not asked for: topsDeviceAttributeMultiprocessorCount is 10 in
// that header (TopsRider 2.3), but whether TopsRider 3.x and topsPlatform
// 4.0 kept the enum's numbers is not confirmed, and a wrong number answers
// another attribute. Properties.MultiProcessors is 0 (unknown).
var Attributes = driver.Attributes{
	ComputeCapabilityMajor: attrComputeCapabilityMajor,
	ComputeCapabilityMinor: attrComputeCapabilityMinor,
	MultiprocessorCount:    -1,
}

const (
	attrComputeCapabilityMajor = 1 // topsDeviceAttributeComputeCapabilityMajor
	attrComputeCapabilityMinor = 2 // topsDeviceAttributeComputeCapabilityMinor
)

// Symbols is the TOPS runtime's symbol table. Every prototype is
// tops_runtime_api.h's (EnflameTechnology/tops-codec-headers
// include/tops/tops_runtime_api.h, the TopsRider 2.3 header, last changed
// in ec0f89a5; line numbers there), all inside extern "C" with default
// visibility; Enflame's later code (FlagTree, FlagCX, UHHI,
// PaddleCustomDevice) calls them with the same shapes.
//
// Not bound, and why:
//   - OpDeviceUUID: the runtime has no UUID function (only a field of
//     topsDeviceProp_t, whose layout changed between releases).
//   - OpModuleLoadDataEx: "Options are not used. topsModuleLoadData is
//     called."; topsModuleLoadData is bound instead.
//   - OpFuncGetParamInfo: no TOPS function tells a kernel's parameters.
//   - The context API: the header declares topsCtx_t but no topsCtx* or
//     primary-context function (driver.CurrentDevice).
var Symbols = map[driver.Op][]string{
	driver.OpInit:           {"topsInit"},             // topsError_t topsInit(unsigned int flags) (1065)
	driver.OpDriverVersion:  {"topsDriverGetVersion"}, // topsError_t topsDriverGetVersion(int *driverVersion) (1112)
	driver.OpDeviceCount:    {"topsGetDeviceCount"},   // topsError_t topsGetDeviceCount(int *count) (1674): topsErrorNoDevice with none
	driver.OpDeviceGet:      {"topsDeviceGet"},        // topsError_t topsDeviceGet(topsDevice_t *device, int ordinal) (1201); topsDevice_t is int
	driver.OpDeviceName:     {"topsDeviceGetName"},    // topsError_t topsDeviceGetName(char *name, int len, topsDevice_t device) (1288)
	driver.OpDeviceTotalMem: {"topsDeviceTotalMem"},   // topsError_t topsDeviceTotalMem(size_t *bytes, topsDevice_t device) (1415)
	// topsError_t topsDeviceComputeCapability(int *major, int *minor, topsDevice_t device) (1244): adapter
	driver.OpDeviceAttribute: {"topsDeviceComputeCapability"},
	driver.OpDevicePCIBusID:  {"topsDeviceGetPCIBusId"}, // topsError_t topsDeviceGetPCIBusId(char *pciBusId, int len, int device) (1331)
	driver.OpErrorName:       {"topsGetErrorName"},      // const char *topsGetErrorName(topsError_t tops_error) (2458)
	driver.OpErrorString:     {"topsGetErrorString"},    // const char *topsGetErrorString(topsError_t topsError) (2503)

	driver.OpSetDevice:   {"topsSetDevice"},         // topsError_t topsSetDevice(int deviceId) (1581)
	driver.OpGetDevice:   {"topsGetDevice"},         // topsError_t topsGetDevice(int *deviceId) (1627)
	driver.OpSynchronize: {"topsDeviceSynchronize"}, // topsError_t topsDeviceSynchronize(void) (1469)

	driver.OpMemGetInfo:   {"topsMemGetInfo"}, // topsError_t topsMemGetInfo(size_t *free, size_t *total) (5379)
	driver.OpMemAlloc:     {"topsMalloc"},     // topsError_t topsMalloc(void **ptr, size_t size) (3694)
	driver.OpMemFree:      {"topsFree"},       // topsError_t topsFree(void *ptr) (4092)
	driver.OpMemcpyHtoD:   {"topsMemcpyHtoD"}, // topsError_t topsMemcpyHtoD(topsDeviceptr_t dst, void *src, size_t sizeBytes) (4303)
	driver.OpMemcpyDtoH:   {"topsMemcpyDtoH"}, // topsError_t topsMemcpyDtoH(void *dst, topsDeviceptr_t src, size_t sizeBytes) (4352)
	driver.OpMemHostAlloc: {"topsHostMalloc"}, // topsError_t topsHostMalloc(void **ptr, size_t size, unsigned int flags) (3841)
	driver.OpMemFreeHost:  {"topsHostFree"},   // topsError_t topsHostFree(void *ptr) (4139)

	driver.OpModuleLoadData:    {"topsModuleLoadData"},    // topsError_t topsModuleLoadData(topsModule_t *module, const void *image) (6157)
	driver.OpModuleUnload:      {"topsModuleUnload"},      // topsError_t topsModuleUnload(topsModule_t module) (5981)
	driver.OpModuleGetFunction: {"topsModuleGetFunction"}, // topsError_t topsModuleGetFunction(topsFunction_t *function, topsModule_t module, const char *kname) (6026)
	// topsError_t topsModuleGetGlobal(topsDeviceptr_t *dptr, size_t *bytes, topsModule_t hmod, const char *name) (4601)
	driver.OpModuleGetGlobal: {"topsModuleGetGlobal"},
	// topsError_t topsModuleLaunchKernel(topsFunction_t f, unsigned int gridDimX, gridDimY, gridDimZ,
	// unsigned int blockDimX, blockDimY, blockDimZ, unsigned int sharedMemBytes, topsStream_t stream,
	// void **kernelParams, void **extra) (6268): cuLaunchKernel's shape. The core passes kernelParams
	// and no extra, as FlagTree's launcher and UHHI do on current runtimes; the 2.3 header warns
	// "kernellParams argument is not yet implemented in TOPS. Please use extra instead".
	driver.OpLaunchKernel: {"topsModuleLaunchKernel"},

	// topsStreamCreate(topsStream_t *) takes no flags: the WithFlags forms have CUDA's shapes.
	driver.OpStreamCreate:      {"topsStreamCreateWithFlags"}, // topsError_t topsStreamCreateWithFlags(topsStream_t *stream, unsigned int flags) (2620)
	driver.OpStreamSynchronize: {"topsStreamSynchronize"},     // topsError_t topsStreamSynchronize(topsStream_t stream) (2778)
	driver.OpStreamDestroy:     {"topsStreamDestroy"},         // topsError_t topsStreamDestroy(topsStream_t stream) (2675)
	// topsError_t topsStreamWaitEvent(topsStream_t stream, topsEvent_t event, unsigned int flags) (2832)
	driver.OpStreamWaitEvent: {"topsStreamWaitEvent"},
	// topsError_t topsMemcpyHtoDAsync(topsDeviceptr_t dst, void *src, size_t sizeBytes, topsStream_t stream) (4451)
	driver.OpMemcpyHtoDAsync: {"topsMemcpyHtoDAsync"},
	// topsError_t topsMemcpyDtoHAsync(void *dst, topsDeviceptr_t src, size_t sizeBytes, topsStream_t stream) (4501)
	driver.OpMemcpyDtoHAsync:  {"topsMemcpyDtoHAsync"},
	driver.OpEventCreate:      {"topsEventCreateWithFlags"}, // topsError_t topsEventCreateWithFlags(topsEvent_t *event, unsigned flags) (3141)
	driver.OpEventRecord:      {"topsEventRecord"},          // topsError_t topsEventRecord(topsEvent_t event, topsStream_t stream) (3265)
	driver.OpEventSynchronize: {"topsEventSynchronize"},     // topsError_t topsEventSynchronize(topsEvent_t event) (3373)
	driver.OpEventElapsedTime: {"topsEventElapsedTime"},     // topsError_t topsEventElapsedTime(float *ms, topsEvent_t start, topsEvent_t stop) (3444)
	driver.OpEventDestroy:     {"topsEventDestroy"},         // topsError_t topsEventDestroy(topsEvent_t event) (3320)
}

// New returns an Enflame GCU backend (driver.New(Vendor, opts...)). It does
// no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
