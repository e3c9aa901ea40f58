/*
 * A fake libxpurt.so.1 (Kunlunxin's XPU runtime, XRE) with the function
 * names and C signatures of xpu/runtime.h and the numbers of xpu/defs.h,
 * XRE 4.33.0 (mobius/kunlun_k200 kunlun-driver/include/xpu/), for
 * flagshim's tests. Behaviour: driver/drivertest/testdata/fake_common.h,
 * with XRE's conventions on top:
 *   - There is no init call: the first call of any function but
 *     xpu_get_driver_version initializes the runtime, once
 *     (FAKE_INIT_RESULT then answers every call).
 *   - The device is its ordinal; the current device is per thread
 *     (xpu_set_device). Calls that need one fail with XPUERR_UNINIT where
 *     the thread selected none (the real runtime falls back on device 0:
 *     the fake is stricter so that a binding that forgets to select fails).
 *   - Every function returns int: fake_common.h's CUDA codes are answered
 *     as XPUError_t (1 -> XPUERR_INVALID_PARAM 707, 2 -> XPUERR_NOMEM 705,
 *     3 and 201 -> XPUERR_UNINIT 702, 101 -> XPUERR_INVALID_DEVICE 701, 400
 *     -> 707, 500 -> XPUERR_NOXPUFUNC 708, 700 and 719 ->
 *     XPUERR_KEXCEPTION 714, and the init cases' 35, 803 and 804 ->
 *     XPUERR_VERSION 704, 100 -> XPUERR_NODEV 703, 999 -> XPUERR_UNEXPECT
 *     800); any other code (FAKE_INIT_RESULT=705, say) as it is. FAKE_XPU_NEGATIVE=1 answers each failure negated, as the
 *     XRE API reference says the runtime does.
 *   - xpu_device_get_attr writes a uint64_t: XPUATTR_PCI_ADDRESS (bus
 *     0x18+i), XPUATTR_DEVID, XPUATTR_MODEL (FAKE_XPU_MODEL, default 3:
 *     R300), XPUATTR_MEM_MAIN_CAPACITY, XPUATTR_NUM_CLUSTER
 *     (FAKE_SM_COUNT); others XPUERR_INVALID_PARAM.
 *   - xpu_malloc's kind must be XPU_MEM_MAIN (0), xpu_memcpy's kind is
 *     XPU_DEVICE_TO_HOST 0 or XPU_HOST_TO_DEVICE 1 (XPU_DEVICE_TO_DEVICE is
 *     refused), xpu_host_alloc's flags must be 0: a binding that passes
 *     CUDA's numbers fails.
 *   - xpu_wait(NULL) waits for the default stream only (the fake runs
 *     default-stream work at once), not for the streams the caller made.
 *   - The version is two numbers: FAKE_DRIVER_VERSION (default 433) is
 *     major*100 + minor.
 *   - No module loader, no error-name or error-string function (xpu_strerror
 *     is static inline in defs.h), no event timing, no asynchronous copy.
 * Variables: FAKE_XPU_<NAME> or FAKE_<NAME> (fake_common.h). Build
 * variants:
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks xpu_wait (the required synchronize)
 *   -DFAKE_NO_MODULES          lacks every optional memory, stream, event and pinned-memory symbol
 *   -DFAKE_NO_STREAMS          lacks the stream, event and pinned-memory symbols
 * (-DFAKE_NO_PCI_BUS_ID and -DFAKE_NO_LOAD_DATA_EX change nothing: the bus
 * id is an attribute, and there is no module loader.)
 */
#define FAKE_ERR_PREFIX "XPU_"
#define FAKE_DEFAULT_VERSION 433
#include "fake_common.h"
#include <stdbool.h>

typedef void *XPUStream;
typedef void *XPUEvent;
typedef enum {
	XPUATTR_PCI_ADDRESS = 0, XPUATTR_DEVID = 1, XPUATTR_BOARDID = 2, XPUATTR_ONBOARDID = 3,
	XPUATTR_MODEL = 4, XPUATTR_MEM_MAIN_CAPACITY = 5, XPUATTR_MEM_L3_CAPACITY = 6,
	XPUATTR_NUM_CLUSTER = 7,
} XPUDeviceAttr;
typedef enum { XPU_MEM_MAIN = 0, XPU_MEM_L3 = 1 } XPUMemoryKind;
typedef enum { XPU_DEVICE_TO_HOST = 0, XPU_HOST_TO_DEVICE = 1, XPU_DEVICE_TO_DEVICE = 2 } XPUMemcpyKind;
enum { XPU_SUCCESS = 0, XPUERR_INVALID_DEVICE = 701, XPUERR_UNINIT = 702, XPUERR_NODEV = 703,
	XPUERR_VERSION = 704, XPUERR_NOMEM = 705, XPUERR_INVALID_PARAM = 707, XPUERR_NOXPUFUNC = 708,
	XPUERR_KEXCEPTION = 714, XPUERR_UNEXPECT = 800 };

#define EXPORT __attribute__((visibility("default")))

/* x answers fake_common.h's code c as XRE would. */
static int x(int c) {
	switch (c) {
	case 0: return 0;
	case 1: case 400: c = XPUERR_INVALID_PARAM; break;
	case 2: c = XPUERR_NOMEM; break;
	case 3: case 201: c = XPUERR_UNINIT; break;
	case 101: c = XPUERR_INVALID_DEVICE; break;
	case 500: c = XPUERR_NOXPUFUNC; break;
	case 700: case 719: c = XPUERR_KEXCEPTION; break;
	/* The init cases' CUDA codes (FAKE_INIT_RESULT), as the conformance
	 * kit passes them: their meanings in XRE. */
	case 35: case 803: case 804: c = XPUERR_VERSION; break;
	case 100: c = XPUERR_NODEV; break;
	case 999: c = XPUERR_UNEXPECT; break;
	}
	return fake_env_int("NEGATIVE", 0) ? -c : c;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_result;
static void lazy_init(void) { init_result = fake_init(0); }

/* INIT initializes the runtime on the first call and answers its failure. */
#define INIT() do { pthread_once(&once, lazy_init); if (init_result) return x(init_result); } while (0)

EXPORT int xpu_get_driver_version(uint32_t *major, uint32_t *minor) {
	int v = 0;
	int r = fake_driver_get_version(&v);
	if (r) return x(r);
	if (!major || !minor) return x(1);
	*major = (uint32_t)(v / 100);
	*minor = (uint32_t)(v % 100);
	return 0;
}
EXPORT int xpu_get_runtime_version(uint32_t *major, uint32_t *minor) { return xpu_get_driver_version(major, minor); }
EXPORT int xpu_device_count(int *dev_count) { INIT(); return x(fake_device_get_count(dev_count)); }
EXPORT int xpu_set_device(int devid) { INIT(); return x(fake_set_device(devid)); }
EXPORT int xpu_current_device(int *devid) { INIT(); return x(fake_get_device(devid)); }

EXPORT int xpu_device_get_attr(uint64_t *v, XPUDeviceAttr attr, int devid) {
	INIT();
	if (devid < 0 || devid >= fake.count) return x(101);
	if (!v) return x(1);
	switch (attr) {
	case XPUATTR_PCI_ADDRESS: *v = (uint64_t)(0x18 + devid) << 8; return 0; /* domain 0, slot 0, function 0 */
	case XPUATTR_DEVID: *v = (uint64_t)devid; return 0;
	case XPUATTR_MODEL: *v = (uint64_t)fake_env_int("XPU_MODEL", 3); return 0;
	case XPUATTR_MEM_MAIN_CAPACITY: *v = fake.total_mem; return 0;
	case XPUATTR_NUM_CLUSTER: *v = (uint64_t)fake.sm; return 0;
	default: return x(1);
	}
}

#ifndef FAKE_NO_CTX_SYNCHRONIZE
/* xpu_wait: NULL is the default stream, whose work the fake ran already. */
EXPORT int xpu_wait(XPUStream stream) {
	INIT();
	if (stream) return x(fake_stream_synchronize(stream));
	if (!fake_current) return x(201);
	return x(fake.sync_result);
}
#endif

#ifndef FAKE_NO_MODULES
EXPORT int xpu_malloc(void **pdevptr, uint64_t sz, XPUMemoryKind kind) {
	INIT();
	if (kind != XPU_MEM_MAIN) return x(1);
	unsigned long long p = 0;
	int r = fake_mem_alloc(pdevptr ? &p : NULL, (size_t)sz);
	if (r == 0) *pdevptr = (void *)(uintptr_t)p;
	return x(r);
}
EXPORT int xpu_free(void *devptr) { INIT(); return x(fake_mem_free((uintptr_t)devptr)); }
EXPORT int xpu_memcpy(void *dst, const void *src, uint64_t sz, XPUMemcpyKind kind) {
	INIT();
	switch (kind) {
	case XPU_HOST_TO_DEVICE: return x(fake_memcpy_htod((uintptr_t)dst, src, (size_t)sz));
	case XPU_DEVICE_TO_HOST: return x(fake_memcpy_dtoh(dst, (uintptr_t)src, (size_t)sz));
	default: return x(1);
	}
}

#ifndef FAKE_NO_STREAMS
EXPORT int xpu_host_alloc(void **ptr, uint64_t sz, unsigned int flags) {
	INIT();
	if (flags != 0) return x(1); /* "must be 0" */
	return x(fake_host_alloc(ptr, (size_t)sz, flags));
}
EXPORT int xpu_host_free(void *ptr) { INIT(); return x(fake_host_free(ptr)); }
EXPORT int xpu_stream_create(XPUStream *pstream) { INIT(); return x(fake_stream_create(pstream, 0)); }
EXPORT int xpu_stream_destroy(XPUStream stream) { INIT(); return x(fake_stream_destroy(stream)); }
EXPORT int xpu_stream_wait_event(XPUStream stream, XPUEvent event) { INIT(); return x(fake_stream_wait_event(stream, event, 0)); }
EXPORT int xpu_event_create(XPUEvent *pevent) { INIT(); return x(fake_event_create(pevent, 0)); }
EXPORT int xpu_event_record(XPUEvent event, XPUStream stream) { INIT(); return x(fake_event_record(event, stream)); }
EXPORT int xpu_event_wait(XPUEvent event) { INIT(); return x(fake_event_synchronize(event)); }
EXPORT int xpu_event_destroy(XPUEvent event) { INIT(); return x(fake_event_destroy(event)); }
#endif
#endif
