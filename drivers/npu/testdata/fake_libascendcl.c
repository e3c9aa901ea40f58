/*
 * A fake libascendcl.so (Huawei CANN's AscendCL runtime) with the real
 * function names and C signatures of include/external/acl/acl_rt.h and
 * acl_base_rt.h (hicann/runtime tag v8.5.0; aclrtDeviceGetPCIBusId from
 * master), for flagshim's tests. Behaviour: driver/drivertest/testdata/
 * fake_common.h, with AscendCL's conventions on top:
 *   - Result codes are aclError's: every code of fake_common.h (CUDA's
 *     numbers) is translated by acl() below (1 -> ACL_ERROR_INVALID_PARAM
 *     100000, 2 -> ACL_ERROR_RT_MEMORY_ALLOCATION 207001, ...); a code it
 *     does not list passes unchanged, so FAKE_ACL_INIT_RESULT=207004 is
 *     returned as it is. drivers/npu/fake_test.go holds the same table.
 *   - aclInit(NULL) only: a configuration path is ACL_ERROR_INVALID_PARAM;
 *     a second aclInit returns ACL_ERROR_REPEAT_INITIALIZE (100002), as the
 *     real one does (acl.cpp aclInitImpl).
 *   - No device handle: every call takes the device's ordinal (int32_t or
 *     uint32_t deviceId).
 *   - aclrtGetSocName names the process's SoC: the first device name.
 *   - aclrtGetDeviceInfo answers ACL_DEV_ATTR_AICORE_CORE_NUM (101) and
 *     ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE (301) only, as int64_t.
 *   - aclrtSetDevice selects the device on the calling thread and counts a
 *     reference per call (fake_acl_set_device_calls(ordinal) tells how many:
 *     the real runtime's refcount grows the same way); the context it makes
 *     current is the device's one context. aclrtGetCurrentContext with none
 *     current is ACL_ERROR_RT_CONTEXT_NULL (107002); aclrtSetCurrentContext
 *     (NULL) is ACL_ERROR_INVALID_PARAM, as in the real ACL layer.
 *   - aclrtGetMemInfo takes ACL_HBM_MEM (1) only; aclrtMalloc the policy
 *     ACL_MEM_MALLOC_HUGE_FIRST (0) only; aclrtMemcpy(Async) the kinds
 *     HOST_TO_DEVICE (1) and DEVICE_TO_HOST (2), with destMax >= count.
 *   - aclsysGetVersionNum answers the package "runtime" only.
 * Variables: FAKE_ACL_<NAME> or FAKE_<NAME> (fake_common.h). FAKE_STUB=1
 * makes every call return ACL_ERROR_COMPILING_STUB_MODE (100039), as the
 * toolkit's stub library does. This fake's own:
 *   FAKE_ACL_VERSION_RESULT=N  what aclsysGetVersionNum returns (no version.info, say)
 *   FAKE_ACL_UUID_RESULT=N     what aclrtDeviceGetUuid returns (207000: a chip that cannot tell)
 *   FAKE_ACL_SOC_NULL=1        aclrtGetSocName returns NULL
 * Build variants:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional aclrtDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required aclrtSynchronizeDevice
 *   -DFAKE_NO_MODULES          lacks device memory, copies, streams and events
 *   -DFAKE_NO_STREAMS          lacks streams, events, pinned memory and async copies
 *   -DFAKE_NO_DEVICE_INFO      lacks aclrtGetDeviceInfo (a CANN older than 8.5)
 */
#define FAKE_ERR_PREFIX "ACL_"
#define FAKE_DEFAULT_VERSION 80500000 /* aclsysGetVersionNum of 8.5.0 */
#include "fake_common.h"

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST,
	ACL_MEMCPY_HOST_TO_DEVICE,
	ACL_MEMCPY_DEVICE_TO_HOST,
} aclrtMemcpyKind;
typedef enum aclrtMemMallocPolicy { ACL_MEM_MALLOC_HUGE_FIRST } aclrtMemMallocPolicy;
typedef enum aclrtMemAttr { ACL_DDR_MEM, ACL_HBM_MEM } aclrtMemAttr;
typedef enum {
	ACL_DEV_ATTR_AICORE_CORE_NUM = 101,
	ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
} aclrtDevAttr;
typedef struct aclrtUuid { char bytes[16]; } aclrtUuid;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_RT_CONTEXT_NULL 107002

#define EXPORT __attribute__((visibility("default")))

/* acl is the aclError of a fake_common.h code. */
static aclError acl(int c) {
	switch (c) {
	case 1: return 100000;   /* ACL_ERROR_INVALID_PARAM */
	case 2: return 207001;   /* ACL_ERROR_RT_MEMORY_ALLOCATION */
	case 3: return 100001;   /* ACL_ERROR_UNINITIALIZE */
	case 34: return 100039;  /* ACL_ERROR_COMPILING_STUB_MODE */
	case 100: return 207004; /* ACL_ERROR_RT_NO_DEVICE */
	case 101: return 107001; /* ACL_ERROR_RT_INVALID_DEVICEID */
	case 201: return 107002; /* ACL_ERROR_RT_CONTEXT_NULL */
	case 400: return 107017; /* ACL_ERROR_RT_INVALID_HANDLE */
	case 600: return 507006; /* ACL_ERROR_RT_EVENT_NOT_COMPLETE */
	case 700: return 507015; /* ACL_ERROR_RT_AICORE_EXCEPTION */
	case 999: return 500000; /* ACL_ERROR_INTERNAL_ERROR */
	}
	return c;
}

/* handle is the shared fake's handle of a device ordinal. */
static int handle(long ordinal) { return (int)ordinal + FAKE_HANDLE_BASE; }

static int acl_inits;
static int set_device_calls[FAKE_MAX_DEVICES];

/* fake_acl_set_device_calls is how many times aclrtSetDevice(ordinal) succeeded. */
FAKE_EXPORT int fake_acl_set_device_calls(int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_MAX_DEVICES) return -1;
	return __atomic_load_n(&set_device_calls[ordinal], __ATOMIC_SEQ_CST);
}

EXPORT aclError aclInit(const char *configPath) {
	if (__atomic_load_n(&acl_inits, __ATOMIC_SEQ_CST) > 0 && !fake.stub) {
		__atomic_add_fetch(&acl_inits, 1, __ATOMIC_SEQ_CST);
		return ACL_ERROR_REPEAT_INITIALIZE;
	}
	if (configPath) return ACL_ERROR_INVALID_PARAM;
	int r = acl(fake_init(0));
	if (r == ACL_SUCCESS) __atomic_add_fetch(&acl_inits, 1, __ATOMIC_SEQ_CST);
	return r;
}

EXPORT aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum) {
	if (fake.stub) return acl(34);
	if (!pkgName || !versionNum) return ACL_ERROR_INVALID_PARAM;
	if (strcmp(pkgName, "runtime") != 0) return ACL_ERROR_INVALID_FILE;
	int forced = fake_env_int("VERSION_RESULT", 0);
	if (forced) return forced;
	int v = 0;
	int r = fake_driver_get_version(&v);
	if (r == 0) *versionNum = v;
	return acl(r);
}

EXPORT aclError aclrtGetDeviceCount(uint32_t *count) {
	int n = 0;
	int r = fake_device_get_count(count ? &n : NULL);
	if (r == 0) *count = (uint32_t)n;
	return acl(r);
}

EXPORT const char *aclrtGetSocName(void) {
	if (fake.stub || !fake.initialized || fake_env_int("SOC_NULL", 0)) return NULL;
	return fake.names[0];
}

#ifndef FAKE_NO_DEVICE_INFO
EXPORT aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value) {
	if (fake.stub) return acl(34);
	if (!fake.initialized) return acl(3);
	if (!value) return ACL_ERROR_INVALID_PARAM;
	switch (attr) {
	case ACL_DEV_ATTR_AICORE_CORE_NUM: {
		int v = 0;
		int r = fake_device_get_attribute(&v, 16, handle(deviceId));
		if (r == 0) *value = v;
		return acl(r);
	}
	case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: {
		unsigned long long b = 0;
		int r = fake_device_total_mem(&b, handle(deviceId));
		if (r == 0) *value = (int64_t)b;
		return acl(r);
	}
	}
	return ACL_ERROR_INVALID_PARAM;
}
#endif

EXPORT aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid) {
	if (!uuid) return ACL_ERROR_INVALID_PARAM;
	int forced = fake_env_int("UUID_RESULT", 0);
	if (forced && fake.initialized && !fake.stub) return forced;
	return acl(fake_device_get_uuid((unsigned char *)uuid->bytes, handle(deviceId)));
}

#ifndef FAKE_NO_PCI_BUS_ID
/* "domain:bus:device.function", e.g. 0000:3d:00.0 (acl_rt.h, master). */
EXPORT aclError aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId, int32_t len) {
	char id[64];
	int r = fake_device_get_pci_bus_id(id, sizeof id, handle(deviceId));
	if (r) return acl(r);
	if (!pciBusId || len < 13) return ACL_ERROR_INVALID_PARAM;
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) return ACL_ERROR_INVALID_PARAM;
	snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return ACL_SUCCESS;
}
#endif

EXPORT aclError aclrtSetDevice(int32_t deviceId) {
	int r = acl(fake_set_device(deviceId));
	if (r == ACL_SUCCESS) __atomic_add_fetch(&set_device_calls[deviceId], 1, __ATOMIC_SEQ_CST);
	return r;
}

EXPORT aclError aclrtGetDevice(int32_t *deviceId) {
	if (fake.stub) return acl(34);
	if (!fake_current) return ACL_ERROR_RT_CONTEXT_NULL;
	return acl(fake_get_device(deviceId));
}

EXPORT aclError aclrtGetCurrentContext(aclrtContext *context) {
	if (fake.stub) return acl(34);
	if (!context) return ACL_ERROR_INVALID_PARAM;
	if (!fake_current) return ACL_ERROR_RT_CONTEXT_NULL;
	return acl(fake_ctx_get_current(context));
}

EXPORT aclError aclrtSetCurrentContext(aclrtContext context) {
	if (fake.stub) return acl(34);
	if (!context) return ACL_ERROR_INVALID_PARAM;
	return acl(fake_ctx_set_current(context));
}

#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT aclError aclrtSynchronizeDevice(void) { return acl(fake_ctx_synchronize()); }
#endif

EXPORT aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total) {
	if (attr != ACL_HBM_MEM && !fake.stub) return ACL_ERROR_INVALID_PARAM;
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(free ? &f : NULL, total ? &t : NULL);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return acl(r);
}

#ifndef FAKE_NO_MODULES
EXPORT aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
	if (policy != ACL_MEM_MALLOC_HUGE_FIRST && !fake.stub) return ACL_ERROR_INVALID_PARAM;
	unsigned long long p = 0;
	int r = fake_mem_alloc(devPtr ? &p : NULL, size);
	if (r == 0) *devPtr = (void *)(uintptr_t)p;
	return acl(r);
}
EXPORT aclError aclrtFree(void *devPtr) { return acl(fake_mem_free((uintptr_t)devPtr)); }
EXPORT aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
	if (fake.stub) return acl(34);
	if (destMax < count) return ACL_ERROR_INVALID_PARAM;
	switch (kind) {
	case ACL_MEMCPY_HOST_TO_DEVICE: return acl(fake_memcpy_htod((uintptr_t)dst, src, count));
	case ACL_MEMCPY_DEVICE_TO_HOST: return acl(fake_memcpy_dtoh(dst, (uintptr_t)src, count));
	default: return ACL_ERROR_INVALID_PARAM;
	}
}

#ifndef FAKE_NO_STREAMS
EXPORT aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
		aclrtStream stream) {
	if (fake.stub) return acl(34);
	if (destMax < count) return ACL_ERROR_INVALID_PARAM;
	switch (kind) {
	case ACL_MEMCPY_HOST_TO_DEVICE: return acl(fake_memcpy_async(OP_HTOD, (uintptr_t)dst, (uintptr_t)src, count, stream));
	case ACL_MEMCPY_DEVICE_TO_HOST: return acl(fake_memcpy_async(OP_DTOH, (uintptr_t)dst, (uintptr_t)src, count, stream));
	default: return ACL_ERROR_INVALID_PARAM;
	}
}
EXPORT aclError aclrtMallocHost(void **hostPtr, size_t size) { return acl(fake_host_alloc(hostPtr, size, 0)); }
EXPORT aclError aclrtFreeHost(void *hostPtr) { return acl(fake_host_free(hostPtr)); }
EXPORT aclError aclrtCreateStream(aclrtStream *stream) { return acl(fake_stream_create(stream, 0)); }
EXPORT aclError aclrtSynchronizeStream(aclrtStream stream) { return acl(fake_stream_synchronize(stream)); }
EXPORT aclError aclrtDestroyStream(aclrtStream stream) { return acl(fake_stream_destroy(stream)); }
EXPORT aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) { return acl(fake_stream_wait_event(stream, event, 0)); }
EXPORT aclError aclrtCreateEvent(aclrtEvent *event) { return acl(fake_event_create(event, 0)); }
EXPORT aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) { return acl(fake_event_record(event, stream)); }
EXPORT aclError aclrtSynchronizeEvent(aclrtEvent event) { return acl(fake_event_synchronize(event)); }
EXPORT aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
	return acl(fake_event_elapsed(ms, startEvent, endEvent));
}
EXPORT aclError aclrtDestroyEvent(aclrtEvent event) { return acl(fake_event_destroy(event)); }
#endif
#endif
