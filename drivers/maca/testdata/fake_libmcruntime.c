/*
 * A fake libmcruntime.so (MetaX MACA runtime) with the function names and C
 * signatures MACA's callers compile against (mcr/mc_runtime.h is not
 * public: InfiniTensor/mxdrv's bindgen of it, FlagTree's metax driver.c,
 * MetaX-MACA/mcTVM, FlagCX's maca_adaptor.cc; drivers/maca/vendor.go cites
 * each), for flagshim's tests. Behaviour: driver/drivertest/testdata/
 * fake_common.h (contexts per thread, tracked memory, text modules,
 * streams), with MACA's conventions on top:
 *   - mcError_t numbers follow the CUDA runtime's (cudaError_t); the fake's
 *     codes (1, 2, 3, 100, 101, 200, 201, 218, 400, 500, 600, 700, 719) are
 *     named as drivers/maca/results.go names them.
 *   - mcGetErrorName and mcGetErrorString return const char *; for a code
 *     the fake does not know both return NULL (the fake's choice: what the
 *     real runtime answers then is not known).
 *   - mcDeviceGetAttribute answers 12345 for every attribute: the binding
 *     must never call it (its enum numbers are not confirmed), and a
 *     Properties showing 12345 would mean it did.
 *   - mcStreamCreate and mcEventCreate take no flags (the ...WithFlags forms
 *     are here too, unused by the binding); mcMallocHost takes three
 *     arguments; there is no mcModuleLoadDataEx, no mcMemcpyDtoHAsync, no
 *     mcDeviceTotalMem and no mcDeviceGetUuid (their shapes are not
 *     confirmed), and no _v2 name.
 *   - MCdevice handles are ordinal+1000 (fake_common.h), so a binding that
 *     passes ordinals where handles are due fails.
 *   - The version is a plain number (FAKE_DEFAULT_VERSION): the encoding of
 *     mcDriverGetVersion's is not known.
 * Variables: FAKE_MACA_<NAME> or FAKE_<NAME> (fake_common.h). Build
 * variants:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional mcDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required mcCtxSynchronize
 *   -DFAKE_NO_MODULES          lacks every optional module, launch, memory and stream symbol
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols
 * (-DFAKE_NO_LOAD_DATA_EX changes nothing: there is no Ex form.)
 */
#define FAKE_ERR_PREFIX "MACA_"
#define FAKE_DEFAULT_VERSION 12345
#include "fake_common.h"

typedef int mcError_t;
typedef int MCdevice;
typedef struct MCctx_st *MCcontext;
typedef struct MCstream_st *mcStream_t;
typedef struct MCevent_st *mcEvent_t;
typedef struct MCmodule_st *mcModule_t;
typedef struct MCfunction_st *mcFunction_t;
typedef void *mcDeviceptr_t;
typedef int mcDeviceAttribute_t;

#define EXPORT __attribute__((visibility("default")))

EXPORT mcError_t mcInit(unsigned int flags) { return fake_init(flags); }
EXPORT mcError_t mcDriverGetVersion(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT mcError_t mcRuntimeGetVersion(int *runtimeVersion) { return fake_driver_get_version(runtimeVersion); }
EXPORT mcError_t mcGetDeviceCount(int *count) { return fake_device_get_count(count); }
EXPORT mcError_t mcDeviceGet(MCdevice *device, int ordinal) { return fake_device_get(device, ordinal); }
EXPORT mcError_t mcDeviceGetName(char *name, int len, MCdevice device) { return fake_device_get_name(name, len, device); }
EXPORT mcError_t mcDeviceGetAttribute(int *value, mcDeviceAttribute_t attr, int device) {
	(void)attr;
	int r = fake_device_get_attribute(value, 16, device);
	if (r == 0) *value = 12345;
	return r;
}
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT mcError_t mcDeviceGetPCIBusId(char *pciBusId, int len, int device) { return fake_device_get_pci_bus_id(pciBusId, len, device); }
#endif

EXPORT mcError_t mcDevicePrimaryCtxRetain(MCcontext *pctx, MCdevice dev) { return fake_primary_ctx_retain((void **)pctx, dev); }
EXPORT mcError_t mcCtxSetCurrent(MCcontext ctx) { return fake_ctx_set_current(ctx); }
EXPORT mcError_t mcCtxGetCurrent(MCcontext *pctx) { return fake_ctx_get_current((void **)pctx); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT mcError_t mcCtxSynchronize(void) { return fake_ctx_synchronize(); }
EXPORT mcError_t mcDeviceSynchronize(void) { return fake_ctx_synchronize(); }
#endif
EXPORT mcError_t mcSetDevice(int device) { return fake_set_device(device); }
EXPORT mcError_t mcGetDevice(int *device) { return fake_get_device(device); }
EXPORT mcError_t mcMemGetInfo(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(free ? &f : NULL, total ? &t : NULL);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}

/* maca_error_name names the fake's codes as drivers/maca/results.go does. */
static const char *maca_error_name(mcError_t e) {
	switch (e) {
	case 0: return "mcSuccess";
	case 1: return "mcErrorInvalidValue";
	case 2: return "mcErrorMemoryAllocation";
	case 3: return "mcErrorInitializationError";
	case 100: return "mcErrorNoDevice";
	case 101: return "mcErrorInvalidDevice";
	case 200: return "mcErrorInvalidKernelImage";
	case 201: return "mcErrorDeviceUninitialized";
	case 218: return "mcErrorInvalidKernelFile";
	case 400: return "mcErrorInvalidResourceHandle";
	case 500: return "mcErrorSymbolNotFound";
	case 600: return "mcErrorNotReady";
	case 700: return "mcErrorIllegalAddress";
	case 719: return "mcErrorLaunchFailure";
	case 801: return "mcErrorNotSupported";
	case 999: return "mcErrorUnknown";
	}
	return NULL;
}

EXPORT const char *mcGetErrorName(mcError_t error) { return maca_error_name(error); }
EXPORT const char *mcGetErrorString(mcError_t error) {
	const char *s = NULL;
	if (error == 100) return "fake: no MACA-capable device is detected";
	return fake_error_string(error, &s) == 0 ? s : NULL;
}

#ifndef FAKE_NO_MODULES
EXPORT mcError_t mcModuleLoadData(mcModule_t *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT mcError_t mcModuleUnload(mcModule_t module) { return fake_module_unload(module); }
EXPORT mcError_t mcModuleGetFunction(mcFunction_t *function, mcModule_t module, const char *name) {
	return fake_module_get_function((void **)function, module, name);
}
EXPORT mcError_t mcModuleGetGlobal(mcDeviceptr_t *dptr, size_t *bytes, mcModule_t module, const char *name) {
	unsigned long long p = 0;
	int r = fake_module_get_global(dptr ? &p : NULL, bytes, module, name);
	if (r == 0 && dptr) *dptr = (mcDeviceptr_t)(uintptr_t)p;
	return r;
}
EXPORT mcError_t mcModuleLaunchKernel(mcFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		mcStream_t stream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams, extra);
}
EXPORT mcError_t mcMalloc(void **ptr, size_t size) {
	unsigned long long p = 0;
	int r = fake_mem_alloc(ptr ? &p : NULL, size);
	if (r == 0) *ptr = (void *)(uintptr_t)p;
	return r;
}
EXPORT mcError_t mcFree(void *ptr) { return fake_mem_free((uintptr_t)ptr); }
EXPORT mcError_t mcMemcpyHtoD(mcDeviceptr_t dst, const void *src, size_t bytes) { return fake_memcpy_htod((uintptr_t)dst, src, bytes); }
EXPORT mcError_t mcMemcpyDtoH(void *dst, mcDeviceptr_t src, size_t bytes) { return fake_memcpy_dtoh(dst, (uintptr_t)src, bytes); }

#ifndef FAKE_NO_STREAMS
EXPORT mcError_t mcStreamCreate(mcStream_t *stream) { return fake_stream_create((void **)stream, 0); }
EXPORT mcError_t mcStreamCreateWithFlags(mcStream_t *stream, unsigned int flags) { return fake_stream_create((void **)stream, flags); }
EXPORT mcError_t mcStreamSynchronize(mcStream_t stream) { return fake_stream_synchronize(stream); }
EXPORT mcError_t mcStreamDestroy(mcStream_t stream) { return fake_stream_destroy(stream); }
EXPORT mcError_t mcStreamWaitEvent(mcStream_t stream, mcEvent_t event, unsigned int flags) { return fake_stream_wait_event(stream, event, flags); }
EXPORT mcError_t mcMemcpyHtoDAsync(mcDeviceptr_t dst, const void *src, size_t bytes, mcStream_t stream) {
	return fake_memcpy_async(OP_HTOD, (uintptr_t)dst, (uintptr_t)src, bytes, stream);
}
EXPORT mcError_t mcEventCreate(mcEvent_t *event) { return fake_event_create((void **)event, 0); }
EXPORT mcError_t mcEventCreateWithFlags(mcEvent_t *event, unsigned int flags) { return fake_event_create((void **)event, flags); }
EXPORT mcError_t mcEventRecord(mcEvent_t event, mcStream_t stream) { return fake_event_record(event, stream); }
EXPORT mcError_t mcEventSynchronize(mcEvent_t event) { return fake_event_synchronize(event); }
EXPORT mcError_t mcEventElapsedTime(float *ms, mcEvent_t start, mcEvent_t end) { return fake_event_elapsed(ms, start, end); }
EXPORT mcError_t mcEventDestroy(mcEvent_t event) { return fake_event_destroy(event); }
EXPORT mcError_t mcMallocHost(void **ptr, size_t size, unsigned int flags) { return fake_host_alloc(ptr, size, flags); }
EXPORT mcError_t mcFreeHost(void *ptr) { return fake_host_free(ptr); }
#endif
#endif
