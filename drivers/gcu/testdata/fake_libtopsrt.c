/*
 * A fake libtopsrt.so (Enflame TOPS runtime, TopsRider) with the real
 * function names and C signatures of tops_runtime_api.h
 * (EnflameTechnology/tops-codec-headers, the TopsRider 2.3 header), for
 * flagshim's tests. Behaviour: driver/drivertest/testdata/fake_common.h, with
 * the TOPS runtime's own conventions on top:
 *   - topsDevice_t is the ordinal (topsDeviceGet returns it, as HIP's does);
 *     the shared fake's handles (ordinal+1000) never leave this file.
 *   - topsDeviceComputeCapability answers the compute capability; the fake
 *     has no topsDeviceGetAttribute (the binding does not use its numbers).
 *   - topsGetDeviceCount with no device returns topsErrorNoDevice and a count
 *     of 0 ("Call to topsGetDeviceCount returned 0 devices").
 *   - topsGetErrorName and topsGetErrorString return const char *; unknown
 *     codes are "topsErrorUnknown" / "unknown error"; 1054 is topsErrorTbd,
 *     the enum's end marker.
 *   - topsDeviceGetPCIBusId writes "0000:18:00.0".
 *   - There is no context API: the calls are per thread, and with no device
 *     selected on the calling thread (topsSetDevice), synchronize, memory,
 *     module and stream calls return topsErrorInvalidContext (the real runtime
 *     falls back on device 0; the fake is stricter so that a binding that
 *     forgets to select fails).
 *   - There is no UUID function (the header has none).
 * Variables: FAKE_TOPS_<NAME> or FAKE_<NAME> (fake_common.h); FAKE_STUB has
 * no TOPS meaning. Build variants:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional topsDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required topsDeviceSynchronize
 *   -DFAKE_NO_MODULES          lacks every optional module, launch, memory and stream symbol
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols
 * (-DFAKE_NO_LOAD_DATA_EX, -DFAKE_NO_TOTALMEM_V2 and -DFAKE_NO_PARAM_INFO
 * change nothing: the binding uses none of those functions.)
 */
#define FAKE_ERR_PREFIX "TOPS_"
#define FAKE_DEFAULT_VERSION 2030 /* topsDriverGetVersion: 1000 major + 10 minor, 2.3 */
#include "fake_common.h"

typedef enum topsError_t {
	topsSuccess = 0,
	topsErrorInvalidValue = 1,
	topsErrorNoDevice = 100,
} topsError_t;
typedef int topsDevice_t;
typedef struct itopsStream_t *topsStream_t;
typedef struct itopsModule_t *topsModule_t;
typedef struct itopsModuleSymbol_t *topsFunction_t;
typedef struct itopsEvent_t *topsEvent_t;
typedef void *topsDeviceptr_t;

#define EXPORT __attribute__((visibility("default")))

/* handle is the shared fake's handle of a topsDevice_t (an ordinal). */
static int handle(topsDevice_t device) { return device + FAKE_HANDLE_BASE; }

static const char *error_name(int code) {
	switch (code) {
	case 0: return "topsSuccess";
	case 1: return "topsErrorInvalidValue";
	case 2: return "topsErrorOutOfMemory";
	case 3: return "topsErrorNotInitialized";
	case 35: return "topsErrorInsufficientDriver";
	case 100: return "topsErrorNoDevice";
	case 101: return "topsErrorInvalidDevice";
	case 200: return "topsErrorInvalidImage";
	case 201: return "topsErrorInvalidContext";
	case 218: return "topsErrorInvalidKernelFile";
	case 400: return "topsErrorInvalidHandle";
	case 500: return "topsErrorNotFound";
	case 600: return "topsErrorNotReady";
	case 700: return "topsErrorIllegalAddress";
	case 719: return "topsErrorLaunchFailure";
	case 801: return "topsErrorNotSupported";
	case 999: return "topsErrorUnknown";
	case 1054: return "topsErrorTbd";
	}
	return "topsErrorUnknown";
}

EXPORT topsError_t topsInit(unsigned int flags) { return fake_init(flags); }
EXPORT topsError_t topsDriverGetVersion(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT topsError_t topsRuntimeGetVersion(int *runtimeVersion) { return fake_driver_get_version(runtimeVersion); }
EXPORT topsError_t topsGetDeviceCount(int *count) {
	int r = fake_device_get_count(count);
	if (r == 0 && !fake.has_raw_count && *count == 0) return topsErrorNoDevice;
	return r;
}
EXPORT topsError_t topsDeviceGet(topsDevice_t *device, int ordinal) {
	int h = 0;
	int r = fake_device_get(device ? &h : NULL, ordinal);
	if (r == 0) *device = h - FAKE_HANDLE_BASE;
	return r;
}
EXPORT topsError_t topsDeviceGetName(char *name, int len, topsDevice_t device) { return fake_device_get_name(name, len, handle(device)); }
EXPORT topsError_t topsDeviceTotalMem(size_t *bytes, topsDevice_t device) {
	unsigned long long b = 0;
	int r = fake_device_total_mem(bytes ? &b : NULL, handle(device));
	if (r == 0) *bytes = (size_t)b;
	return r;
}
EXPORT topsError_t topsDeviceComputeCapability(int *major, int *minor, topsDevice_t device) {
	if (!major || !minor) return topsErrorInvalidValue;
	int r = fake_device_get_attribute(major, 75, handle(device)); /* the shared fake's CUDA numbers */
	return r ? r : fake_device_get_attribute(minor, 76, handle(device));
}
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT topsError_t topsDeviceGetPCIBusId(char *pciBusId, int len, int device) {
	char id[64];
	int r = fake_device_get_pci_bus_id(id, sizeof id, handle(device));
	if (r) return r;
	if (!pciBusId || len <= 12) return topsErrorInvalidValue;
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) return topsErrorInvalidValue;
	snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return topsSuccess;
}
#endif
EXPORT topsError_t topsSetDevice(int deviceId) { return fake_set_device(deviceId); }
EXPORT topsError_t topsGetDevice(int *deviceId) { return fake_get_device(deviceId); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT topsError_t topsDeviceSynchronize(void) { return fake_ctx_synchronize(); }
#endif
EXPORT topsError_t topsMemGetInfo(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(free ? &f : NULL, total ? &t : NULL);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT const char *topsGetErrorName(topsError_t tops_error) { return error_name(tops_error); }
EXPORT const char *topsGetErrorString(topsError_t topsError) {
	const char *s = NULL;
	if (topsError == topsErrorNoDevice) return "fake: no GCU is detected";
	return fake_error_string(topsError, &s) == 0 && s ? s : "unknown error";
}

#ifndef FAKE_NO_MODULES
EXPORT topsError_t topsModuleLoadData(topsModule_t *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT topsError_t topsModuleUnload(topsModule_t module) { return fake_module_unload(module); }
EXPORT topsError_t topsModuleGetFunction(topsFunction_t *function, topsModule_t module, const char *kname) {
	return fake_module_get_function((void **)function, module, kname);
}
EXPORT topsError_t topsModuleGetGlobal(topsDeviceptr_t *dptr, size_t *bytes, topsModule_t hmod, const char *name) {
	unsigned long long p = 0;
	int r = fake_module_get_global(dptr ? &p : NULL, bytes, hmod, name);
	if (r == 0 && dptr) *dptr = (topsDeviceptr_t)(uintptr_t)p;
	return r;
}
EXPORT topsError_t topsModuleLaunchKernel(topsFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		topsStream_t stream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, kernelParams, extra);
}
EXPORT topsError_t topsMalloc(void **ptr, size_t size) {
	unsigned long long p = 0;
	int r = fake_mem_alloc(ptr ? &p : NULL, size);
	if (r == 0) *ptr = (void *)(uintptr_t)p;
	return r;
}
EXPORT topsError_t topsFree(void *ptr) { return fake_mem_free((uintptr_t)ptr); }
EXPORT topsError_t topsMemcpyHtoD(topsDeviceptr_t dst, void *src, size_t sizeBytes) { return fake_memcpy_htod((uintptr_t)dst, src, sizeBytes); }
EXPORT topsError_t topsMemcpyDtoH(void *dst, topsDeviceptr_t src, size_t sizeBytes) { return fake_memcpy_dtoh(dst, (uintptr_t)src, sizeBytes); }

#ifndef FAKE_NO_STREAMS
EXPORT topsError_t topsStreamCreate(topsStream_t *stream) { return fake_stream_create((void **)stream, 0); }
EXPORT topsError_t topsStreamCreateWithFlags(topsStream_t *stream, unsigned int flags) { return fake_stream_create((void **)stream, flags); }
EXPORT topsError_t topsStreamSynchronize(topsStream_t stream) { return fake_stream_synchronize(stream); }
EXPORT topsError_t topsStreamDestroy(topsStream_t stream) { return fake_stream_destroy(stream); }
EXPORT topsError_t topsStreamWaitEvent(topsStream_t stream, topsEvent_t event, unsigned int flags) { return fake_stream_wait_event(stream, event, flags); }
EXPORT topsError_t topsMemcpyHtoDAsync(topsDeviceptr_t dst, void *src, size_t sizeBytes, topsStream_t stream) {
	return fake_memcpy_async(OP_HTOD, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
EXPORT topsError_t topsMemcpyDtoHAsync(void *dst, topsDeviceptr_t src, size_t sizeBytes, topsStream_t stream) {
	return fake_memcpy_async(OP_DTOH, (uintptr_t)dst, (uintptr_t)src, sizeBytes, stream);
}
EXPORT topsError_t topsEventCreate(topsEvent_t *event) { return fake_event_create((void **)event, 0); }
EXPORT topsError_t topsEventCreateWithFlags(topsEvent_t *event, unsigned flags) { return fake_event_create((void **)event, flags); }
EXPORT topsError_t topsEventRecord(topsEvent_t event, topsStream_t stream) { return fake_event_record(event, stream); }
EXPORT topsError_t topsEventSynchronize(topsEvent_t event) { return fake_event_synchronize(event); }
EXPORT topsError_t topsEventElapsedTime(float *ms, topsEvent_t start, topsEvent_t stop) { return fake_event_elapsed(ms, start, stop); }
EXPORT topsError_t topsEventDestroy(topsEvent_t event) { return fake_event_destroy(event); }
EXPORT topsError_t topsHostMalloc(void **ptr, size_t size, unsigned int flags) { return fake_host_alloc(ptr, size, flags); }
EXPORT topsError_t topsHostFree(void *ptr) { return fake_host_free(ptr); }
#endif
#endif
