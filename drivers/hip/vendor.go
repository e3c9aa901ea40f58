package hip

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type this package serves: device.HIP, the model's
// constant for AMD ROCm and Hygon DCU GPUs through HIP.
// (Every vendor package exports its device type as Type.)
const Type = device.HIP

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBHIP_PATH"

// The visible-devices variables the ROCm runtimes apply, in the order they
// apply them; the backend only reports them (Describe().Extra). ROCr applies
// ROCR_VISIBLE_DEVICES first; HIP's CLR then applies HIP_VISIBLE_DEVICES,
// or CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is unset or empty, to
// what ROCr left.
const (
	ROCRVisibleDevicesEnv = "ROCR_VISIBLE_DEVICES"
	VisibleDevicesEnv     = "HIP_VISIBLE_DEVICES"
	CUDAVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"
)

// Vendor is the HIP runtime API of AMD ROCm and Hygon DTK (libamdhip64,
// hip*) as data for the driver core. HIP selects a device per thread
// (hipSetDevice) instead of making a context current, takes the ordinal
// where CUDA takes a device handle for attributes and PCI bus ids, returns
// its error names as const char *, ignores JIT options and encodes its
// version as major*10000000 + minor*100000 + patch.
//
// The description is shared and read-only.
func Vendor() *driver.Vendor { return vendor }

// The PCI vendor ids of HIP's accelerators: AMD's GPUs (pci.ids: "1002
// Advanced Micro Devices, Inc. [AMD/ATI]") and Hygon's DCUs (pci.ids:
// "1d94  Chengdu Haiguang IC Design Co., Ltd.").
const (
	PCIVendorAMD   = 0x1002
	PCIVendorHygon = 0x1d94
)

// AutoRank is HIP's place in FLAGOS_BACKEND=auto (docs/architecture.md
// gives the whole order).
const AutoRank = 20

var vendor = &driver.Vendor{
	Type: Type,
	Name: "AMD/Hygon",
	Library: clib.Library{
		Name:    "libamdhip64",
		EnvVar:  EnvVar,
		Sonames: []string{"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
		Dirs:    []string{"/opt/rocm/lib", "/opt/rocm-*/lib", "/opt/dtk/lib", "/opt/dtk-*/lib", "/opt/dtk/hip/lib"},
		// ROCr's thunk (libhsakmt) opens /dev/kfd to find any GPU, on AMD
		// and Hygon alike: without it hipInit reports hipErrorNoDevice.
		Nodes: []string{"/dev/kfd"},
	},
	Symbols:     symbols,
	Adapters:    adapters,
	Results:     results,
	ErrorPrefix: "HIP_",
	ErrorText:   driver.ErrorTextReturned,
	Attributes:  attributes,
	OrdinalArgs: []driver.Op{driver.OpDeviceAttribute, driver.OpDevicePCIBusID, driver.OpDeviceByPCIBusID},
	Context:     driver.CurrentDevice,
	// JIT is zero: hipModuleLoadDataEx ignores its options (clr passes
	// none to the loader), so it is called without any.
	// hipStreamNonBlocking 0x01, hipEventDisableTiming 0x2 (hip_runtime_api.h).
	NonBlockingStream: 1,
	EventNoTiming:     2,
	VersionBase:       10000000, // 60241134 is 6.2
	UUIDPrefix:        "GPU-",
	UUIDForm:          driver.UUIDHexText, // ROCr's 16 hex digits as characters (driver.UUIDHexText says where)
	VisibleEnv:        []string{ROCRVisibleDevicesEnv, VisibleDevicesEnv, CUDAVisibleDevicesEnv},
	Visibility:        Visibility,
	Presence:          presenceSources,
	Container:         container,
	Auto:              AutoRank,
	PCIVendors:        []uint16{PCIVendorAMD, PCIVendorHygon},
	// Whose runtime answered: AMD's ROCm or Hygon's DTK, told by the
	// devices' PCI vendor ids and DTK's install folder.
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_amd, _hygon/__init__.py), FlagCX's
	// device adaptor names (flagos-ai/FlagCX @0c721293
	// flagcx/adaptor/device/hip_adaptor.cc "HIP"; ducuda_adaptor.cc
	// "DUCUDA", built with USE_DU, "Hygon support" in
	// docs/getting_started.md), FlagTree's backends (FLAGTREE_BACKEND,
	// flagos-ai/FlagTree @0bb47ea4 third_party/amd, third_party/hcu).
	Runtimes: []driver.Runtime{
		{Name: "AMD", PCIVendors: []uint16{PCIVendorAMD}, Paths: []string{"/rocm"},
			Names: device.VendorNames{FlagOS: "amd", FlagGems: "amd", FlagCX: "HIP", FlagTree: "amd"}},
		{Name: "Hygon", PCIVendors: []uint16{PCIVendorHygon}, Paths: []string{"/dtk"},
			Names: device.VendorNames{FlagOS: "hygon", FlagGems: "hygon", FlagCX: "DUCUDA", FlagTree: "hcu"}},
	},
}

// attributes are hipDeviceAttribute_t's numbers (the same from ROCm 5.0,
// which renumbered the enum, to 7.x).
var attributes = driver.Attributes{
	MultiprocessorCount:    63, // hipDeviceAttributeMultiprocessorCount
	ComputeCapabilityMajor: 23, // hipDeviceAttributeComputeCapabilityMajor
	ComputeCapabilityMinor: 61, // hipDeviceAttributeComputeCapabilityMinor
	// hipDeviceAttributeDmaBufSupported: 93 in hipDeviceAttribute_t after
	// hipDeviceAttributeHostNumaId (92), as the generated bindings of
	// hip-python and hipfort number it (ROCm 6.2 and later).
	DMABufSupported: 93,
}

// symbols is the HIP symbol table: each operation's one function, with the
// C shape driver.Op gives. The context functions (hipCtx*,
// hipDevicePrimaryCtx*) are not bound: they are deprecated and the
// CurrentDevice model does not need them.
var symbols = map[driver.Op][]string{
	driver.OpInit:            {"hipInit"},
	driver.OpDriverVersion:   {"hipDriverGetVersion"},
	driver.OpDeviceCount:     {"hipGetDeviceCount"},
	driver.OpDeviceGet:       {"hipDeviceGet"},
	driver.OpDeviceName:      {"hipDeviceGetName"},
	driver.OpDeviceTotalMem:  {"hipDeviceTotalMem"},
	driver.OpDeviceAttribute: {"hipDeviceGetAttribute"},
	driver.OpDeviceUUID:      {"hipDeviceGetUuid"},
	driver.OpDevicePCIBusID:  {"hipDeviceGetPCIBusId"},
	driver.OpErrorName:       {"hipGetErrorName"},
	driver.OpErrorString:     {"hipGetErrorString"},

	driver.OpSetDevice:   {"hipSetDevice"},
	driver.OpGetDevice:   {"hipGetDevice"},
	driver.OpSynchronize: {"hipDeviceSynchronize"},

	driver.OpMemGetInfo:   {"hipMemGetInfo"},
	driver.OpMemAlloc:     {"hipMalloc"},
	driver.OpMemFree:      {"hipFree"},
	driver.OpMemcpyHtoD:   {"hipMemcpyHtoD"},
	driver.OpMemcpyDtoH:   {"hipMemcpyDtoH"},
	driver.OpMemHostAlloc: {"hipHostMalloc"},
	driver.OpMemFreeHost:  {"hipHostFree"},

	driver.OpModuleLoadDataEx:  {"hipModuleLoadDataEx"},
	driver.OpModuleLoadData:    {"hipModuleLoadData"},
	driver.OpModuleUnload:      {"hipModuleUnload"},
	driver.OpModuleGetFunction: {"hipModuleGetFunction"},
	driver.OpModuleGetGlobal:   {"hipModuleGetGlobal"},
	driver.OpLaunchKernel:      {"hipModuleLaunchKernel"},

	driver.OpStreamCreate:      {"hipStreamCreateWithFlags"},
	driver.OpStreamSynchronize: {"hipStreamSynchronize"},
	driver.OpStreamDestroy:     {"hipStreamDestroy"},
	driver.OpStreamWaitEvent:   {"hipStreamWaitEvent"},
	driver.OpMemcpyHtoDAsync:   {"hipMemcpyHtoDAsync"},
	driver.OpMemcpyDtoHAsync:   {"hipMemcpyDtoHAsync"},
	driver.OpEventCreate:       {"hipEventCreateWithFlags"},
	driver.OpEventRecord:       {"hipEventRecord"},
	driver.OpEventSynchronize:  {"hipEventSynchronize"},
	driver.OpEventElapsedTime:  {"hipEventElapsedTime"},
	driver.OpEventDestroy:      {"hipEventDestroy"},

	// Graphs (hip_runtime_api.h, HIP 6.3 and 7; exported since HIP 4.3,
	// WithFlags since 4.5). Bare hipGraphInstantiate takes 5 arguments (the
	// shape of CUDA's cuGraphInstantiate_v2), so the 3-argument
	// hipGraphInstantiateWithFlags is bound.
	driver.OpStreamBeginCapture: {"hipStreamBeginCapture"},
	driver.OpStreamEndCapture:   {"hipStreamEndCapture"},
	driver.OpGraphInstantiate:   {"hipGraphInstantiateWithFlags"},
	driver.OpGraphLaunch:        {"hipGraphLaunch"},
	driver.OpGraphExecDestroy:   {"hipGraphExecDestroy"},
	driver.OpGraphDestroy:       {"hipGraphDestroy"},

	// More memory and stream operations (hip_runtime_api.h, ROCm/HIP at
	// c5e11fc, ROCm 6.3: hipMemsetD8/D16/D32 and their Async forms,
	// hipMemcpyDtoD(Async), hipMallocManaged(void **, size_t, unsigned
	// flags), hipMallocAsync, hipFreeAsync, hipHostGetDevicePointer(void
	// **, void *, unsigned), hipStreamQuery, hipEventQuery,
	// hipStreamWaitValue64 (with a fifth argument, the mask: see
	// adapters), hipStreamWriteValue64, hipLaunchHostFunc, the IPC trio
	// with the 64-byte hipIpcMemHandle_t by value, hipDeviceGetByPCIBusId(int
	// *device, const char *)). hipMemGetHandleForAddressRange(void *handle,
	// hipDeviceptr_t, size_t, hipMemRangeHandleType, unsigned long long) is
	// newer than that header (ROCm/rocm-systems' projects/hip); a runtime
	// without it lacks DMA-buf only.
	driver.OpMemsetD8:             {"hipMemsetD8"},
	driver.OpMemsetD16:            {"hipMemsetD16"},
	driver.OpMemsetD32:            {"hipMemsetD32"},
	driver.OpMemsetD8Async:        {"hipMemsetD8Async"},
	driver.OpMemsetD16Async:       {"hipMemsetD16Async"},
	driver.OpMemsetD32Async:       {"hipMemsetD32Async"},
	driver.OpMemcpyDtoD:           {"hipMemcpyDtoD"},
	driver.OpMemcpyDtoDAsync:      {"hipMemcpyDtoDAsync"},
	driver.OpMemAllocManaged:      {"hipMallocManaged"},
	driver.OpMemAllocAsync:        {"hipMallocAsync"},
	driver.OpMemFreeAsync:         {"hipFreeAsync"},
	driver.OpMemHostGetDevicePtr:  {"hipHostGetDevicePointer"},
	driver.OpStreamQuery:          {"hipStreamQuery"},
	driver.OpEventQuery:           {"hipEventQuery"},
	driver.OpStreamWaitValue64:    {"hipStreamWaitValue64"},
	driver.OpStreamWriteValue64:   {"hipStreamWriteValue64"},
	driver.OpLaunchHostFunc:       {"hipLaunchHostFunc"},
	driver.OpIpcGetMemHandle:      {"hipIpcGetMemHandle"},
	driver.OpIpcOpenMemHandle:     {"hipIpcOpenMemHandle"},
	driver.OpIpcCloseMemHandle:    {"hipIpcCloseMemHandle"},
	driver.OpDeviceByPCIBusID:     {"hipDeviceGetByPCIBusId"},
	driver.OpMemGetHandleForRange: {"hipMemGetHandleForAddressRange"},
}

// adapters call the HIP functions whose shape is not CUDA's.
var adapters = map[driver.Op]driver.Adapter{
	// hipError_t hipStreamWaitValue64(hipStream_t, void *ptr, uint64_t
	// value, unsigned int flags, uint64_t mask): CUDA's four arguments and
	// a mask of every bit (the header's default), so the whole word is
	// compared; hipStreamWaitValueGte is 0, as CU_STREAM_WAIT_VALUE_GEQ.
	driver.OpStreamWaitValue64: func(fn *clib.Func, args ...uintptr) int {
		return fn.CallCode(args[0], args[1], args[2], args[3], ^uintptr(0))
	},
}

// New returns a HIP backend (driver.New(Vendor, opts...)). It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
