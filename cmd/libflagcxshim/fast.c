//go:build cgo

/*
 * The hot fields in C (see fast.h): each finds its objects in a registry
 * of the plugin's live streams and events (never reading an object it does
 * not know), makes the object's device current with the selection function
 * and the device's selector, exactly as flagshim's core does for each of
 * its calls (cuCtxSetCurrent of the retained primary context; hipSetDevice
 * of the ordinal), and calls the driver function, on the calling thread.
 * Result codes: 0 is flagcxSuccess; the vendor's "not ready" is
 * flagcxInProgress for the queries; anything else goes to Go
 * (flagcxshim_go_fastFail) for the core's error, its FlagCX code and the
 * reason recorded, as the Go path records it. Whatever is not the plain
 * case (NULL, an unknown object, an unknown kind, a device whose selector
 * is not known yet, direct calls off) is left to the Go path, which has
 * every check.
 *
 * The functions are called in CUDA's shapes (cuda.h 13.0; fast.go hands
 * over only operations the core calls so: resolved, full width, no
 * adapter), every argument a register-sized integer or pointer, as
 * flagshim's own trampoline passes them:
 *   CUresult cuCtxSetCurrent(CUcontext) / hipError_t hipSetDevice(int)
 *   CUresult cuCtxGetCurrent(CUcontext *) (optional: FX_SKIP_CURRENT)
 *   CUresult cuStreamSynchronize(CUstream), cuStreamQuery(CUstream)
 *   CUresult cuEventRecord(CUevent, CUstream), cuEventSynchronize(CUevent), cuEventQuery(CUevent)
 *   CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream)
 *   CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream)
 *   CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream)
 *   CUresult cuMemAlloc_v2(CUdeviceptr *, size_t), cuMemFree_v2(CUdeviceptr)
 *   CUresult cuStreamCreate(CUstream *, unsigned int), cuStreamDestroy_v2(CUstream)
 */
#include <stdlib.h>

#include "fast.h"
#include "registry.h"
#include "_cgo_export.h"

uint64_t flagcxshim_go_entries_n;

/* flagcxshim_go_entries is how many times the plugin's fields entered Go:
 * for tests (a hot field that does not enter Go leaves it unchanged). */
__attribute__((visibility("default"))) uint64_t flagcxshim_go_entries(void) {
	return __atomic_load_n(&flagcxshim_go_entries_n, __ATOMIC_RELAXED);
}

typedef int (*fx_f1)(uintptr_t);
typedef int (*fx_f2)(uintptr_t, uintptr_t);
typedef int (*fx_f4)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);

/* FX_SKIP_CURRENT chooses how a call makes its device current where the
 * vendor's selection is a context (CUDA, MUSA: cuCtxSetCurrent) and the
 * core resolved its getter in CUDA's shape (cuCtxGetCurrent):
 *   1: read the thread's current context, and set it only when it is not
 *      the device's already;
 *   0: set it on every call, as flagshim's core does.
 * Both end with the device's context current on the calling thread:
 * cuCtxSetCurrent replaces the top of the thread's context stack, which
 * changes nothing when that is the context already; a getter that fails
 * falls through to the set, which answers as before. (The one difference:
 * a context destroyed behind the plugin's back is refused by the driver
 * call that follows instead of by the set.) HIP's selection, hipSetDevice
 * of an ordinal, is always made.
 * Picked by scripts/flagcx/ctx_cost.c on the GPU (scripts/flagcx-gpu.sh
 * step 5): 1 while cuCtxGetCurrent costs less than cuCtxSetCurrent of the
 * context already current. */
#define FX_SKIP_CURRENT 1

static uintptr_t fx_fn[FX_NOPS];
static uintptr_t fx_current; /* cuCtxGetCurrent(CUcontext *), or 0: none */
static int fx_op[FX_NOPS]; /* the core's operation numbers, for DirectError */
static int fx_notReady = -1;
static unsigned fx_nonBlocking; /* CU_STREAM_NON_BLOCKING's number, as the Go path's streams */
static int fx_ndev;
static uintptr_t *fx_sel; /* by device: the selector, 0 until published */
static int fx_on;         /* set (release) once the above are written */

void flagcxshim_fast_enable(const uintptr_t *fns, const int *ops, uintptr_t current, int notReady, int ndev, unsigned nonBlocking) {
	if (__atomic_load_n(&fx_on, __ATOMIC_ACQUIRE) || ndev <= 0) return;
	fx_sel = calloc((size_t)ndev, sizeof *fx_sel);
	if (fx_sel == NULL) return;
	for (int i = 0; i < FX_NOPS; i++) {
		fx_fn[i] = fns[i];
		fx_op[i] = ops[i];
	}
	fx_current = FX_SKIP_CURRENT ? current : 0;
	fx_notReady = notReady;
	fx_nonBlocking = nonBlocking;
	fx_ndev = ndev;
	__atomic_store_n(&fx_on, 1, __ATOMIC_RELEASE);
}

void flagcxshim_fast_publish(int dev, uintptr_t sel) {
	if (!__atomic_load_n(&fx_on, __ATOMIC_ACQUIRE) || dev < 0 || dev >= fx_ndev) return;
	__atomic_store_n(&fx_sel[dev], sel, __ATOMIC_RELEASE);
}

/* The selector of dev; 0: not known (or direct calls off). */
static uintptr_t fx_selector(int dev) {
	if (!__atomic_load_n(&fx_on, __ATOMIC_ACQUIRE) || dev < 0 || dev >= fx_ndev) return 0;
	return __atomic_load_n(&fx_sel[dev], __ATOMIC_ACQUIRE);
}

/* ---- the registry (registry.c: lock-free lookups) ---- */

int flagcxshim_fast_register(void *obj, uintptr_t handle, int dev, int kind) {
	return fx_reg_insert((uintptr_t)obj, handle, dev, kind);
}

void flagcxshim_fast_forget(void *obj) { fx_reg_forget((uintptr_t)obj); }

/* flagcxshim_fast_adopt: the Go path needs a Go object for a stream fast.c
 * made; its handle and device, and the entry marked (streamDestroy then
 * lets Go drop its object). 0 when obj is no such stream. */
int flagcxshim_fast_adopt(void *obj, uintptr_t *handle, int *dev) {
	struct fx_hit h;
	if (!fx_reg_mark((uintptr_t)obj, 3 | FX_OWNED, FX_STREAM | FX_OWNED, FX_WRAPPED, &h)) return 0;
	*handle = h.handle;
	*dev = h.dev;
	return 1;
}

/* fx_find copies obj's handle and device out when it is a live object of
 * kind; 0 otherwise. */
static int fx_find(const void *obj, int kind, uintptr_t *handle, int *dev) {
	struct fx_hit h;
	if (!fx_reg_find((uintptr_t)obj, 3, kind, &h)) return 0;
	*handle = h.handle;
	*dev = h.dev;
	return 1;
}

/* ---- the calls ---- */

/* fx_done maps a code: 0 success, else the Go side's error and code. */
static flagcxResult_t fx_done(const char *fn, int dev, int k, int code, int selecting) {
	if (code == 0) return flagcxSuccess;
	return (flagcxResult_t)GO(flagcxshim_go_fastFail((char *)fn, dev, fx_op[k], code, selecting));
}

/* fx_select makes sel current on the calling thread (FX_SKIP_CURRENT). */
static int fx_select(uintptr_t sel) {
	if (fx_current != 0) {
		uintptr_t cur = 0;
		if (((fx_f1)fx_current)((uintptr_t)&cur) == 0 && cur == sel) return 0;
	}
	return ((fx_f1)fx_fn[FX_SELECT])(sel);
}

/* fx_call makes dev current (sel) and calls operation k with n arguments. */
static flagcxResult_t fx_call(const char *fn, int dev, uintptr_t sel, int k, int query, int n, uintptr_t a0, uintptr_t a1,
	uintptr_t a2, uintptr_t a3) {
	int c = fx_select(sel);
	if (c != 0) return fx_done(fn, dev, k, c, 1);
	switch (n) {
	case 1: c = ((fx_f1)fx_fn[k])(a0); break;
	case 2: c = ((fx_f2)fx_fn[k])(a0, a1); break;
	default: c = ((fx_f4)fx_fn[k])(a0, a1, a2, a3); break;
	}
	if (query && c == fx_notReady) return flagcxInProgress;
	return fx_done(fn, dev, k, c, 0);
}

/* fx_obj finds a live object and its device's selector. */
static int fx_obj(const void *obj, int kind, uintptr_t *h, int *dev, uintptr_t *sel) {
	return fx_find(obj, kind, h, dev) && (*sel = fx_selector(*dev)) != 0;
}

int fx_fast_streamSynchronize(flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t h, sel;
	int dev;
	if (!fx_obj(s, FX_STREAM, &h, &dev, &sel)) return 0;
	*r = fx_call("streamSynchronize", dev, sel, FX_STREAM_SYNC, 0, 1, h, 0, 0, 0);
	return 1;
}

int fx_fast_streamQuery(flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t h, sel;
	int dev;
	if (!fx_obj(s, FX_STREAM, &h, &dev, &sel)) return 0;
	*r = fx_call("streamQuery", dev, sel, FX_STREAM_QUERY, 1, 1, h, 0, 0, 0);
	return 1;
}

/* eventRecord on a stream (the Go path records a NULL stream's on the
 * event's device's default stream), with the stream's device current. */
int fx_fast_eventRecord(flagcxEvent_t e, flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t eh, sh, sel;
	int edev, sdev;
	if (!fx_find(e, FX_EVENT, &eh, &edev) || !fx_obj(s, FX_STREAM, &sh, &sdev, &sel)) return 0;
	*r = fx_call("eventRecord", sdev, sel, FX_EVENT_RECORD, 0, 2, eh, sh, 0, 0);
	return 1;
}

int fx_fast_eventSynchronize(flagcxEvent_t e, flagcxResult_t *r) {
	uintptr_t h, sel;
	int dev;
	if (!fx_obj(e, FX_EVENT, &h, &dev, &sel)) return 0;
	*r = fx_call("eventSynchronize", dev, sel, FX_EVENT_SYNC, 1, 1, h, 0, 0, 0);
	return 1;
}

int fx_fast_eventQuery(flagcxEvent_t e, flagcxResult_t *r) {
	uintptr_t h, sel;
	int dev;
	if (!fx_obj(e, FX_EVENT, &h, &dev, &sel)) return 0;
	*r = fx_call("eventQuery", dev, sel, FX_EVENT_QUERY, 1, 1, h, 0, 0, 0);
	return 1;
}

/* deviceMemcpy on a stream (the Go path serves the synchronous copies). */
int fx_fast_memcpy(void *dst, void *src, size_t size, int kind, flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t h, sel;
	int dev;
	static const int ops[] = {FX_HTOD_ASYNC, FX_DTOH_ASYNC, FX_DTOD_ASYNC};
	if (size == 0 || dst == NULL || src == NULL || kind < 0 || kind > 2 || !fx_obj(s, FX_STREAM, &h, &dev, &sel)) return 0;
	*r = fx_call("deviceMemcpy", dev, sel, ops[kind], 0, 4, (uintptr_t)dst, (uintptr_t)src, size, h);
	return 1;
}

/* deviceMalloc of device memory without a stream, on the thread's device. */
int fx_fast_malloc(int dev, void **ptr, size_t size, int kind, flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t sel;
	if (ptr == NULL || size == 0 || kind != flagcxMemDevice || s != NULL || (sel = fx_selector(dev)) == 0) return 0;
	uint64_t p = 0; /* CUdeviceptr */
	*ptr = NULL;
	*r = fx_call("deviceMalloc", dev, sel, FX_MEM_ALLOC, 0, 2, (uintptr_t)&p, size, 0, 0);
	if (*r == flagcxSuccess) *ptr = (void *)(uintptr_t)p;
	return 1;
}

/* deviceFree of device memory without a stream, on the thread's device. */
int fx_fast_free(int dev, void *ptr, int kind, flagcxStream_t s, flagcxResult_t *r) {
	uintptr_t sel;
	if (ptr == NULL || kind != flagcxMemDevice || s != NULL || (sel = fx_selector(dev)) == 0) return 0;
	*r = fx_call("deviceFree", dev, sel, FX_MEM_FREE, 0, 1, (uintptr_t)ptr, 0, 0, 0);
	return 1;
}

/* streamCreate on the thread's device: a two-word object (the handle, then
 * 0) made here, registered FX_OWNED; the Go path makes a Go object for it
 * only if one of its fields needs it (flagcxshim_fast_adopt). */
int fx_fast_streamCreate(int dev, flagcxStream_t *out, flagcxResult_t *r) {
	uintptr_t sel;
	if (out == NULL || (sel = fx_selector(dev)) == 0) return 0;
	uintptr_t *obj = calloc(2, sizeof *obj);
	if (obj == NULL) return 0; /* the Go path says why */
	*out = NULL;
	uintptr_t h = 0;
	*r = fx_call("streamCreate", dev, sel, FX_STREAM_CREATE, 0, 2, (uintptr_t)&h, fx_nonBlocking, 0, 0);
	if (*r != flagcxSuccess) {
		free(obj);
		return 1;
	}
	obj[0] = h;
	if (!flagcxshim_fast_register(obj, h, dev, FX_STREAM | FX_OWNED)) { /* no room: undo, and let Go make it */
		((fx_f1)fx_fn[FX_STREAM_DESTROY])(h);
		free(obj);
		return 0;
	}
	*out = (flagcxStream_t)obj;
	return 1;
}

/* streamDestroy of a stream fast.c made (others: the Go path). */
int fx_fast_streamDestroy(flagcxStream_t s, flagcxResult_t *r) {
	struct fx_hit got;
	if (s == NULL || !fx_reg_take((uintptr_t)s, 3 | FX_OWNED, FX_STREAM | FX_OWNED, &got)) return 0;
	if (got.kind & FX_WRAPPED) GO(flagcxshim_go_streamForget(s)); /* drop the Go path's object */
	*(uintptr_t *)s = 0;
	*r = fx_call("streamDestroy", got.dev, fx_selector(got.dev), FX_STREAM_DESTROY, 0, 1, got.handle, 0, 0, 0);
	free(s);
	return 1;
}
