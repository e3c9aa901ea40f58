/*
 * A fake HIP-shaped runtime library: AMD ROCm / Hygon DTK's libamdhip64
 * (hip*, hip_runtime_api.h, ROCm 6.2), Enflame's libtopsrt (tops*,
 * tops_runtime_api.h, TopsRider 2.3) and MetaX's libmcruntime (mc*, the
 * shapes MACA's callers compile against), one source under each prefix, for
 * flagshim's tests. Each vendor's testdata/fake_<library>.c defines its
 * prefix and what sets its API apart, then includes this file (the kit's
 * include folder is on the path); drivers/hip, drivers/gcu and drivers/maca
 * cite each fact beside their Vendor tables. Behaviour: fake_common.h
 * (contexts per thread, tracked memory, text modules, streams), with the
 * runtime API's conventions on top.
 *
 * The builder defines, before including this file:
 *   FAKE_PREFIX hip             the functions' prefix (hipInit, topsInit, mcInit)
 *   FAKE_ERR_PREFIX "HIP_"      the prefix of the generated result names (fake_common.h)
 *   FAKE_DEFAULT_VERSION N      what *DriverGetVersion answers by default
 *   FAKE_NO_DEVICE_TEXT "..."   *GetErrorString's words for no device (100)
 * and, where its API differs from HIP's:
 *   FAKE_DEVICE_HANDLES         devices are fake_common.h's handles
 *                               (ordinal+1000, so a binding that passes
 *                               ordinals where handles are due fails), the
 *                               primary-context API is there (*DevicePrimaryCtxRetain,
 *                               *CtxSetCurrent, *CtxGetCurrent, *CtxSynchronize),
 *                               and a count of zero devices is success. Without
 *                               it the device is its ordinal (HIP's hipDevice_t;
 *                               the shared fake's handles never leave this file),
 *                               there is no context API (a binding that needs
 *                               it cannot load the fake), the calls are per
 *                               thread (with no device selected on the calling
 *                               thread, synchronize, memory, module and stream
 *                               calls return *ErrorInvalidContext: the real
 *                               runtimes fall back on device 0; the fake is
 *                               stricter so that a binding that forgets to
 *                               select fails), and *GetDeviceCount with no
 *                               device returns *ErrorNoDevice and a count of 0,
 *                               as CLR's does
 *   FAKE_CUDART_NAMES           result names follow cudaError_t's (mcErrorMemoryAllocation),
 *                               and a code the fake does not know has no name and
 *                               no text (NULL); without it they follow hipError_t's
 *                               (hipErrorOutOfMemory), and an unknown code is
 *                               *ErrorUnknown / "unknown error", as in CLR
 *   FAKE_PCI_CUDA_FORM          *DeviceGetPCIBusId writes CUDA's "00000000:18:00.0";
 *                               without it CLR's "0000:18:00.0"
 *   FAKE_COMPUTE_CAPABILITY_FN  no *DeviceGetAttribute; *DeviceComputeCapability(int *major,
 *                               int *minor, device) answers the compute capability (TOPS)
 *   FAKE_ATTRIBUTE_UNCONFIRMED  *DeviceGetAttribute answers 12345 for every attribute (its
 *                               numbers are not confirmed: the binding must never call it,
 *                               and a Properties showing 12345 would mean it did); without
 *                               it, HIP's numbers (63 multiprocessors, 23 and 61 compute
 *                               capability, 93 dma-buf support) and hipErrorInvalidValue for
 *                               any other, CUDA's 16/75/76/124 included
 *   FAKE_HOST_MALLOC, FAKE_HOST_FREE  the pinned-memory functions' names after the prefix
 *                               (default HostMalloc, HostFree: hipHostMalloc)
 *   FAKE_LACKS_TOTALMEM, FAKE_LACKS_UUID, FAKE_LACKS_LOAD_DATA_EX, FAKE_LACKS_DTOH_ASYNC,
 *   FAKE_LACKS_GRAPHS           the API has no *DeviceTotalMem, *DeviceGetUuid,
 *                               *ModuleLoadDataEx (which ignores its JIT options where
 *                               it is there, as CLR's does), *MemcpyDtoHAsync, or
 *                               stream capture and graphs
 *   FAKE_LACKS_MORE_OPS         the operations of fake_ops.h are not exported under the
 *                               prefix (memsets, device copies, managed and stream-ordered
 *                               memory, mapped host memory, queries, value waits, host
 *                               functions, IPC, PCI lookup, dma-buf): their shapes are
 *                               hip_runtime_api.h's, and a runtime whose binding does not
 *                               claim them (MACA, TOPS) leaves them out
 * Variables: FAKE_<ERR_PREFIX><NAME> or FAKE_<NAME> (fake_common.h); FAKE_STUB
 * has no meaning for these runtimes (they have no stub library). Build
 * variants, as fake_cufamily.c's:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional *DeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required *DeviceSynchronize (and *CtxSynchronize)
 *   -DFAKE_NO_MODULES          lacks every optional module, launch, memory and stream symbol
 *   -DFAKE_NO_LOAD_DATA_EX     lacks *ModuleLoadDataEx (only *ModuleLoadData)
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols (and the graph ones)
 *   -DFAKE_NO_GRAPHS           lacks the stream-capture and graph symbols
 *   -DFAKE_NO_MORE_OPS         lacks the operations of fake_ops.h (as FAKE_LACKS_MORE_OPS,
 *                              for a variant of a runtime that has them)
 * (-DFAKE_NO_TOTALMEM_V2 and -DFAKE_NO_PARAM_INFO are CUDA's: these APIs have
 * one *DeviceTotalMem and no parameter query.)
 */
#ifndef FAKE_PREFIX
#error "define FAKE_PREFIX (hip, tops, mc) before including fake_hipfamily.c"
#endif
#ifndef FAKE_NO_DEVICE_TEXT
#define FAKE_NO_DEVICE_TEXT "fake: no device is detected"
#endif
#ifndef FAKE_HOST_MALLOC
#define FAKE_HOST_MALLOC HostMalloc
#endif
#ifndef FAKE_HOST_FREE
#define FAKE_HOST_FREE HostFree
#endif
#include "fake_common.h"

#define FAKE_CAT(a, b) a##b
#define FAKE_XCAT(a, b) FAKE_CAT(a, b)
#define SYM(x) FAKE_XCAT(FAKE_PREFIX, x)
#define FAKE_STR2(x) #x
#define FAKE_STR(x) FAKE_STR2(x)
/* NAME(x) is the result name x under the prefix: NAME("ErrorNoDevice") is "hipErrorNoDevice". */
#define NAME(x) FAKE_STR(FAKE_PREFIX) x

typedef int RESULT; /* hipError_t, topsError_t, mcError_t: an enum of int size */
typedef int DEVICE; /* an ordinal, or a handle with FAKE_DEVICE_HANDLES */
typedef struct ctx_st *CONTEXT;
typedef struct stream_st *STREAM;
typedef struct module_st *MODULE;
typedef struct function_st *FUNCTION;
typedef struct event_st *EVENT;
typedef void *DEVICEPTR;
typedef struct uuid_st { char bytes[16]; } UUID;
typedef int JIT_OPTION;

enum { errInvalidValue = 1, errNoDevice = 100 };

#define EXPORT __attribute__((visibility("default")))

#ifdef FAKE_DEVICE_HANDLES
static int handle(DEVICE device) { return device; }
#else
/* handle is the shared fake's handle of a device ordinal. */
static int handle(DEVICE device) { return device + FAKE_HANDLE_BASE; }
#endif

/* error_name names a code as the runtime's *GetErrorName does. */
static const char *error_name(int code) {
	switch (code) {
#ifdef FAKE_CUDART_NAMES
	case 0: return NAME("Success");
	case 1: return NAME("ErrorInvalidValue");
	case 2: return NAME("ErrorMemoryAllocation");
	case 3: return NAME("ErrorInitializationError");
	case 100: return NAME("ErrorNoDevice");
	case 101: return NAME("ErrorInvalidDevice");
	case 200: return NAME("ErrorInvalidKernelImage");
	case 201: return NAME("ErrorDeviceUninitialized");
	case 218: return NAME("ErrorInvalidKernelFile");
	case 400: return NAME("ErrorInvalidResourceHandle");
	case 500: return NAME("ErrorSymbolNotFound");
	case 600: return NAME("ErrorNotReady");
	case 700: return NAME("ErrorIllegalAddress");
	case 719: return NAME("ErrorLaunchFailure");
	case 801: return NAME("ErrorNotSupported");
	case 999: return NAME("ErrorUnknown");
	}
	return NULL;
#else
	case 0: return NAME("Success");
	case 1: return NAME("ErrorInvalidValue");
	case 2: return NAME("ErrorOutOfMemory");
	case 3: return NAME("ErrorNotInitialized");
	case 4: return NAME("ErrorDeinitialized");
	case 35: return NAME("ErrorInsufficientDriver");
	case 100: return NAME("ErrorNoDevice");
	case 101: return NAME("ErrorInvalidDevice");
	case 200: return NAME("ErrorInvalidImage");
	case 201: return NAME("ErrorInvalidContext");
	case 209: return NAME("ErrorNoBinaryForGpu");
	case 218: return NAME("ErrorInvalidKernelFile");
	case 400: return NAME("ErrorInvalidHandle");
	case 401: return NAME("ErrorIllegalState");
	case 500: return NAME("ErrorNotFound");
	case 600: return NAME("ErrorNotReady");
	case 700: return NAME("ErrorIllegalAddress");
	case 719: return NAME("ErrorLaunchFailure");
	case 801: return NAME("ErrorNotSupported");
	case 900: return NAME("ErrorStreamCaptureUnsupported");
	case 901: return NAME("ErrorStreamCaptureInvalidated");
	case 999: return NAME("ErrorUnknown");
	case 1054: return NAME("ErrorTbd"); /* the enum's end marker (ROCm 6.2, TopsRider 2.3) */
	}
	return NAME("ErrorUnknown");
#endif
}

EXPORT RESULT SYM(Init)(unsigned int flags) { return fake_init(flags); }
EXPORT RESULT SYM(DriverGetVersion)(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT RESULT SYM(RuntimeGetVersion)(int *runtimeVersion) { return fake_driver_get_version(runtimeVersion); }
EXPORT RESULT SYM(GetDeviceCount)(int *count) {
	int r = fake_device_get_count(count);
#ifndef FAKE_DEVICE_HANDLES
	if (r == 0 && !fake.has_raw_count && *count == 0) return errNoDevice;
#endif
	return r;
}
EXPORT RESULT SYM(DeviceGet)(DEVICE *device, int ordinal) {
#ifdef FAKE_DEVICE_HANDLES
	return fake_device_get(device, ordinal);
#else
	int h = 0;
	int r = fake_device_get(device ? &h : NULL, ordinal);
	if (r == 0) *device = h - FAKE_HANDLE_BASE;
	return r;
#endif
}
EXPORT RESULT SYM(DeviceGetName)(char *name, int len, DEVICE device) { return fake_device_get_name(name, len, handle(device)); }
#ifndef FAKE_LACKS_TOTALMEM
EXPORT RESULT SYM(DeviceTotalMem)(size_t *bytes, DEVICE device) {
	unsigned long long b = 0;
	int r = fake_device_total_mem(bytes ? &b : NULL, handle(device));
	if (r == 0) *bytes = (size_t)b;
	return r;
}
#endif
#if defined(FAKE_COMPUTE_CAPABILITY_FN)
EXPORT RESULT SYM(DeviceComputeCapability)(int *major, int *minor, DEVICE device) {
	if (!major || !minor) return errInvalidValue;
	int r = fake_device_get_attribute(major, 75, handle(device)); /* the shared fake's CUDA numbers */
	return r ? r : fake_device_get_attribute(minor, 76, handle(device));
}
#elif defined(FAKE_ATTRIBUTE_UNCONFIRMED)
EXPORT RESULT SYM(DeviceGetAttribute)(int *value, int attr, int device) {
	(void)attr;
	int r = fake_device_get_attribute(value, 16, handle(device));
	if (r == 0) *value = 12345;
	return r;
}
#else
EXPORT RESULT SYM(DeviceGetAttribute)(int *pi, int attr, int deviceId) {
	int cu = -1; /* the shared fake answers CUDA's numbers */
	switch (attr) {
	case 63: cu = 16; break; /* hipDeviceAttributeMultiprocessorCount */
	case 23: cu = 75; break; /* hipDeviceAttributeComputeCapabilityMajor */
	case 61: cu = 76; break; /* hipDeviceAttributeComputeCapabilityMinor */
	case 93: cu = 124; break; /* hipDeviceAttributeDmaBufSupported (ROCm 6.3) */
	}
	return fake_device_get_attribute(pi, cu, handle(deviceId));
}
#endif
#ifndef FAKE_LACKS_UUID
EXPORT RESULT SYM(DeviceGetUuid)(UUID *uuid, DEVICE device) {
	if (!uuid) return errInvalidValue;
	return fake_device_get_uuid((unsigned char *)uuid->bytes, handle(device));
}
#endif
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT RESULT SYM(DeviceGetPCIBusId)(char *pciBusId, int len, int device) {
#ifdef FAKE_PCI_CUDA_FORM
	return fake_device_get_pci_bus_id(pciBusId, len, handle(device));
#else
	char id[64];
	int r = fake_device_get_pci_bus_id(id, sizeof id, handle(device));
	if (r) return r;
	if (!pciBusId || len <= 12) return errInvalidValue;
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) return errInvalidValue;
	snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return 0;
#endif
}
#endif
#ifdef FAKE_DEVICE_HANDLES
EXPORT RESULT SYM(DevicePrimaryCtxRetain)(CONTEXT *pctx, DEVICE dev) { return fake_primary_ctx_retain((void **)pctx, dev); }
EXPORT RESULT SYM(CtxSetCurrent)(CONTEXT ctx) { return fake_ctx_set_current(ctx); }
EXPORT RESULT SYM(CtxGetCurrent)(CONTEXT *pctx) { return fake_ctx_get_current((void **)pctx); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT RESULT SYM(CtxSynchronize)(void) { return fake_ctx_synchronize(); }
#endif
#endif
EXPORT RESULT SYM(SetDevice)(int deviceId) { return fake_set_device(deviceId); }
EXPORT RESULT SYM(GetDevice)(int *deviceId) { return fake_get_device(deviceId); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT RESULT SYM(DeviceSynchronize)(void) { return fake_ctx_synchronize(); }
#endif
EXPORT RESULT SYM(MemGetInfo)(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(free ? &f : NULL, total ? &t : NULL);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT const char *SYM(GetErrorName)(RESULT error) { return error_name(error); }
EXPORT const char *SYM(GetErrorString)(RESULT error) {
	const char *s = NULL;
	if (error == errNoDevice) return FAKE_NO_DEVICE_TEXT;
#ifdef FAKE_CUDART_NAMES
	return fake_error_string(error, &s) == 0 ? s : NULL;
#else
	return fake_error_string(error, &s) == 0 && s ? s : "unknown error";
#endif
}

#ifndef FAKE_NO_MODULES
#if !defined(FAKE_LACKS_LOAD_DATA_EX) && !defined(FAKE_NO_LOAD_DATA_EX)
EXPORT RESULT SYM(ModuleLoadDataEx)(MODULE *module, const void *image, unsigned int numOptions,
		JIT_OPTION *options, void **optionValues) {
	(void)numOptions; (void)options; (void)optionValues; /* ignored, as in CLR */
	return fake_module_load((void **)module, image, NULL, 0);
}
#endif
EXPORT RESULT SYM(ModuleLoadData)(MODULE *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT RESULT SYM(ModuleUnload)(MODULE module) { return fake_module_unload(module); }
EXPORT RESULT SYM(ModuleGetFunction)(FUNCTION *function, MODULE module, const char *kname) {
	return fake_module_get_function((void **)function, module, kname);
}
EXPORT RESULT SYM(ModuleGetGlobal)(DEVICEPTR *dptr, size_t *bytes, MODULE hmod, const char *name) {
	unsigned long long p = 0;
	int r = fake_module_get_global(dptr ? &p : NULL, bytes, hmod, name);
	if (r == 0 && dptr) *dptr = (DEVICEPTR)(uintptr_t)p;
	return r;
}
EXPORT RESULT SYM(ModuleLaunchKernel)(FUNCTION f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		STREAM stream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams, extra);
}
EXPORT RESULT SYM(Malloc)(void **ptr, size_t size) {
	unsigned long long p = 0;
	int r = fake_mem_alloc(ptr ? &p : NULL, size);
	if (r == 0) *ptr = (void *)(uintptr_t)p;
	return r;
}
EXPORT RESULT SYM(Free)(void *ptr) { return fake_mem_free((uintptr_t)ptr); }
EXPORT RESULT SYM(MemcpyHtoD)(DEVICEPTR dst, const void *src, size_t sizeBytes) { return fake_memcpy_htod((uintptr_t)dst, src, sizeBytes); }
EXPORT RESULT SYM(MemcpyDtoH)(void *dst, DEVICEPTR src, size_t sizeBytes) { return fake_memcpy_dtoh(dst, (uintptr_t)src, sizeBytes); }

#ifndef FAKE_NO_STREAMS
EXPORT RESULT SYM(StreamCreate)(STREAM *stream) { return fake_stream_create((void **)stream, 0); }
EXPORT RESULT SYM(StreamCreateWithFlags)(STREAM *stream, unsigned int flags) { return fake_stream_create((void **)stream, flags); }
EXPORT RESULT SYM(StreamSynchronize)(STREAM stream) { return fake_stream_synchronize(stream); }
EXPORT RESULT SYM(StreamDestroy)(STREAM stream) { return fake_stream_destroy(stream); }
EXPORT RESULT SYM(StreamWaitEvent)(STREAM stream, EVENT event, unsigned int flags) { return fake_stream_wait_event(stream, event, flags); }
EXPORT RESULT SYM(MemcpyHtoDAsync)(DEVICEPTR dst, const void *src, size_t sizeBytes, STREAM stream) {
	return fake_memcpy_async(OP_HTOD, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
#ifndef FAKE_LACKS_DTOH_ASYNC
EXPORT RESULT SYM(MemcpyDtoHAsync)(void *dst, DEVICEPTR src, size_t sizeBytes, STREAM stream) {
	return fake_memcpy_async(OP_DTOH, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
#endif
EXPORT RESULT SYM(EventCreate)(EVENT *event) { return fake_event_create((void **)event, 0); }
EXPORT RESULT SYM(EventCreateWithFlags)(EVENT *event, unsigned flags) { return fake_event_create((void **)event, flags); }
EXPORT RESULT SYM(EventRecord)(EVENT event, STREAM stream) { return fake_event_record(event, stream); }
EXPORT RESULT SYM(EventSynchronize)(EVENT event) { return fake_event_synchronize(event); }
EXPORT RESULT SYM(EventElapsedTime)(float *ms, EVENT start, EVENT stop) { return fake_event_elapsed(ms, start, stop); }
EXPORT RESULT SYM(EventDestroy)(EVENT event) { return fake_event_destroy(event); }
EXPORT RESULT SYM(FAKE_HOST_MALLOC)(void **ptr, size_t size, unsigned int flags) { return fake_host_alloc(ptr, size, flags); }
EXPORT RESULT SYM(FAKE_HOST_FREE)(void *ptr) { return fake_host_free(ptr); }
#endif
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_GRAPHS) && !defined(FAKE_LACKS_GRAPHS)
/* Graphs (hip_runtime_api.h 6.3: hipGraph_t and hipGraphExec_t are
 * pointers; hipStreamCaptureMode has CUDA's numbers). */
typedef struct graph_st *GRAPH;
typedef struct graph_exec_st *GRAPHEXEC;
typedef struct graph_node_st *GRAPHNODE;
EXPORT RESULT SYM(StreamBeginCapture)(STREAM stream, int mode) { return fake_stream_begin_capture(stream, mode); }
EXPORT RESULT SYM(StreamEndCapture)(STREAM stream, GRAPH *pGraph) { return fake_stream_end_capture(stream, (void **)pGraph); }
/* HIP's bare hipGraphInstantiate is the five-argument form (CUDA's
 * cuGraphInstantiate_v2 shape); it works, but flagshim binds WithFlags. */
EXPORT RESULT SYM(GraphInstantiate)(GRAPHEXEC *pGraphExec, GRAPH graph, GRAPHNODE *pErrorNode, char *pLogBuffer, size_t bufferSize) {
	(void)pErrorNode; (void)pLogBuffer; (void)bufferSize;
	return fake_graph_instantiate((void **)pGraphExec, graph, 0);
}
EXPORT RESULT SYM(GraphInstantiateWithFlags)(GRAPHEXEC *pGraphExec, GRAPH graph, unsigned long long flags) {
	return fake_graph_instantiate((void **)pGraphExec, graph, flags);
}
EXPORT RESULT SYM(GraphLaunch)(GRAPHEXEC graphExec, STREAM stream) { return fake_graph_launch(graphExec, stream); }
EXPORT RESULT SYM(GraphExecDestroy)(GRAPHEXEC graphExec) { return fake_graph_destroy_any(graphExec, 1); }
EXPORT RESULT SYM(GraphDestroy)(GRAPH graph) { return fake_graph_destroy_any(graph, 0); }
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_MORE_OPS) && !defined(FAKE_LACKS_MORE_OPS)
/* The operations of fake_ops.h, with hip_runtime_api.h's shapes (ROCm 6.3;
 * hipMemGetHandleForAddressRange from later ROCm): hipIpcMemHandle_t is 64
 * bytes passed by value, hipStreamWaitValue64 takes a mask (the fake
 * requires all bits), hipDeviceGetByPCIBusId answers the ordinal (a handle
 * with FAKE_DEVICE_HANDLES). */
typedef struct ipc_mem_handle_st { char reserved[64]; } IPC_MEM_HANDLE;
typedef void (*HOST_FN)(void *userData);
EXPORT RESULT SYM(MemsetD8)(DEVICEPTR dest, unsigned char value, size_t count) { return fake_memset_any((uintptr_t)dest, value, 1, count, NULL, 0); }
EXPORT RESULT SYM(MemsetD16)(DEVICEPTR dest, unsigned short value, size_t count) { return fake_memset_any((uintptr_t)dest, value, 2, count, NULL, 0); }
EXPORT RESULT SYM(MemsetD32)(DEVICEPTR dest, int value, size_t count) { return fake_memset_any((uintptr_t)dest, (unsigned)value, 4, count, NULL, 0); }
EXPORT RESULT SYM(MemsetD8Async)(DEVICEPTR dest, unsigned char value, size_t count, STREAM stream) {
	return fake_memset_any((uintptr_t)dest, value, 1, count, stream, 1);
}
EXPORT RESULT SYM(MemsetD16Async)(DEVICEPTR dest, unsigned short value, size_t count, STREAM stream) {
	return fake_memset_any((uintptr_t)dest, value, 2, count, stream, 1);
}
EXPORT RESULT SYM(MemsetD32Async)(DEVICEPTR dst, int value, size_t count, STREAM stream) {
	return fake_memset_any((uintptr_t)dst, (unsigned)value, 4, count, stream, 1);
}
EXPORT RESULT SYM(MemcpyDtoD)(DEVICEPTR dst, DEVICEPTR src, size_t sizeBytes) { return fake_memcpy_dtod((uintptr_t)dst, (uintptr_t)src, sizeBytes, NULL, 0); }
EXPORT RESULT SYM(MemcpyDtoDAsync)(DEVICEPTR dst, DEVICEPTR src, size_t sizeBytes, STREAM stream) {
	return fake_memcpy_dtod((uintptr_t)dst, (uintptr_t)src, sizeBytes, stream, 1);
}
EXPORT RESULT SYM(MallocManaged)(void **dev_ptr, size_t size, unsigned int flags) { return fake_mem_alloc_managed((unsigned long long *)dev_ptr, size, flags); }
EXPORT RESULT SYM(MallocAsync)(void **dev_ptr, size_t size, STREAM stream) { return fake_mem_alloc_async((unsigned long long *)dev_ptr, size, stream); }
EXPORT RESULT SYM(FreeAsync)(void *dev_ptr, STREAM stream) { return fake_mem_free_async((uintptr_t)dev_ptr, stream); }
EXPORT RESULT SYM(HostGetDevicePointer)(void **devPtr, void *hstPtr, unsigned int flags) {
	return fake_host_get_device_pointer((unsigned long long *)devPtr, hstPtr, flags);
}
EXPORT RESULT SYM(StreamQuery)(STREAM stream) { return fake_stream_query(stream); }
EXPORT RESULT SYM(EventQuery)(EVENT event) { return fake_event_query(event); }
EXPORT RESULT SYM(StreamWaitValue64)(STREAM stream, void *ptr, uint64_t value, unsigned int flags, uint64_t mask) {
	if (mask != ~(uint64_t)0) return errInvalidValue; /* the fake compares whole words */
	return fake_stream_value64(OP_WAIT64, stream, (uintptr_t)ptr, value, flags);
}
EXPORT RESULT SYM(StreamWriteValue64)(STREAM stream, void *ptr, uint64_t value, unsigned int flags) {
	return fake_stream_value64(OP_WRITE64, stream, (uintptr_t)ptr, value, flags);
}
EXPORT RESULT SYM(LaunchHostFunc)(STREAM stream, HOST_FN fn, void *userData) { return fake_launch_host_func(stream, fn, userData); }
EXPORT RESULT SYM(IpcGetMemHandle)(IPC_MEM_HANDLE *handle, void *devPtr) { return fake_ipc_get(handle, (uintptr_t)devPtr); }
EXPORT RESULT SYM(IpcOpenMemHandle)(void **devPtr, IPC_MEM_HANDLE handle, unsigned int flags) {
	return fake_ipc_open((unsigned long long *)devPtr, &handle, flags);
}
EXPORT RESULT SYM(IpcCloseMemHandle)(void *devPtr) { return fake_ipc_close((uintptr_t)devPtr); }
EXPORT RESULT SYM(DeviceGetByPCIBusId)(DEVICE *device, const char *pciBusId) {
#ifdef FAKE_DEVICE_HANDLES
	return fake_device_get_by_pci_bus_id(device, pciBusId, 0);
#else
	return fake_device_get_by_pci_bus_id(device, pciBusId, 1);
#endif
}
EXPORT RESULT SYM(MemGetHandleForAddressRange)(void *handle, DEVICEPTR dptr, size_t size, int handleType, unsigned long long flags) {
	return fake_get_handle_for_range(handle, (uintptr_t)dptr, size, handleType, flags);
}
#endif
