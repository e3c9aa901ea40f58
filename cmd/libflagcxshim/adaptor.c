//go:build cgo

/*
 * flagcxDeviceAdaptorPlugin_v1: FlagCX's device adaptor (flagcx_v1.h), each
 * field a thin wrapper that calls its Go side (export.go) with the calling
 * thread's device, except where a direct call (fast.c) serves the hot
 * fields without Go. What needs no Go stays here: the thread's device
 * (getDevice), a memset of host memory, launchDeviceFunc (FlagCX's own host
 * function, called on the host as FlagCX's built-in CUDA adaptor does). The
 * fields FlagCX's built-in CUDA adaptor leaves NULL stay NULL
 * (memHandleInit, memHandleDestroy, hostShareMemAlloc/Free, gdrPtrMmap/Munmap,
 * launchKernel, copyArgsInit/Free).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/auxv.h>

#include "fast.h"
#include "flagcx_v1.h"
#include "_cgo_export.h"

/* The thread's device, as the CUDA runtime keeps cudaSetDevice's: 0 until
 * setDevice. */
static __thread int flagcxshim_dev;

/* Set in the child of a fork made after the plugin was loaded (the child
 * handler runs there with one thread). The Go runtime does not survive
 * fork(): its other threads, locks and scheduler are a moment's copy of the
 * parent's, and entering it may hang the child. So in a forked child no
 * field enters Go, nor calls the driver on the parent's objects: each
 * answers flagcxUnhandledDeviceError at once, and flagcxshim_last_error
 * says why (libflagshim's entry points do the same). The fields that are
 * plain C and touch no device (getDevice, a memset of host memory,
 * launchDeviceFunc) still answer. */
static volatile int flagcxshim_in_forked_child;
static const char flagcxshim_fork_message[] =
	"called in the child of a fork: the Go runtime inside the flagshim FlagCX plugin does not survive fork(), so no "
	"device field runs in this process; use FlagCX in the parent, or start workers with exec or a spawn method";

static void flagcxshim_fork_child(void) { flagcxshim_in_forked_child = 1; }

#define DEV flagcxshim_dev
/* R: a call into Go, counted (fast.h's GO); in a forked child, none. */
#define R(x) (flagcxshim_in_forked_child ? flagcxUnhandledDeviceError : (flagcxResult_t)GO(x))
/* FAST: a field served by a direct call (fast.c) when it can be; in a
 * forked child, the answer at once. */
#define FAST(call) \
	do { \
		if (flagcxshim_in_forked_child) return flagcxUnhandledDeviceError; \
		flagcxResult_t fast_r; \
		if (call) return fast_r; \
	} while (0)

static flagcxResult_t fx_deviceSynchronize(void) { return R(flagcxshim_go_deviceSynchronize(DEV)); }
static flagcxResult_t fx_deviceMemcpy(void *dst, void *src, size_t size, flagcxMemcpyType_t type, flagcxStream_t stream, void *args) {
	(void)args; /* always NULL from FlagCX's table */
	if (stream != NULL) FAST(fx_fast_memcpy(dst, src, size, (int)type, stream, &fast_r));
	return R(flagcxshim_go_deviceMemcpy(DEV, dst, src, size, (int)type, stream));
}
static flagcxResult_t fx_deviceMemset(void *ptr, int value, size_t size, flagcxMemType_t type, flagcxStream_t stream) {
	if (type == flagcxMemHost) { /* host memory: a plain memset, as the built-in adaptors do */
		if (size == 0) return flagcxSuccess;
		if (ptr == NULL) return flagcxInvalidArgument;
		memset(ptr, value, size);
		return flagcxSuccess;
	}
	return R(flagcxshim_go_deviceMemset(DEV, ptr, value, size, (int)type, stream));
}
static flagcxResult_t fx_deviceMalloc(void **ptr, size_t size, flagcxMemType_t type, flagcxStream_t stream) {
	FAST(fx_fast_malloc(DEV, ptr, size, (int)type, stream, &fast_r));
	return R(flagcxshim_go_deviceMalloc(DEV, ptr, size, (int)type, stream));
}
static flagcxResult_t fx_deviceFree(void *ptr, flagcxMemType_t type, flagcxStream_t stream) {
	FAST(fx_fast_free(DEV, ptr, (int)type, stream, &fast_r));
	return R(flagcxshim_go_deviceFree(DEV, ptr, (int)type, stream));
}
static flagcxResult_t fx_setDevice(int dev) {
	flagcxResult_t r = R(flagcxshim_go_setDevice(dev));
	if (r == flagcxSuccess) flagcxshim_dev = dev;
	return r;
}
static flagcxResult_t fx_getDevice(int *dev) {
	if (dev == NULL) return flagcxInvalidArgument;
	*dev = flagcxshim_dev;
	return flagcxSuccess;
}
static flagcxResult_t fx_getDeviceCount(int *count) { return R(flagcxshim_go_getDeviceCount(count)); }
static flagcxResult_t fx_getVendor(char *vendor) { return R(flagcxshim_go_getVendor(vendor)); }
static flagcxResult_t fx_hostGetDevicePointer(void **pDevice, void *pHost) { return R(flagcxshim_go_hostGetDevicePointer(DEV, pDevice, pHost)); }
static flagcxResult_t fx_gdrMemAlloc(void **ptr, size_t size, void *memHandle) {
	(void)memHandle;
	return R(flagcxshim_go_gdrMemAlloc(DEV, ptr, size));
}
static flagcxResult_t fx_gdrMemFree(void *ptr, void *memHandle) {
	(void)memHandle;
	return R(flagcxshim_go_gdrMemFree(DEV, ptr));
}
static flagcxResult_t fx_streamCreate(flagcxStream_t *stream) {
	FAST(fx_fast_streamCreate(DEV, stream, &fast_r));
	return R(flagcxshim_go_streamCreate(DEV, stream));
}
static flagcxResult_t fx_streamDestroy(flagcxStream_t stream) {
	FAST(fx_fast_streamDestroy(stream, &fast_r));
	return R(flagcxshim_go_streamDestroy(stream));
}
static flagcxResult_t fx_streamCopy(flagcxStream_t *newStream, void *oldStream) { return R(flagcxshim_go_streamCopy(DEV, newStream, oldStream)); }
static flagcxResult_t fx_streamFree(flagcxStream_t stream) { return R(flagcxshim_go_streamFree(stream)); }
static flagcxResult_t fx_streamSynchronize(flagcxStream_t stream) {
	FAST(fx_fast_streamSynchronize(stream, &fast_r));
	return R(flagcxshim_go_streamSynchronize(stream));
}
static flagcxResult_t fx_streamQuery(flagcxStream_t stream) {
	FAST(fx_fast_streamQuery(stream, &fast_r));
	return R(flagcxshim_go_streamQuery(stream));
}
static flagcxResult_t fx_streamWaitEvent(flagcxStream_t stream, flagcxEvent_t event) { return R(flagcxshim_go_streamWaitEvent(stream, event)); }
static flagcxResult_t fx_streamWaitValue64(flagcxStream_t stream, void *addr, uint64_t value, int flags) {
	(void)flags; /* GEQ, as the built-in */
	return R(flagcxshim_go_streamValue64(stream, addr, value, 0));
}
static flagcxResult_t fx_streamWriteValue64(flagcxStream_t stream, void *addr, uint64_t value, int flags) {
	(void)flags;
	return R(flagcxshim_go_streamValue64(stream, addr, value, 1));
}
static flagcxResult_t fx_eventCreate(flagcxEvent_t *event, flagcxEventType_t eventType) { return R(flagcxshim_go_eventCreate(DEV, event, (int)eventType)); }
static flagcxResult_t fx_eventDestroy(flagcxEvent_t event) { return R(flagcxshim_go_eventDestroy(event)); }
static flagcxResult_t fx_eventRecord(flagcxEvent_t event, flagcxStream_t stream) {
	FAST(fx_fast_eventRecord(event, stream, &fast_r));
	return R(flagcxshim_go_eventRecord(event, stream));
}
static flagcxResult_t fx_eventSynchronize(flagcxEvent_t event) {
	FAST(fx_fast_eventSynchronize(event, &fast_r));
	return R(flagcxshim_go_eventSynchronize(event));
}
static flagcxResult_t fx_eventQuery(flagcxEvent_t event) {
	FAST(fx_fast_eventQuery(event, &fast_r));
	return R(flagcxshim_go_eventQuery(event));
}
static flagcxResult_t fx_eventElapsedTime(float *ms, flagcxEvent_t start, flagcxEvent_t end) { return R(flagcxshim_go_eventElapsedTime(ms, start, end)); }
static flagcxResult_t fx_ipcMemHandleCreate(flagcxIpcMemHandle_t *handle, size_t *size) { return R(flagcxshim_go_ipcMemHandleCreate(handle, size)); }
static flagcxResult_t fx_ipcMemHandleGet(flagcxIpcMemHandle_t handle, void *devPtr) { return R(flagcxshim_go_ipcMemHandleGet(DEV, handle, devPtr)); }
static flagcxResult_t fx_ipcMemHandleOpen(flagcxIpcMemHandle_t handle, void **devPtr) { return R(flagcxshim_go_ipcMemHandleOpen(DEV, handle, devPtr)); }
static flagcxResult_t fx_ipcMemHandleClose(void *devPtr) { return R(flagcxshim_go_ipcMemHandleClose(DEV, devPtr)); }
static flagcxResult_t fx_ipcMemHandleFree(flagcxIpcMemHandle_t handle) { return R(flagcxshim_go_ipcMemHandleFree(handle)); }
static flagcxResult_t fx_launchDeviceFunc(flagcxStream_t stream, flagcxLaunchFunc_t fn, void *args) {
	if (stream == NULL) return flagcxSuccess; /* the built-in's rule */
	if (fn == NULL) return flagcxInvalidArgument;
	fn(stream, args);
	return flagcxSuccess;
}
static flagcxResult_t fx_getDeviceProperties(struct flagcxDevProps *props, int dev) { return R(flagcxshim_go_getDeviceProperties(props, dev)); }
static flagcxResult_t fx_getDevicePciBusId(char *pciBusId, int len, int dev) { return R(flagcxshim_go_getDevicePciBusId(pciBusId, len, dev)); }
static flagcxResult_t fx_getDeviceByPciBusId(int *dev, const char *pciBusId) { return R(flagcxshim_go_getDeviceByPciBusId(dev, (void *)pciBusId)); }
static flagcxResult_t fx_launchHostFunc(flagcxStream_t stream, void (*fn)(void *), void *args) {
	return R(flagcxshim_go_launchHostFunc(stream, (void *)fn, args));
}
static flagcxResult_t fx_dmaSupport(bool *dmaBufferSupport) { return R(flagcxshim_go_dmaSupport(DEV, dmaBufferSupport)); }
static flagcxResult_t fx_getHandleForAddressRange(void *handleOut, void *buffer, size_t size, unsigned long long flags) {
	return R(flagcxshim_go_getHandleForAddressRange(DEV, handleOut, buffer, size, flags));
}

__attribute__((visibility("default"))) struct flagcxDeviceAdaptor_v1 flagcxDeviceAdaptorPlugin_v1 = {
	.name = "flagshim",
	.deviceSynchronize = fx_deviceSynchronize,
	.deviceMemcpy = fx_deviceMemcpy,
	.deviceMemset = fx_deviceMemset,
	.deviceMalloc = fx_deviceMalloc,
	.deviceFree = fx_deviceFree,
	.setDevice = fx_setDevice,
	.getDevice = fx_getDevice,
	.getDeviceCount = fx_getDeviceCount,
	.getVendor = fx_getVendor,
	.hostGetDevicePointer = fx_hostGetDevicePointer,
	.gdrMemAlloc = fx_gdrMemAlloc,
	.gdrMemFree = fx_gdrMemFree,
	.streamCreate = fx_streamCreate,
	.streamDestroy = fx_streamDestroy,
	.streamCopy = fx_streamCopy,
	.streamFree = fx_streamFree,
	.streamSynchronize = fx_streamSynchronize,
	.streamQuery = fx_streamQuery,
	.streamWaitEvent = fx_streamWaitEvent,
	.streamWaitValue64 = fx_streamWaitValue64,
	.streamWriteValue64 = fx_streamWriteValue64,
	.eventCreate = fx_eventCreate,
	.eventDestroy = fx_eventDestroy,
	.eventRecord = fx_eventRecord,
	.eventSynchronize = fx_eventSynchronize,
	.eventQuery = fx_eventQuery,
	.eventElapsedTime = fx_eventElapsedTime,
	.ipcMemHandleCreate = fx_ipcMemHandleCreate,
	.ipcMemHandleGet = fx_ipcMemHandleGet,
	.ipcMemHandleOpen = fx_ipcMemHandleOpen,
	.ipcMemHandleClose = fx_ipcMemHandleClose,
	.ipcMemHandleFree = fx_ipcMemHandleFree,
	.launchDeviceFunc = fx_launchDeviceFunc,
	.getDeviceProperties = fx_getDeviceProperties,
	.getDevicePciBusId = fx_getDevicePciBusId,
	.getDeviceByPciBusId = fx_getDeviceByPciBusId,
	.launchHostFunc = fx_launchHostFunc,
	.dmaSupport = fx_dmaSupport,
	.getHandleForAddressRange = fx_getHandleForAddressRange,
};

/* The name FlagCX logs ("flagshim:cuda"), written before dlopen returns:
 * FlagCX copies the struct right after dlsym. The Go side decides it
 * without running any driver code (the loader's lock is held here). In a
 * shared library, a call into Go from a constructor waits for the Go
 * runtime, which the library's own constructor has started; linked into a
 * program (the package's tests), the runtime starts only after the
 * constructors, so the program's constructor must not call Go. */
__attribute__((constructor)) static void flagcxshim_load(void) {
	pthread_atfork(NULL, NULL, flagcxshim_fork_child);
	Dl_info self, exe;
	if (dladdr(&flagcxDeviceAdaptorPlugin_v1, &self) && dladdr((void *)getauxval(AT_ENTRY), &exe) &&
	    self.dli_fbase == exe.dli_fbase)
		return; /* a program, not a library */
	flagcxshim_go_load(flagcxDeviceAdaptorPlugin_v1.name, (int)sizeof flagcxDeviceAdaptorPlugin_v1.name);
}

/* flagcxshim_last_error writes the last failure's reason (flagshim's words)
 * into out, cut to len with its NUL, and returns its length: what FlagCX's
 * v1, without getLastError, cannot ask. */
__attribute__((visibility("default"))) int flagcxshim_last_error(char *out, int len) {
	if (!flagcxshim_in_forked_child) return flagcxshim_go_last_error(out, len);
	int n = (int)(sizeof flagcxshim_fork_message - 1);
	if (out != NULL && len > 0) {
		int k = n < len - 1 ? n : len - 1;
		memcpy(out, flagcxshim_fork_message, (size_t)k);
		out[k] = 0;
	}
	return n;
}
