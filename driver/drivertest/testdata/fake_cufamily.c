/*
 * A fake libcuda.so.1 (default), libmusa.so.1 (-DFAKE_MU) or another
 * CUDA-shaped driver API (-DFAKE_PREFIX=acme -DFAKE_ERR_PREFIX=\"ACME_\") with the real
 * driver API names and C signatures (cuda.h; MUSA's musa.h mirrors it with
 * the mu prefix and MUSA_ result names), for flagshim's tests. Behaviour:
 * see fake_common.h. Build variants:
 *   -DFAKE_NO_TOTALMEM_V2      lacks *DeviceTotalMem_v2 (old drivers: only the 32-bit *DeviceTotalMem)
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional *DeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required *CtxSynchronize
 *   -DFAKE_NO_CTX_SYNCHRONIZE_V2  lacks cuCtxSynchronize_v2 (CUDA drivers before 13.0; the others never have it)
 *   -DFAKE_NO_MODULES          lacks every optional module, launch, memory and stream symbol
 *   -DFAKE_NO_LOAD_DATA_EX     lacks *ModuleLoadDataEx (only *ModuleLoadData)
 *   -DFAKE_NO_PARAM_INFO       lacks *FuncGetParamInfo (drivers before CUDA 12.4)
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols (and the graph ones)
 *   -DFAKE_NO_GRAPHS           lacks the stream-capture and graph symbols
 *   -DFAKE_CAPTURE_BARE        lacks *StreamBeginCapture_v2; the bare *StreamBeginCapture takes the mode
 *                              (the shape public code gives MUSA's; CUDA's bare one takes only the stream)
 *   -DFAKE_NO_MORE_OPS         lacks the operations of fake_ops.h (memset, device copies, managed and
 *                              stream-ordered memory, queries, value waits, host functions, IPC, PCI
 *                              lookup, dma-buf)
 *   -DFAKE_LEGACY_MORE         has only the unversioned names of those that have a _v2 (old drivers)
 */
#if defined(FAKE_PREFIX)
/* Another CUDA-shaped driver API (an out-of-tree vendor's fake): the
 * builder defines FAKE_PREFIX (acme), FAKE_ERR_PREFIX ("ACME_") and may
 * define FAKE_DEFAULT_VERSION. */
#ifndef FAKE_ERR_PREFIX
#error "define FAKE_ERR_PREFIX with FAKE_PREFIX"
#endif
#ifndef FAKE_DEFAULT_VERSION
#define FAKE_DEFAULT_VERSION 1000
#endif
#define FAKE_CAT(a, b) a##b
#define FAKE_XCAT(a, b) FAKE_CAT(a, b)
#define SYM(x) FAKE_XCAT(FAKE_PREFIX, x)
#elif defined(FAKE_MU)
#define FAKE_ERR_PREFIX "MUSA_"
#define FAKE_DEFAULT_VERSION 30100
#define SYM(x) mu##x
#else
#define FAKE_ERR_PREFIX "CUDA_"
#define FAKE_DEFAULT_VERSION 13000
#define SYM(x) cu##x
#endif
#include "fake_common.h"

typedef int RESULT; /* CUresult / MUresult: an enum of int size */
typedef int DEVICE;
typedef struct ctx_st *CONTEXT;
typedef struct uuid_st { char bytes[16]; } UUID;
typedef struct mod_st *MODULE;
typedef struct func_st *FUNCTION;
typedef struct stream_st *STREAM;
typedef struct event_st *EVENT;
typedef unsigned long long DEVICEPTR;
typedef int JIT_OPTION;

#define EXPORT __attribute__((visibility("default")))

EXPORT RESULT SYM(Init)(unsigned int Flags) { return fake_init(Flags); }
EXPORT RESULT SYM(DriverGetVersion)(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT RESULT SYM(DeviceGetCount)(int *count) { return fake_device_get_count(count); }
EXPORT RESULT SYM(DeviceGet)(DEVICE *device, int ordinal) { return fake_device_get(device, ordinal); }
EXPORT RESULT SYM(DeviceGetName)(char *name, int len, DEVICE dev) { return fake_device_get_name(name, len, dev); }
#ifndef FAKE_NO_TOTALMEM_V2
EXPORT RESULT SYM(DeviceTotalMem_v2)(size_t *bytes, DEVICE dev) {
	unsigned long long b = 0;
	RESULT r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = (size_t)b;
	return r;
}
#endif
EXPORT RESULT SYM(DeviceTotalMem)(unsigned int *bytes, DEVICE dev) {
	unsigned long long b = 0;
	RESULT r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = b > 0xffffffffULL ? 0xffffffffU : (unsigned int)b;
	return r;
}
EXPORT RESULT SYM(DeviceGetAttribute)(int *pi, int attrib, DEVICE dev) { return fake_device_get_attribute(pi, attrib, dev); }
EXPORT RESULT SYM(DeviceGetUuid)(UUID *uuid, DEVICE dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
EXPORT RESULT SYM(DeviceGetUuid_v2)(UUID *uuid, DEVICE dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT RESULT SYM(DeviceGetPCIBusId)(char *pciBusId, int len, DEVICE dev) { return fake_device_get_pci_bus_id(pciBusId, len, dev); }
#endif
EXPORT RESULT SYM(DevicePrimaryCtxRetain)(CONTEXT *pctx, DEVICE dev) { return fake_primary_ctx_retain((void **)pctx, dev); }
EXPORT RESULT SYM(DevicePrimaryCtxRelease_v2)(DEVICE dev) { return fake_primary_ctx_release(dev); }
EXPORT RESULT SYM(CtxSetCurrent)(CONTEXT ctx) { return fake_ctx_set_current(ctx); }
EXPORT RESULT SYM(CtxGetCurrent)(CONTEXT *pctx) { return fake_ctx_get_current((void **)pctx); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT RESULT SYM(CtxSynchronize)(void) { return fake_ctx_synchronize(); }
#endif
#if !defined(FAKE_MU) && !defined(FAKE_PREFIX) && !defined(FAKE_NO_CTX_SYNCHRONIZE_V2)
/* CUDA 13.0's CUresult cuCtxSynchronize_v2(CUcontext ctx); no MUSA header names a mirror of it. */
EXPORT RESULT SYM(CtxSynchronize_v2)(CONTEXT ctx) { return fake_ctx_synchronize_of(ctx); }
#endif
EXPORT RESULT SYM(MemGetInfo_v2)(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	RESULT r = fake_mem_get_info(&f, &t);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT RESULT SYM(GetErrorName)(RESULT error, const char **pStr) { return fake_error_name(error, pStr); }
EXPORT RESULT SYM(GetErrorString)(RESULT error, const char **pStr) { return fake_error_string(error, pStr); }

#ifndef FAKE_NO_MODULES
#ifndef FAKE_NO_LOAD_DATA_EX
EXPORT RESULT SYM(ModuleLoadDataEx)(MODULE *module, const void *image, unsigned int numOptions, JIT_OPTION *options, void **optionValues) {
	return fake_module_load_data_ex((void **)module, image, numOptions, (const int *)options, optionValues);
}
#endif
EXPORT RESULT SYM(ModuleLoadData)(MODULE *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT RESULT SYM(ModuleUnload)(MODULE hmod) { return fake_module_unload(hmod); }
EXPORT RESULT SYM(ModuleGetFunction)(FUNCTION *hfunc, MODULE hmod, const char *name) { return fake_module_get_function((void **)hfunc, hmod, name); }
#ifndef FAKE_NO_PARAM_INFO
EXPORT RESULT SYM(FuncGetParamInfo)(FUNCTION f, size_t paramIndex, size_t *paramOffset, size_t *paramSize) { return fake_func_get_param_info(f, paramIndex, paramOffset, paramSize); }
#endif
EXPORT RESULT SYM(ModuleGetGlobal_v2)(DEVICEPTR *dptr, size_t *bytes, MODULE hmod, const char *name) { return fake_module_get_global(dptr, bytes, hmod, name); }
EXPORT RESULT SYM(LaunchKernel)(FUNCTION f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		STREAM hStream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}
EXPORT RESULT SYM(MemAlloc_v2)(DEVICEPTR *dptr, size_t bytesize) { return fake_mem_alloc(dptr, bytesize); }
EXPORT RESULT SYM(MemFree_v2)(DEVICEPTR dptr) { return fake_mem_free(dptr); }
EXPORT RESULT SYM(MemcpyHtoD_v2)(DEVICEPTR dstDevice, const void *srcHost, size_t ByteCount) { return fake_memcpy_htod(dstDevice, srcHost, ByteCount); }
EXPORT RESULT SYM(MemcpyDtoH_v2)(void *dstHost, DEVICEPTR srcDevice, size_t ByteCount) { return fake_memcpy_dtoh(dstHost, srcDevice, ByteCount); }

#ifndef FAKE_NO_STREAMS
EXPORT RESULT SYM(StreamCreate)(STREAM *phStream, unsigned int Flags) { return fake_stream_create((void **)phStream, Flags); }
EXPORT RESULT SYM(StreamSynchronize)(STREAM hStream) { return fake_stream_synchronize(hStream); }
EXPORT RESULT SYM(StreamDestroy_v2)(STREAM hStream) { return fake_stream_destroy(hStream); }
EXPORT RESULT SYM(StreamWaitEvent)(STREAM hStream, EVENT hEvent, unsigned int Flags) { return fake_stream_wait_event(hStream, hEvent, Flags); }
EXPORT RESULT SYM(MemcpyHtoDAsync_v2)(DEVICEPTR dstDevice, const void *srcHost, size_t ByteCount, STREAM hStream) {
	return fake_memcpy_async(OP_HTOD, (uintptr_t)dstDevice, (uintptr_t)srcHost, ByteCount, hStream);
}
EXPORT RESULT SYM(MemcpyDtoHAsync_v2)(void *dstHost, DEVICEPTR srcDevice, size_t ByteCount, STREAM hStream) {
	return fake_memcpy_async(OP_DTOH, (uintptr_t)dstHost, (uintptr_t)srcDevice, ByteCount, hStream);
}
EXPORT RESULT SYM(EventCreate)(EVENT *phEvent, unsigned int Flags) { return fake_event_create((void **)phEvent, Flags); }
EXPORT RESULT SYM(EventRecord)(EVENT hEvent, STREAM hStream) { return fake_event_record(hEvent, hStream); }
EXPORT RESULT SYM(EventSynchronize)(EVENT hEvent) { return fake_event_synchronize(hEvent); }
EXPORT RESULT SYM(EventElapsedTime)(float *pMilliseconds, EVENT hStart, EVENT hEnd) { return fake_event_elapsed(pMilliseconds, hStart, hEnd); }
EXPORT RESULT SYM(EventDestroy_v2)(EVENT hEvent) { return fake_event_destroy(hEvent); }
EXPORT RESULT SYM(MemHostAlloc)(void **pp, size_t bytesize, unsigned int Flags) { return fake_host_alloc(pp, bytesize, Flags); }
EXPORT RESULT SYM(MemFreeHost)(void *p) { return fake_host_free(p); }
#endif
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_GRAPHS)
/* Graphs (cuda.h 13.0: CUgraph and CUgraphExec are pointers; the mode is
 * a CUstreamCaptureMode, an int-sized enum). */
typedef struct graph_st *GRAPH;
typedef struct graph_exec_st *GRAPHEXEC;
typedef struct graph_node_st *GRAPHNODE;
typedef int CAPTUREMODE;
#ifndef FAKE_CAPTURE_BARE
EXPORT RESULT SYM(StreamBeginCapture_v2)(STREAM hStream, CAPTUREMODE mode) { return fake_stream_begin_capture(hStream, mode); }
/* The CUDA 10.0 ABI, one argument, which libcuda still exports under the
 * bare name: a binding must never call it (its mode is not the caller's),
 * so it fails with 999 (*_ERROR_UNKNOWN) where one does. */
EXPORT RESULT SYM(StreamBeginCapture)(STREAM hStream) { (void)hStream; return 999; }
#else
/* -DFAKE_CAPTURE_BARE: no _v2, and the bare name takes the mode, as public
 * code calls MUSA's muStreamBeginCapture (UNCONFIRMED in a header). */
EXPORT RESULT SYM(StreamBeginCapture)(STREAM hStream, CAPTUREMODE mode) { return fake_stream_begin_capture(hStream, mode); }
#endif
EXPORT RESULT SYM(StreamEndCapture)(STREAM hStream, GRAPH *phGraph) { return fake_stream_end_capture(hStream, (void **)phGraph); }
EXPORT RESULT SYM(GraphInstantiateWithFlags)(GRAPHEXEC *phGraphExec, GRAPH hGraph, unsigned long long flags) {
	return fake_graph_instantiate((void **)phGraphExec, hGraph, flags);
}
/* The CUDA 10.0 and 11.0 five-argument exports under the names cuda.h's
 * #define hides: never to be bound (999 where they are). */
EXPORT RESULT SYM(GraphInstantiate)(GRAPHEXEC *phGraphExec, GRAPH hGraph, GRAPHNODE *phErrorNode, char *logBuffer, size_t bufferSize) {
	(void)phGraphExec; (void)hGraph; (void)phErrorNode; (void)logBuffer; (void)bufferSize;
	return 999;
}
EXPORT RESULT SYM(GraphInstantiate_v2)(GRAPHEXEC *phGraphExec, GRAPH hGraph, GRAPHNODE *phErrorNode, char *logBuffer, size_t bufferSize) {
	(void)phGraphExec; (void)hGraph; (void)phErrorNode; (void)logBuffer; (void)bufferSize;
	return 999;
}
EXPORT RESULT SYM(GraphLaunch)(GRAPHEXEC hGraphExec, STREAM hStream) { return fake_graph_launch(hGraphExec, hStream); }
EXPORT RESULT SYM(GraphExecDestroy)(GRAPHEXEC hGraphExec) { return fake_graph_destroy_any(hGraphExec, 1); }
EXPORT RESULT SYM(GraphDestroy)(GRAPH hGraph) { return fake_graph_destroy_any(hGraph, 0); }
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_MORE_OPS)
/* The operations of fake_ops.h (cuda.h 13.0's shapes; CUipcMemHandle is 64
 * bytes passed by value). */
typedef struct { char reserved[64]; } IPCHANDLE;
#ifdef FAKE_LEGACY_MORE
#define SYMV2(x) SYM(x)
#else
#define SYMV2(x) SYM(x##_v2)
#endif
EXPORT RESULT SYMV2(MemsetD8)(DEVICEPTR dstDevice, unsigned char uc, size_t N) { return fake_memset_any(dstDevice, uc, 1, N, NULL, 0); }
EXPORT RESULT SYMV2(MemsetD16)(DEVICEPTR dstDevice, unsigned short us, size_t N) { return fake_memset_any(dstDevice, us, 2, N, NULL, 0); }
EXPORT RESULT SYMV2(MemsetD32)(DEVICEPTR dstDevice, unsigned int ui, size_t N) { return fake_memset_any(dstDevice, ui, 4, N, NULL, 0); }
EXPORT RESULT SYM(MemsetD8Async)(DEVICEPTR dstDevice, unsigned char uc, size_t N, STREAM hStream) { return fake_memset_any(dstDevice, uc, 1, N, hStream, 1); }
EXPORT RESULT SYM(MemsetD16Async)(DEVICEPTR dstDevice, unsigned short us, size_t N, STREAM hStream) { return fake_memset_any(dstDevice, us, 2, N, hStream, 1); }
EXPORT RESULT SYM(MemsetD32Async)(DEVICEPTR dstDevice, unsigned int ui, size_t N, STREAM hStream) { return fake_memset_any(dstDevice, ui, 4, N, hStream, 1); }
EXPORT RESULT SYMV2(MemcpyDtoD)(DEVICEPTR dstDevice, DEVICEPTR srcDevice, size_t ByteCount) { return fake_memcpy_dtod(dstDevice, srcDevice, ByteCount, NULL, 0); }
EXPORT RESULT SYMV2(MemcpyDtoDAsync)(DEVICEPTR dstDevice, DEVICEPTR srcDevice, size_t ByteCount, STREAM hStream) {
	return fake_memcpy_dtod(dstDevice, srcDevice, ByteCount, hStream, 1);
}
EXPORT RESULT SYM(MemAllocManaged)(DEVICEPTR *dptr, size_t bytesize, unsigned int flags) { return fake_mem_alloc_managed(dptr, bytesize, flags); }
EXPORT RESULT SYM(MemAllocAsync)(DEVICEPTR *dptr, size_t bytesize, STREAM hStream) { return fake_mem_alloc_async(dptr, bytesize, hStream); }
EXPORT RESULT SYM(MemFreeAsync)(DEVICEPTR dptr, STREAM hStream) { return fake_mem_free_async(dptr, hStream); }
EXPORT RESULT SYMV2(MemHostGetDevicePointer)(DEVICEPTR *pdptr, void *p, unsigned int Flags) { return fake_host_get_device_pointer(pdptr, p, Flags); }
EXPORT RESULT SYM(StreamQuery)(STREAM hStream) { return fake_stream_query(hStream); }
EXPORT RESULT SYM(EventQuery)(EVENT hEvent) { return fake_event_query(hEvent); }
EXPORT RESULT SYMV2(StreamWaitValue64)(STREAM stream, DEVICEPTR addr, unsigned long long value, unsigned int flags) {
	return fake_stream_value64(OP_WAIT64, stream, addr, value, flags);
}
EXPORT RESULT SYMV2(StreamWriteValue64)(STREAM stream, DEVICEPTR addr, unsigned long long value, unsigned int flags) {
	return fake_stream_value64(OP_WRITE64, stream, addr, value, flags);
}
EXPORT RESULT SYM(LaunchHostFunc)(STREAM hStream, void (*fn)(void *), void *userData) { return fake_launch_host_func(hStream, fn, userData); }
EXPORT RESULT SYM(IpcGetMemHandle)(IPCHANDLE *pHandle, DEVICEPTR dptr) { return fake_ipc_get(pHandle, dptr); }
EXPORT RESULT SYMV2(IpcOpenMemHandle)(DEVICEPTR *pdptr, IPCHANDLE handle, unsigned int Flags) { return fake_ipc_open(pdptr, &handle, Flags); }
EXPORT RESULT SYM(IpcCloseMemHandle)(DEVICEPTR dptr) { return fake_ipc_close(dptr); }
EXPORT RESULT SYM(DeviceGetByPCIBusId)(DEVICE *dev, const char *pciBusId) { return fake_device_get_by_pci_bus_id(dev, pciBusId, 0); }
EXPORT RESULT SYM(MemGetHandleForAddressRange)(void *handle, DEVICEPTR dptr, size_t size, int handleType, unsigned long long flags) {
	return fake_get_handle_for_range(handle, dptr, size, handleType, flags);
}
#endif
