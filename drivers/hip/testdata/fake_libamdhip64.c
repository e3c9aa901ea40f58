/*
 * A fake libamdhip64.so.6 (AMD ROCm / Hygon DTK HIP runtime) with the real
 * function names and C signatures of hip_runtime_api.h (ROCm 6.2), for
 * flagshim's tests. Behaviour: driver/drivertest/testdata/fake_common.h,
 * with the HIP runtime's own conventions on top:
 *   - hipDevice_t is the ordinal (hipDeviceGet returns it, as CLR does); the
 *     shared fake's handles (ordinal+1000) never leave this file.
 *   - hipDeviceGetAttribute answers HIP's numbers only (63 multiprocessors,
 *     23 and 61 compute capability, 93 dma-buf support); any other number,
 *     CUDA's 16/75/76/124 included, is hipErrorInvalidValue.
 *   - hipGetDeviceCount with no device returns hipErrorNoDevice and a count
 *     of 0, as CLR's does.
 *   - hipGetErrorName and hipGetErrorString return const char *; unknown
 *     codes are "hipErrorUnknown" / "unknown error", as in CLR.
 *   - hipDeviceGetPCIBusId writes CLR's form, "0000:18:00.0".
 *   - hipModuleLoadDataEx ignores its JIT options, as CLR does (no error log).
 *   - The calls are per thread: with no device selected on the calling thread
 *     (hipSetDevice), synchronize, memory, module and stream calls return
 *     hipErrorInvalidContext. The real runtime falls back on device 0; the
 *     fake is stricter so that a binding that forgets to select fails.
 *   - The deprecated context API (hipCtx*, hipDevicePrimaryCtx*) is absent: a
 *     binding that needs it cannot load this fake.
 * Variables: FAKE_HIP_<NAME> or FAKE_<NAME> (fake_common.h); FAKE_STUB has no
 * HIP meaning (HIP has no stub library; 34 is no hipError_t). Build variants:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional hipDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required hipDeviceSynchronize
 *   -DFAKE_NO_MODULES          lacks every optional module, launch, memory and stream symbol
 *   -DFAKE_NO_LOAD_DATA_EX     lacks hipModuleLoadDataEx (only hipModuleLoadData)
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols (and the graph ones)
 *   -DFAKE_NO_GRAPHS           lacks the stream-capture and graph symbols
 *   -DFAKE_NO_MORE_OPS         lacks the operations of fake_ops.h (memset, device copies, managed and
 *                              stream-ordered memory, queries, value waits, host functions, IPC, PCI
 *                              lookup, dma-buf)
 * (-DFAKE_NO_TOTALMEM_V2 is CUDA's: HIP has one hipDeviceTotalMem.)
 */
#define FAKE_ERR_PREFIX "HIP_"
#define FAKE_DEFAULT_VERSION 60240092 /* HIP_VERSION of 6.2: 6*10000000 + 2*100000 + 40092 */
#include "fake_common.h"

typedef enum hipError_t {
	hipSuccess = 0,
	hipErrorInvalidValue = 1,
	hipErrorNoDevice = 100,
} hipError_t;
typedef int hipDevice_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef void *hipDeviceptr_t;
typedef struct hipUUID_t { char bytes[16]; } hipUUID;
typedef enum hipDeviceAttribute_t {
	hipDeviceAttributeComputeCapabilityMajor = 23,
	hipDeviceAttributeComputeCapabilityMinor = 61,
	hipDeviceAttributeMultiprocessorCount = 63,
	hipDeviceAttributeDmaBufSupported = 93,
} hipDeviceAttribute_t;
typedef enum hipJitOption { hipJitOptionMaxRegisters = 0 } hipJitOption;

#define EXPORT __attribute__((visibility("default")))

/* handle is the shared fake's handle of a hipDevice_t (an ordinal). */
static int handle(hipDevice_t device) { return device + FAKE_HANDLE_BASE; }

EXPORT hipError_t hipInit(unsigned int flags) { return fake_init(flags); }
EXPORT hipError_t hipDriverGetVersion(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT hipError_t hipRuntimeGetVersion(int *runtimeVersion) { return fake_driver_get_version(runtimeVersion); }
EXPORT hipError_t hipGetDeviceCount(int *count) {
	int r = fake_device_get_count(count);
	if (r == 0 && !fake.has_raw_count && *count == 0) return hipErrorNoDevice;
	return r;
}
EXPORT hipError_t hipDeviceGet(hipDevice_t *device, int ordinal) {
	int h = 0;
	int r = fake_device_get(device ? &h : NULL, ordinal);
	if (r == 0) *device = h - FAKE_HANDLE_BASE;
	return r;
}
EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device) { return fake_device_get_name(name, len, handle(device)); }
EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device) {
	unsigned long long b = 0;
	int r = fake_device_total_mem(bytes ? &b : NULL, handle(device));
	if (r == 0) *bytes = (size_t)b;
	return r;
}
EXPORT hipError_t hipDeviceGetAttribute(int *pi, hipDeviceAttribute_t attr, int deviceId) {
	int cu = -1; /* the shared fake answers CUDA's numbers */
	switch (attr) {
	case hipDeviceAttributeMultiprocessorCount: cu = 16; break;
	case hipDeviceAttributeComputeCapabilityMajor: cu = 75; break;
	case hipDeviceAttributeComputeCapabilityMinor: cu = 76; break;
	case hipDeviceAttributeDmaBufSupported: cu = 124; break;
	}
	return fake_device_get_attribute(pi, cu, handle(deviceId));
}
EXPORT hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device) {
	if (!uuid) return hipErrorInvalidValue;
	return fake_device_get_uuid((unsigned char *)uuid->bytes, handle(device));
}
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device) {
	char id[64];
	int r = fake_device_get_pci_bus_id(id, sizeof id, handle(device));
	if (r) return r;
	if (!pciBusId || len <= 12) return hipErrorInvalidValue;
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) return hipErrorInvalidValue;
	snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return hipSuccess;
}
#endif
EXPORT hipError_t hipSetDevice(int deviceId) { return fake_set_device(deviceId); }
EXPORT hipError_t hipGetDevice(int *deviceId) { return fake_get_device(deviceId); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT hipError_t hipDeviceSynchronize(void) { return fake_ctx_synchronize(); }
#endif
EXPORT hipError_t hipMemGetInfo(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(free ? &f : NULL, total ? &t : NULL);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT const char *hipGetErrorName(hipError_t hip_error) { return fake_error_name_hip(hip_error); }
EXPORT const char *hipGetErrorString(hipError_t hipError) {
	const char *s = NULL;
	if (hipError == hipErrorNoDevice) return "fake: no ROCm-capable device is detected";
	return fake_error_string(hipError, &s) == 0 && s ? s : "unknown error";
}

#ifndef FAKE_NO_MODULES
#ifndef FAKE_NO_LOAD_DATA_EX
EXPORT hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
		hipJitOption *options, void **optionValues) {
	(void)numOptions; (void)options; (void)optionValues; /* ignored, as in CLR */
	return fake_module_load((void **)module, image, NULL, 0);
}
#endif
EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT hipError_t hipModuleUnload(hipModule_t module) { return fake_module_unload(module); }
EXPORT hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname) {
	return fake_module_get_function((void **)function, module, kname);
}
EXPORT hipError_t hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes, hipModule_t hmod, const char *name) {
	unsigned long long p = 0;
	int r = fake_module_get_global(dptr ? &p : NULL, bytes, hmod, name);
	if (r == 0 && dptr) *dptr = (hipDeviceptr_t)(uintptr_t)p;
	return r;
}
EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		hipStream_t stream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams, extra);
}
EXPORT hipError_t hipMalloc(void **ptr, size_t size) {
	unsigned long long p = 0;
	int r = fake_mem_alloc(ptr ? &p : NULL, size);
	if (r == 0) *ptr = (void *)(uintptr_t)p;
	return r;
}
EXPORT hipError_t hipFree(void *ptr) { return fake_mem_free((uintptr_t)ptr); }
EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void *src, size_t sizeBytes) { return fake_memcpy_htod((uintptr_t)dst, src, sizeBytes); }
EXPORT hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes) { return fake_memcpy_dtoh(dst, (uintptr_t)src, sizeBytes); }

#ifndef FAKE_NO_STREAMS
EXPORT hipError_t hipStreamCreate(hipStream_t *stream) { return fake_stream_create((void **)stream, 0); }
EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags) { return fake_stream_create((void **)stream, flags); }
EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) { return fake_stream_synchronize(stream); }
EXPORT hipError_t hipStreamDestroy(hipStream_t stream) { return fake_stream_destroy(stream); }
EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) { return fake_stream_wait_event(stream, event, flags); }
EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t sizeBytes, hipStream_t stream) {
	return fake_memcpy_async(OP_HTOD, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream) {
	return fake_memcpy_async(OP_DTOH, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
EXPORT hipError_t hipEventCreate(hipEvent_t *event) { return fake_event_create((void **)event, 0); }
EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags) { return fake_event_create((void **)event, flags); }
EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) { return fake_event_record(event, stream); }
EXPORT hipError_t hipEventSynchronize(hipEvent_t event) { return fake_event_synchronize(event); }
EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) { return fake_event_elapsed(ms, start, stop); }
EXPORT hipError_t hipEventDestroy(hipEvent_t event) { return fake_event_destroy(event); }
EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags) { return fake_host_alloc(ptr, size, flags); }
EXPORT hipError_t hipHostFree(void *ptr) { return fake_host_free(ptr); }
#endif
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_GRAPHS)
/* Graphs (hip_runtime_api.h 6.3: hipGraph_t and hipGraphExec_t are
 * pointers; hipStreamCaptureMode has CUDA's numbers). */
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef struct hipGraphNode *hipGraphNode_t;
typedef enum hipStreamCaptureMode {
	hipStreamCaptureModeGlobal = 0,
	hipStreamCaptureModeThreadLocal,
	hipStreamCaptureModeRelaxed
} hipStreamCaptureMode;
EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) { return fake_stream_begin_capture(stream, mode); }
EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph) { return fake_stream_end_capture(stream, (void **)pGraph); }
/* HIP's bare hipGraphInstantiate is the five-argument form (CUDA's
 * cuGraphInstantiate_v2 shape); it works, but flagshim binds WithFlags. */
EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph, hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize) {
	(void)pErrorNode; (void)pLogBuffer; (void)bufferSize;
	return fake_graph_instantiate((void **)pGraphExec, graph, 0);
}
EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph, unsigned long long flags) {
	return fake_graph_instantiate((void **)pGraphExec, graph, flags);
}
EXPORT hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) { return fake_graph_launch(graphExec, stream); }
EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec) { return fake_graph_destroy_any(graphExec, 1); }
EXPORT hipError_t hipGraphDestroy(hipGraph_t graph) { return fake_graph_destroy_any(graph, 0); }
#endif

#if !defined(FAKE_NO_MODULES) && !defined(FAKE_NO_STREAMS) && !defined(FAKE_NO_MORE_OPS)
/* The operations of fake_ops.h, with hip_runtime_api.h's shapes (ROCm 6.3;
 * hipMemGetHandleForAddressRange from later ROCm): hipIpcMemHandle_t is 64
 * bytes passed by value, hipStreamWaitValue64 takes a mask (the fake
 * requires all bits), hipDeviceGetByPCIBusId answers the ordinal. */
typedef struct hipIpcMemHandle_st { char reserved[64]; } hipIpcMemHandle_t;
typedef void (*hipHostFn_t)(void *userData);
EXPORT hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count) { return (hipError_t)fake_memset_any((uintptr_t)dest, value, 1, count, NULL, 0); }
EXPORT hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count) { return (hipError_t)fake_memset_any((uintptr_t)dest, value, 2, count, NULL, 0); }
EXPORT hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count) { return (hipError_t)fake_memset_any((uintptr_t)dest, (unsigned)value, 4, count, NULL, 0); }
EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count, hipStream_t stream) {
	return (hipError_t)fake_memset_any((uintptr_t)dest, value, 1, count, stream, 1);
}
EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dest, unsigned short value, size_t count, hipStream_t stream) {
	return (hipError_t)fake_memset_any((uintptr_t)dest, value, 2, count, stream, 1);
}
EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream) {
	return (hipError_t)fake_memset_any((uintptr_t)dst, (unsigned)value, 4, count, stream, 1);
}
EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes) { return (hipError_t)fake_memcpy_dtod((uintptr_t)dst, (uintptr_t)src, sizeBytes, NULL, 0); }
EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream) {
	return (hipError_t)fake_memcpy_dtod((uintptr_t)dst, (uintptr_t)src, sizeBytes, stream, 1);
}
EXPORT hipError_t hipMallocManaged(void **dev_ptr, size_t size, unsigned int flags) { return (hipError_t)fake_mem_alloc_managed((unsigned long long *)dev_ptr, size, flags); }
EXPORT hipError_t hipMallocAsync(void **dev_ptr, size_t size, hipStream_t stream) { return (hipError_t)fake_mem_alloc_async((unsigned long long *)dev_ptr, size, stream); }
EXPORT hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream) { return (hipError_t)fake_mem_free_async((uintptr_t)dev_ptr, stream); }
EXPORT hipError_t hipHostGetDevicePointer(void **devPtr, void *hstPtr, unsigned int flags) {
	return (hipError_t)fake_host_get_device_pointer((unsigned long long *)devPtr, hstPtr, flags);
}
EXPORT hipError_t hipStreamQuery(hipStream_t stream) { return (hipError_t)fake_stream_query(stream); }
EXPORT hipError_t hipEventQuery(hipEvent_t event) { return (hipError_t)fake_event_query(event); }
EXPORT hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags, uint64_t mask) {
	if (mask != ~(uint64_t)0) return hipErrorInvalidValue; /* the fake compares whole words */
	return (hipError_t)fake_stream_value64(OP_WAIT64, stream, (uintptr_t)ptr, value, flags);
}
EXPORT hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags) {
	return (hipError_t)fake_stream_value64(OP_WRITE64, stream, (uintptr_t)ptr, value, flags);
}
EXPORT hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData) { return (hipError_t)fake_launch_host_func(stream, fn, userData); }
EXPORT hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *handle, void *devPtr) { return (hipError_t)fake_ipc_get(handle, (uintptr_t)devPtr); }
EXPORT hipError_t hipIpcOpenMemHandle(void **devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
	return (hipError_t)fake_ipc_open((unsigned long long *)devPtr, &handle, flags);
}
EXPORT hipError_t hipIpcCloseMemHandle(void *devPtr) { return (hipError_t)fake_ipc_close((uintptr_t)devPtr); }
EXPORT hipError_t hipDeviceGetByPCIBusId(int *device, const char *pciBusId) { return (hipError_t)fake_device_get_by_pci_bus_id(device, pciBusId, 1); }
EXPORT hipError_t hipMemGetHandleForAddressRange(void *handle, hipDeviceptr_t dptr, size_t size, int handleType, unsigned long long flags) {
	return (hipError_t)fake_get_handle_for_range(handle, (uintptr_t)dptr, size, handleType, flags);
}
#endif
