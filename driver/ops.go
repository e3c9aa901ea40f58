package driver

// Op is one operation of a driver API, whatever the vendor calls it. Each
// comment gives the C shape the vendor's function must have (CUDA's names;
// HIP's and MUSA's take the same arguments in the same order). Every
// function returns the vendor's result code, except the error-text
// functions of an ErrorTextReturned vendor.
type Op int

// The operations. Required ones (the probe and the context model's) make the
// library unusable when missing; the others disable their feature only, with
// an error matching device.ErrNotSupported.
const (
	OpInit            Op = iota // cuInit(unsigned int flags)                         required
	OpDriverVersion             // cuDriverGetVersion(int *version)                   required
	OpDeviceCount               // cuDeviceGetCount(int *count)                       required
	OpDeviceGet                 // cuDeviceGet(CUdevice *dev, int ordinal)            required
	OpDeviceName                // cuDeviceGetName(char *name, int len, CUdevice)     required
	OpDeviceTotalMem            // cuDeviceTotalMem_v2(size_t *bytes, CUdevice)       required where named (else see Properties)
	OpDeviceAttribute           // cuDeviceGetAttribute(int *v, int attr, CUdevice)   required
	OpDeviceUUID                // cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice)
	OpDevicePCIBusID            // cuDeviceGetPCIBusId(char *id, int len, CUdevice)
	OpErrorName                 // cuGetErrorName(CUresult, const char **s) or const char *hipGetErrorName(hipError_t)
	OpErrorString               // cuGetErrorString, likewise

	OpPrimaryCtxRetain   // cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice)     required by PrimaryContext
	OpCtxSetCurrent      // cuCtxSetCurrent(CUcontext)                              required by PrimaryContext, DeviceContext
	OpCtxGetCurrent      // cuCtxGetCurrent(CUcontext *ctx): NULL without one       required by DeviceContext
	OpSetDevice          // hipSetDevice(int ordinal)                               required by CurrentDevice, DeviceContext
	OpGetDevice          // hipGetDevice(int *ordinal)
	OpSynchronize        // cuCtxSynchronize(void) / hipDeviceSynchronize(void)     required
	OpSynchronizeContext // cuCtxSynchronize_v2(CUcontext ctx): CUDA 13.0+; ctx need not be current

	OpMemGetInfo   // cuMemGetInfo_v2(size_t *free, size_t *total)
	OpMemAlloc     // cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
	OpMemFree      // cuMemFree_v2(CUdeviceptr)
	OpMemcpyHtoD   // cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
	OpMemcpyDtoH   // cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
	OpMemHostAlloc // cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
	OpMemFreeHost  // cuMemFreeHost(void *p)

	OpModuleLoadDataEx  // cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *opts, void **vals)
	OpModuleLoadData    // cuModuleLoadData(CUmodule *m, const void *image)
	OpModuleUnload      // cuModuleUnload(CUmodule)
	OpModuleGetFunction // cuModuleGetFunction(CUfunction *f, CUmodule, const char *name)
	OpModuleGetGlobal   // cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule, const char *name)
	OpLaunchKernel      // cuLaunchKernel(CUfunction, 3 x grid, 3 x block, unsigned shared, CUstream, void **params, void **extra)

	OpStreamCreate      // cuStreamCreate(CUstream *s, unsigned int flags)
	OpStreamSynchronize // cuStreamSynchronize(CUstream)
	OpStreamDestroy     // cuStreamDestroy_v2(CUstream)
	OpStreamWaitEvent   // cuStreamWaitEvent(CUstream, CUevent, unsigned int flags)
	OpMemcpyHtoDAsync   // cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream)
	OpMemcpyDtoHAsync   // cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream)
	OpEventCreate       // cuEventCreate(CUevent *e, unsigned int flags)
	OpEventRecord       // cuEventRecord(CUevent, CUstream)
	OpEventSynchronize  // cuEventSynchronize(CUevent)
	OpEventElapsedTime  // cuEventElapsedTime(float *ms, CUevent start, CUevent end)
	OpEventDestroy      // cuEventDestroy_v2(CUevent)

	OpFuncGetParamInfo // cuFuncGetParamInfo(CUfunction, size_t index, size_t *offset, size_t *size): CUDA 12.4+; past the last parameter CUDA_ERROR_INVALID_VALUE

	// Graphs: capture a stream's work, instantiate it, replay it. The mode
	// is a CUstreamCaptureMode (GLOBAL 0, THREAD_LOCAL 1, RELAXED 2; HIP's
	// hipStreamCaptureMode has the same numbers). Instantiate is the
	// three-argument form: CUDA's bare cuGraphInstantiate export is the
	// five-argument CUDA 10.0 ABI and HIP's bare hipGraphInstantiate is
	// five-argument too, so neither is ever bound.
	OpStreamBeginCapture // cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode mode)
	OpStreamEndCapture   // cuStreamEndCapture(CUstream, CUgraph *graph)
	OpGraphInstantiate   // cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph, unsigned long long flags)
	OpGraphLaunch        // cuGraphLaunch(CUgraphExec, CUstream)
	OpGraphExecDestroy   // cuGraphExecDestroy(CUgraphExec)
	OpGraphDestroy       // cuGraphDestroy(CUgraph)

	// More memory and stream operations (ops_more.go cites each vendor's
	// names). A value of a width narrower than the argument is passed
	// zero-extended; the memsets' counts are elements, not bytes.
	OpMemsetD8             // cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
	OpMemsetD16            // cuMemsetD16_v2(CUdeviceptr dst, unsigned short v, size_t n)
	OpMemsetD32            // cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n)
	OpMemsetD8Async        // cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream)
	OpMemsetD16Async       // cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream)
	OpMemsetD32Async       // cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream)
	OpMemcpyDtoD           // cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
	OpMemcpyDtoDAsync      // cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream)
	OpMemAllocManaged      // cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned int flags): CU_MEM_ATTACH_GLOBAL 1
	OpMemAllocAsync        // cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream)
	OpMemFreeAsync         // cuMemFreeAsync(CUdeviceptr p, CUstream)
	OpMemHostGetDevicePtr  // cuMemHostGetDevicePointer_v2(CUdeviceptr *p, void *host, unsigned int flags): flags 0
	OpStreamQuery          // cuStreamQuery(CUstream): 0 done, *_ERROR_NOT_READY (600) work pending
	OpEventQuery           // cuEventQuery(CUevent): likewise
	OpStreamWaitValue64    // cuStreamWaitValue64_v2(CUstream, CUdeviceptr addr, cuuint64_t value, unsigned int flags): GEQ 0
	OpStreamWriteValue64   // cuStreamWriteValue64_v2(CUstream, CUdeviceptr addr, cuuint64_t value, unsigned int flags): DEFAULT 0
	OpLaunchHostFunc       // cuLaunchHostFunc(CUstream, void (*fn)(void *), void *userData)
	OpIpcGetMemHandle      // cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p): 64 bytes
	OpIpcOpenMemHandle     // cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags): h by value; the core passes a pointer to its 64 bytes and the platform's adapter (ipc_*.go) spreads them
	OpIpcCloseMemHandle    // cuIpcCloseMemHandle(CUdeviceptr p)
	OpDeviceByPCIBusID     // cuDeviceGetByPCIBusId(CUdevice *dev, const char *id): the handle, or the ordinal where OrdinalArgs lists it
	OpMemGetHandleForRange // cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p, size_t bytes, CUmemRangeHandleType type, unsigned long long flags): DMA_BUF_FD 1 writes an int

	numOps
)

var opNames = [numOps]string{
	"Init", "DriverVersion", "DeviceCount", "DeviceGet", "DeviceName", "DeviceTotalMem", "DeviceAttribute",
	"DeviceUUID", "DevicePCIBusID", "ErrorName", "ErrorString",
	"PrimaryCtxRetain", "CtxSetCurrent", "CtxGetCurrent", "SetDevice", "GetDevice", "Synchronize",
	"SynchronizeContext",
	"MemGetInfo", "MemAlloc", "MemFree", "MemcpyHtoD", "MemcpyDtoH", "MemHostAlloc", "MemFreeHost",
	"ModuleLoadDataEx", "ModuleLoadData", "ModuleUnload", "ModuleGetFunction", "ModuleGetGlobal", "LaunchKernel",
	"StreamCreate", "StreamSynchronize", "StreamDestroy", "StreamWaitEvent", "MemcpyHtoDAsync", "MemcpyDtoHAsync",
	"EventCreate", "EventRecord", "EventSynchronize", "EventElapsedTime", "EventDestroy",
	"FuncGetParamInfo",
	"StreamBeginCapture", "StreamEndCapture", "GraphInstantiate", "GraphLaunch", "GraphExecDestroy", "GraphDestroy",
	"MemsetD8", "MemsetD16", "MemsetD32", "MemsetD8Async", "MemsetD16Async", "MemsetD32Async",
	"MemcpyDtoD", "MemcpyDtoDAsync", "MemAllocManaged", "MemAllocAsync", "MemFreeAsync", "MemHostGetDevicePtr",
	"StreamQuery", "EventQuery", "StreamWaitValue64", "StreamWriteValue64", "LaunchHostFunc",
	"IpcGetMemHandle", "IpcOpenMemHandle", "IpcCloseMemHandle", "DeviceByPCIBusID", "MemGetHandleForRange",
}

// opSigs say what each operation's arguments are, for traces (clib.Sym.Sig):
// 'i' int, 'u' unsigned or size, 'h' handle or device address, 'p' pointer
// to data. From the C shapes above.
var opSigs = [numOps]string{
	OpInit: "u", OpDriverVersion: "p", OpDeviceCount: "p", OpDeviceGet: "pi", OpDeviceName: "pih",
	OpDeviceTotalMem: "ph", OpDeviceAttribute: "pih", OpDeviceUUID: "ph", OpDevicePCIBusID: "pih",
	OpErrorName: "ip", OpErrorString: "ip",
	OpPrimaryCtxRetain: "ph", OpCtxSetCurrent: "h", OpCtxGetCurrent: "p", OpSetDevice: "i", OpGetDevice: "p", OpSynchronize: "",
	OpSynchronizeContext: "h",
	OpMemGetInfo:         "pp", OpMemAlloc: "pu", OpMemFree: "h", OpMemcpyHtoD: "hpu", OpMemcpyDtoH: "phu",
	OpMemHostAlloc: "puu", OpMemFreeHost: "p",
	OpModuleLoadDataEx: "ppupp", OpModuleLoadData: "pp", OpModuleUnload: "h", OpModuleGetFunction: "php",
	OpModuleGetGlobal: "pphp", OpLaunchKernel: "huuuuuuuhpp",
	OpStreamCreate: "pu", OpStreamSynchronize: "h", OpStreamDestroy: "h", OpStreamWaitEvent: "hhu",
	OpMemcpyHtoDAsync: "hpuh", OpMemcpyDtoHAsync: "phuh",
	OpEventCreate: "pu", OpEventRecord: "hh", OpEventSynchronize: "h", OpEventElapsedTime: "phh", OpEventDestroy: "h",
	OpFuncGetParamInfo:   "hupp",
	OpStreamBeginCapture: "hi", OpStreamEndCapture: "hp", OpGraphInstantiate: "phu", OpGraphLaunch: "hh",
	OpGraphExecDestroy: "h", OpGraphDestroy: "h",
	OpMemsetD8: "huu", OpMemsetD16: "huu", OpMemsetD32: "huu",
	OpMemsetD8Async: "huuh", OpMemsetD16Async: "huuh", OpMemsetD32Async: "huuh",
	OpMemcpyDtoD: "hhu", OpMemcpyDtoDAsync: "hhuh", OpMemAllocManaged: "puu", OpMemAllocAsync: "puh", OpMemFreeAsync: "hh",
	OpMemHostGetDevicePtr: "phu", OpStreamQuery: "h", OpEventQuery: "h", OpStreamWaitValue64: "hhuu",
	OpStreamWriteValue64: "hhuu", OpLaunchHostFunc: "hhh", OpIpcGetMemHandle: "ph", OpIpcOpenMemHandle: "ppu",
	OpIpcCloseMemHandle: "h", OpDeviceByPCIBusID: "pp", OpMemGetHandleForRange: "phuuu",
}

// String is the operation's name: "DeviceTotalMem".
func (op Op) String() string {
	if op < 0 || op >= numOps {
		return "Op(?)"
	}
	return "Op" + opNames[op]
}

// requiredOps are the operations without which a library of v is
// unusable. OpDeviceTotalMem is one where v names a function for it; a
// vendor whose API has no total-memory function of CUDA's shape names none,
// and Properties reads the total another way (see Backend.Properties).
func requiredOps(v *Vendor) []Op {
	ops := []Op{OpInit, OpDriverVersion, OpDeviceCount, OpDeviceGet, OpDeviceName, OpDeviceAttribute, OpSynchronize}
	if v.binds(OpDeviceTotalMem) {
		ops = append(ops, OpDeviceTotalMem)
	}
	switch v.Context {
	case CurrentDevice:
		return append(ops, OpSetDevice)
	case DeviceContext:
		return append(ops, OpSetDevice, OpCtxGetCurrent, OpCtxSetCurrent)
	}
	return append(ops, OpPrimaryCtxRetain, OpCtxSetCurrent)
}

// features groups the optional operations by what they serve, for Describe
// and for the errors of a library that lacks them.
var features = []struct {
	name string
	ops  []Op
}{
	{"device memory", []Op{OpMemAlloc, OpMemFree, OpMemcpyHtoD, OpMemcpyDtoH}},
	{"memory info", []Op{OpMemGetInfo}},
	{"modules", []Op{OpModuleUnload, OpModuleGetFunction, OpModuleGetGlobal}},
	{"launches", []Op{OpLaunchKernel}},
	{"streams", []Op{OpStreamCreate, OpStreamSynchronize, OpStreamDestroy}},
	{"events", []Op{OpEventCreate, OpEventRecord, OpEventSynchronize, OpEventDestroy}},
	{"event timing", []Op{OpEventElapsedTime}},
	{"pinned host memory", []Op{OpMemHostAlloc, OpMemFreeHost}},
	{"asynchronous copies", []Op{OpMemcpyHtoDAsync, OpMemcpyDtoHAsync}},
	{"graphs", graphOps},
	{"PCI bus ids", []Op{OpDevicePCIBusID}},
	{"UUIDs", []Op{OpDeviceUUID}},
	{"memset", memsetOps},
	{"asynchronous memset", memsetAsyncOps},
	{"device-to-device copies", []Op{OpMemcpyDtoD}},
	{"asynchronous device-to-device copies", []Op{OpMemcpyDtoDAsync}},
	{"managed memory", []Op{OpMemAllocManaged}},
	{"stream-ordered allocation", []Op{OpMemAllocAsync, OpMemFreeAsync}},
	{"mapped host memory", []Op{OpMemHostGetDevicePtr}},
	{"stream queries", []Op{OpStreamQuery}},
	{"event queries", []Op{OpEventQuery}},
	{"stream memory operations", []Op{OpStreamWaitValue64, OpStreamWriteValue64}},
	{"host functions", []Op{OpLaunchHostFunc}},
	{"IPC memory handles", ipcOps},
	{"PCI bus id lookup", []Op{OpDeviceByPCIBusID}},
	{"DMA-buf", []Op{OpMemGetHandleForRange}},
}

var (
	memsetOps      = []Op{OpMemsetD8, OpMemsetD16, OpMemsetD32}
	memsetAsyncOps = []Op{OpMemsetD8Async, OpMemsetD16Async, OpMemsetD32Async}
	ipcOps         = []Op{OpIpcGetMemHandle, OpIpcOpenMemHandle, OpIpcCloseMemHandle}
)

// Unbound names the optional features (as Describe's "missing.<feature>"
// keys name them: "UUIDs", "graphs", ...) for which v names no function or
// adapter for one of their operations: whatever library of v is loaded,
// Describe reports them missing and their calls are device.ErrNotSupported.
// A vendor leaves an operation without a name where its API lacks it or
// its shape is not confirmed.
func (v *Vendor) Unbound() []string {
	var out []string
	for _, f := range features {
		for _, op := range f.ops {
			if !v.binds(op) {
				out = append(out, f.name)
				break
			}
		}
	}
	return out
}

// binds reports whether v names a function or an adapter for op.
func (v *Vendor) binds(op Op) bool { return len(v.Symbols[op]) > 0 || v.Adapters[op] != nil }
