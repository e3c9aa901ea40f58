package cuda

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type this package serves: device.CUDA, the model's
// constant for NVIDIA GPUs through the CUDA driver API.
// (Every vendor package exports its device type as Type.)
const Type = device.CUDA

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBCUDA_PATH"

// VisibleDevicesEnv is applied by the driver itself; the backend only
// reports it (Describe().Extra).
const VisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

// Vendor is the CUDA driver API (libcuda.so.1, cu*) as data for the driver
// core, with its presence tier (NVML, /dev/nvidia*). The description is
// shared and read-only.
func Vendor() *driver.Vendor { return vendor }

// PCIVendorNVIDIA is NVIDIA's PCI vendor id (pci.ids: "10de  NVIDIA
// Corporation").
const PCIVendorNVIDIA = 0x10de

var vendor = func() *driver.Vendor {
	v := Family("cu", "CUDA_")
	v.Type, v.Name = Type, "NVIDIA"
	v.Names = namesNVIDIA // runtimes.go cites them
	v.Library = clib.Library{
		Name:    "libcuda",
		EnvVar:  EnvVar,
		Sonames: []string{"libcuda.so.1", "libcuda.so"},
		Dirs:    []string{"/usr/local/nvidia/lib64", clib.MultiarchLibDir, "/usr/lib64", "/usr/lib/wsl/lib"},
	}
	v.VersionBase = 1000 // 13000 is 13.0
	v.UUIDPrefix = "GPU-"
	v.VisibleEnv = []string{VisibleDevicesEnv}
	v.Visibility = Visibility
	v.Presence = presenceSources
	v.DeviceNodes = deviceNodes
	v.Container = container
	v.Vars = []driver.Var{{Name: NVMLEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of NVML (libnvidia-ml.so.1), which FLAGOS_PROBE=presence reads, to open instead of searching"},
		{Name: DeviceOrderEnv, Kind: driver.VarVisible,
			Doc: "orders CUDA's devices: FASTEST_FIRST (the default) or PCI_BUS_ID; applied by CUDA, read by the presence tier"}}
	v.Auto = AutoRank
	v.PCIVendors = []uint16{PCIVendorNVIDIA}
	v.Runtimes = runtimes
	v.Shared = true // other makers' runtimes answer CUDA's API too (runtimes.go)
	// CUresult cuCtxSynchronize_v2(CUcontext ctx), CUDA 13.0 and later:
	// NVIDIA/cuda-python cuda_bindings/cuda/bindings/cydriver.pxd.in
	// (generated from cuda.h 13.0.0) declares it beside the argument-less
	// cuCtxSynchronize; its documentation: "Block for the specified
	// context's tasks to complete ... If the specified context is NULL, the
	// API will operate on the current context". Confirmed exported by
	// libcuda 580.159.04 (an H100). CUDA's own: MUSA's mirror
	// (Family("mu")) has no such name in any public header, so it is named
	// here, not in Symbols. Older drivers lack it and Synchronize makes
	// the context current instead.
	v.Symbols[driver.OpSynchronizeContext] = []string{"cuCtxSynchronize_v2"}
	return v
}()

// AutoRank is CUDA's place in FLAGOS_BACKEND=auto: last, so that a machine
// with another accelerator routes flagos there even where a CUDA runtime
// is installed too (docs/architecture.md gives the whole order).
const AutoRank = 100

// Family is the part of a description that the CUDA driver API and its
// mirrors (MUSA's, with prefix "mu" and errPrefix "MUSA_") share: the
// symbol table, the legacy 32-bit names, the result codes, the attribute and
// JIT option numbers, the primary-context model. The caller adds the type,
// the vendor's name, the library, the version encoding and the rest.
func Family(prefix, errPrefix string) *driver.Vendor {
	return &driver.Vendor{
		Symbols:     Symbols(prefix),
		Narrow:      Narrow(prefix),
		Results:     Results(errPrefix),
		ErrorPrefix: errPrefix,
		ErrorText:   driver.ErrorTextOut,
		Attributes:  attributes,
		Context:     driver.PrimaryContext,
		JIT:         driver.JITOptions{ErrorLogBuffer: 5, ErrorLogBufferSize: 6}, // CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES)
		// CU_STREAM_NON_BLOCKING and CU_EVENT_DISABLE_TIMING (cuda.h 13.0);
		// MUSA's mirror is assumed to number them alike (FlagCX's MUSA
		// adaptor creates musaStreamNonBlocking streams; unconfirmed).
		NonBlockingStream: 1,
		EventNoTiming:     2,
	}
}

// attributes are CUdevice_attribute's numbers (MUdevice_attribute has the
// same).
var attributes = driver.Attributes{
	MultiprocessorCount:    16, // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	ComputeCapabilityMajor: 75, // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	ComputeCapabilityMinor: 76, // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	// CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (cuda.h 11.7 to 13.0; cydriver.pxd.in)
	DMABufSupported: 124,
}

// New returns a CUDA backend (driver.New(Vendor, opts...)). It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }

// Symbols is the CUDA driver API's symbol table with prefix in place of
// "cu": each operation's names, the versioned (newest) first. MUSA's driver
// API mirrors it with "mu".
func Symbols(prefix string) map[driver.Op][]string {
	names := func(ns ...string) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = prefix + n
		}
		return out
	}
	return map[driver.Op][]string{
		driver.OpInit:            names("Init"),
		driver.OpDriverVersion:   names("DriverGetVersion"),
		driver.OpDeviceCount:     names("DeviceGetCount"),
		driver.OpDeviceGet:       names("DeviceGet"),
		driver.OpDeviceName:      names("DeviceGetName"),
		driver.OpDeviceTotalMem:  names("DeviceTotalMem_v2", "DeviceTotalMem"),
		driver.OpDeviceAttribute: names("DeviceGetAttribute"),
		driver.OpDeviceUUID:      names("DeviceGetUuid_v2", "DeviceGetUuid"),
		driver.OpDevicePCIBusID:  names("DeviceGetPCIBusId"),
		driver.OpErrorName:       names("GetErrorName"),
		driver.OpErrorString:     names("GetErrorString"),

		driver.OpPrimaryCtxRetain: names("DevicePrimaryCtxRetain"),
		driver.OpCtxSetCurrent:    names("CtxSetCurrent"),
		driver.OpCtxGetCurrent:    names("CtxGetCurrent"),
		driver.OpSynchronize:      names("CtxSynchronize"),

		driver.OpMemGetInfo:   names("MemGetInfo_v2", "MemGetInfo"),
		driver.OpMemAlloc:     names("MemAlloc_v2", "MemAlloc"),
		driver.OpMemFree:      names("MemFree_v2", "MemFree"),
		driver.OpMemcpyHtoD:   names("MemcpyHtoD_v2", "MemcpyHtoD"),
		driver.OpMemcpyDtoH:   names("MemcpyDtoH_v2", "MemcpyDtoH"),
		driver.OpMemHostAlloc: names("MemHostAlloc"),
		driver.OpMemFreeHost:  names("MemFreeHost"),

		driver.OpModuleLoadDataEx:  names("ModuleLoadDataEx"),
		driver.OpModuleLoadData:    names("ModuleLoadData"),
		driver.OpModuleUnload:      names("ModuleUnload"),
		driver.OpModuleGetFunction: names("ModuleGetFunction"),
		driver.OpModuleGetGlobal:   names("ModuleGetGlobal_v2", "ModuleGetGlobal"),
		driver.OpLaunchKernel:      names("LaunchKernel"),

		driver.OpStreamCreate:      names("StreamCreate"),
		driver.OpStreamSynchronize: names("StreamSynchronize"),
		driver.OpStreamDestroy:     names("StreamDestroy_v2", "StreamDestroy"),
		driver.OpStreamWaitEvent:   names("StreamWaitEvent"),
		driver.OpMemcpyHtoDAsync:   names("MemcpyHtoDAsync_v2", "MemcpyHtoDAsync"),
		driver.OpMemcpyDtoHAsync:   names("MemcpyDtoHAsync_v2", "MemcpyDtoHAsync"),
		driver.OpEventCreate:       names("EventCreate"),
		driver.OpEventRecord:       names("EventRecord"),
		driver.OpEventSynchronize:  names("EventSynchronize"),
		driver.OpEventElapsedTime:  names("EventElapsedTime_v2", "EventElapsedTime"),
		driver.OpEventDestroy:      names("EventDestroy_v2", "EventDestroy"),

		// cuda.h of CUDA 12.4 and later (cuda.h 13.0: "CUresult
		// cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t
		// *paramOffset, size_t *paramSize)"); older drivers lack it and the
		// argument count of a launch is then not checked.
		driver.OpFuncGetParamInfo: names("FuncGetParamInfo"),

		// Graphs (cuda.h 13.0; research: docs of the graphs issue). The
		// capture with a mode is the _v2 export: bare cuStreamBeginCapture is
		// the one-argument CUDA 10.0 ABI. cuda.h #defines cuGraphInstantiate
		// to cuGraphInstantiateWithFlags (3 arguments, CUDA 11.4); the bare
		// cuGraphInstantiate and cuGraphInstantiate_v2 exports take 5, so
		// neither is bound. MUSA's names (the mu mirror) are overridden in
		// drivers/musa where they are not confirmed.
		driver.OpStreamBeginCapture: names("StreamBeginCapture_v2"),
		driver.OpStreamEndCapture:   names("StreamEndCapture"),
		driver.OpGraphInstantiate:   names("GraphInstantiateWithFlags"),
		driver.OpGraphLaunch:        names("GraphLaunch"),
		driver.OpGraphExecDestroy:   names("GraphExecDestroy"),
		driver.OpGraphDestroy:       names("GraphDestroy"),

		// More memory and stream operations, each with the shape driver.Op
		// gives, from cuda.h 13.0 as NVIDIA/cuda-python's
		// cuda_bindings/cuda/bindings/cydriver.pxd.in declares it: the
		// _v2 names are what cuda.h's #defines make of the bare ones
		// (cuMemsetD8 -> cuMemsetD8_v2, cuMemcpyDtoD -> cuMemcpyDtoD_v2,
		// cuMemHostGetDevicePointer -> _v2, cuIpcOpenMemHandle -> _v2,
		// cuStreamWaitValue64 -> cuStreamWaitValue64_v2, ...); the bare
		// exports are the older ABI of the same shape (the memsets' and
		// the copy's 32-bit, listed in Narrow), kept as fallbacks.
		// cuMemAllocAsync and cuMemFreeAsync are CUDA 11.2, cuLaunchHostFunc
		// 10.0, cuMemGetHandleForAddressRange 11.7 (older drivers lack them:
		// those features only are not supported). MUSA's mirror of these
		// is drivers/musa's to confirm.
		driver.OpMemsetD8:             names("MemsetD8_v2", "MemsetD8"),
		driver.OpMemsetD16:            names("MemsetD16_v2", "MemsetD16"),
		driver.OpMemsetD32:            names("MemsetD32_v2", "MemsetD32"),
		driver.OpMemsetD8Async:        names("MemsetD8Async"),
		driver.OpMemsetD16Async:       names("MemsetD16Async"),
		driver.OpMemsetD32Async:       names("MemsetD32Async"),
		driver.OpMemcpyDtoD:           names("MemcpyDtoD_v2", "MemcpyDtoD"),
		driver.OpMemcpyDtoDAsync:      names("MemcpyDtoDAsync_v2", "MemcpyDtoDAsync"),
		driver.OpMemAllocManaged:      names("MemAllocManaged"),
		driver.OpMemAllocAsync:        names("MemAllocAsync"),
		driver.OpMemFreeAsync:         names("MemFreeAsync"),
		driver.OpMemHostGetDevicePtr:  names("MemHostGetDevicePointer_v2", "MemHostGetDevicePointer"),
		driver.OpStreamQuery:          names("StreamQuery"),
		driver.OpEventQuery:           names("EventQuery"),
		driver.OpStreamWaitValue64:    names("StreamWaitValue64_v2", "StreamWaitValue64"),
		driver.OpStreamWriteValue64:   names("StreamWriteValue64_v2", "StreamWriteValue64"),
		driver.OpLaunchHostFunc:       names("LaunchHostFunc"),
		driver.OpIpcGetMemHandle:      names("IpcGetMemHandle"),
		driver.OpIpcOpenMemHandle:     names("IpcOpenMemHandle_v2", "IpcOpenMemHandle"),
		driver.OpIpcCloseMemHandle:    names("IpcCloseMemHandle"),
		driver.OpDeviceByPCIBusID:     names("DeviceGetByPCIBusId"),
		driver.OpMemGetHandleForRange: names("MemGetHandleForAddressRange"),
	}
}

// Narrow lists the legacy unversioned functions whose sizes and device
// addresses are 32-bit (cuMemAlloc before cuMemAlloc_v2), with prefix in
// place of "cu".
func Narrow(prefix string) []string {
	var out []string
	for _, n := range []string{"DeviceTotalMem", "MemGetInfo", "MemAlloc", "MemFree", "MemcpyHtoD", "MemcpyDtoH",
		"ModuleGetGlobal", "MemcpyHtoDAsync", "MemcpyDtoHAsync",
		"MemsetD8", "MemsetD16", "MemsetD32", "MemcpyDtoD", "MemcpyDtoDAsync", "MemHostGetDevicePointer"} {
		out = append(out, prefix+n)
	}
	return out
}
