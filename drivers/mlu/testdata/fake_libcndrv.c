/*
 * A fake libcndrv.so (Cambricon CNDrv) with the real function names and C
 * signatures of cn_api.h (CNDrv 2.15.5), for flagshim's tests. Behaviour:
 * driver/drivertest/testdata/fake_common.h, with CNDrv's own conventions on
 * top:
 *   - CNresult codes: fake_common.h answers CUDA's numbers; every function
 *     here translates them to CNresult's (cn(): 1 -> CN_ERROR_INVALID_VALUE
 *     100006, 2 -> CN_MEMORY_ERROR_OUT_OF_MEMORY 100100, 100 ->
 *     CN_ERROR_NO_DEVICE 100004, 700 -> CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS
 *     100131, ...). A number with no CUDA meaning passes unchanged, so the
 *     result knobs take CUDA's numbers (FAKE_SYNC_RESULT=700) or CNresult's
 *     (FAKE_INIT_RESULT=100009).
 *   - CNdev is 64 bits: a handle is 0xCABC << 32 | (ordinal + 1000), and a
 *     call given a handle without those high bits (an int-sized handle, an
 *     ordinal) fails with CN_ERROR_INVALID_DEVICE.
 *   - cnDriverGetVersion writes three ints: FAKE_DRIVER_VERSION (or
 *     FAKE_CN_DRIVER_VERSION) is CN_VERSION-encoded, major*100000 +
 *     minor*1000 + patch (default 215005, 2.15.5). With
 *     FAKE_CN_VERSION_NEEDS_INIT=1 it returns CN_ERROR_NOT_INITIALIZED before
 *     cnInit (cn_api.h lists that result for it).
 *   - cnDeviceGetAttribute answers CNDrv's numbers only: 0x01 and 0x02
 *     (compute capability), 0x205 (clusters); anything else, CUDA's 16, 75,
 *     76 included, is CN_ERROR_INVALID_VALUE.
 *   - cnGetErrorName and cnGetErrorString succeed for a code they do not
 *     know with "This error code is not in the scope of the CNresult
 *     enumeration", as cn_api.h documents.
 *   - cnDeviceGetPCIBusId writes "0000:18:00.0" (domain:bus:device.function).
 *   - No primary context: cnSharedContextAcquire/Release; contexts are
 *     current per thread (cnCtxSetCurrent), and every memory, module and
 *     queue call fails with CN_CONTEXT_ERROR_INVALID without one.
 *   - Module calls take their output last (cnModuleLoadFatBinary,
 *     cnModuleGetKernel, cnModuleGetSymbol); images are fake_common.h's
 *     text modules. cnMallocHost has no flags.
 *   - There is no cnInvokeKernel: the binding does not bind launches.
 * Variables: FAKE_CN_<NAME> or FAKE_<NAME> (fake_common.h). FAKE_STUB has no
 * CNDrv meaning. Build variants:
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional cnDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required cnCtxSync
 *   -DFAKE_NO_MODULES          lacks every optional module, memory and queue symbol
 *   -DFAKE_NO_STREAMS          lacks the queue, notifier and pinned-memory symbols
 *   -DFAKE_NO_WAIT_WITH_FLAGS  lacks cnQueueWaitNotifierWithFlags (older CNDrv)
 *   -DFAKE_NO_ASYNC_V2         lacks cnMemcpyHtoDAsync_V2 and cnMemcpyDtoHAsync_V2
 *   -DFAKE_NO_UUID_STR         lacks cnDeviceGetUuidStr (older CNDrv: cnDeviceGetUuid only)
 * cnDeviceGetUuidStr writes the 16 bytes of cnDeviceGetUuid as
 * xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, or FAKE_CN_UUID_STR when set (one
 * string for every device: a malformed one, for the tests).
 * (CUDA's -DFAKE_NO_LOAD_DATA_EX, -DFAKE_NO_TOTALMEM_V2 and
 * -DFAKE_NO_PARAM_INFO change nothing: CNDrv has none of those functions.)
 */
#define FAKE_ERR_PREFIX "CN_"
#define FAKE_DEFAULT_VERSION 215005 /* CN_VERSION of CNDrv 2.15.5 */
#include "fake_common.h"

typedef uint64_t cn_uint64_t;
typedef cn_uint64_t CNdev;
typedef cn_uint64_t CNaddr;
typedef struct CNcontext_st *CNcontext;
typedef struct CNqueue_st *CNqueue;
typedef struct CNnotifier_st *CNnotifier;
typedef struct CNmodule_st *CNmodule;
typedef struct CNkernel_st *CNkernel;
typedef struct CNuuid_st { char uuid[16]; } CNuuid;
typedef enum {
	CN_SUCCESS = 0,
	CN_ERROR_NOT_READY = 1,
	CN_ERROR_NOT_INITIALIZED = 100002,
	CN_ERROR_NO_DEVICE = 100004,
	CN_ERROR_INVALID_DEVICE = 100005,
	CN_ERROR_INVALID_VALUE = 100006,
	CN_ERROR_SYSTEM_DRIVER_MISMATCH = 100009,
	CN_ERROR_INVALID_HANDLE = 100014,
	CN_MEMORY_ERROR_OUT_OF_MEMORY = 100100,
	CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS = 100131,
	CN_INVOKE_ERROR = 100200,
	CN_CONTEXT_ERROR_INVALID = 100201,
	CN_ERROR_INVALID_FATBIN = 100300,
	CN_ERROR_NOT_FOUND = 100301,
	CN_FATBIN_INVALID_IMAGE = 101313,
	CN_ERROR_UNKNOWN = 200000,
} CNresult;
typedef enum CNdevice_attribute_enum {
	CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 0x01,
	CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 0x02,
	CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT = 0x205,
} CNdevice_attribute;

#define EXPORT __attribute__((visibility("default")))

/* The CUDA numbers fake_common.h answers and the CNresult each stands for. */
static const struct { int cu, cn; } codes[] = {
	{1, CN_ERROR_INVALID_VALUE}, {2, CN_MEMORY_ERROR_OUT_OF_MEMORY}, {3, CN_ERROR_NOT_INITIALIZED},
	{100, CN_ERROR_NO_DEVICE}, {101, CN_ERROR_INVALID_DEVICE}, {200, CN_FATBIN_INVALID_IMAGE},
	{201, CN_CONTEXT_ERROR_INVALID}, {218, CN_ERROR_INVALID_FATBIN}, {400, CN_ERROR_INVALID_HANDLE},
	{500, CN_ERROR_NOT_FOUND}, {600, CN_ERROR_NOT_READY}, {700, CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS},
	{719, CN_INVOKE_ERROR}, {803, CN_ERROR_SYSTEM_DRIVER_MISMATCH}, {999, CN_ERROR_UNKNOWN},
};

static CNresult cn(int r) {
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (codes[i].cu == r) return (CNresult)codes[i].cn;
	return (CNresult)r;
}

/* cu is the CUDA number of a CNresult the fake gives, -1 for others. */
static int cu(CNresult r) {
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (codes[i].cn == (int)r) return codes[i].cu;
	return -1;
}

#define HANDLE_HIGH 0xCABCULL

/* h is fake_common.h's int handle of a CNdev; -1 (invalid) for a handle
 * without the high bits. */
static int h(CNdev dev) {
	if ((dev >> 32) != HANDLE_HIGH) return -1;
	return (int)(dev & 0xffffffffULL);
}

static const char *const unknown = "This error code is not in the scope of the CNresult enumeration";

EXPORT CNresult cnInit(unsigned int flags) { return cn(fake_init(flags)); }
EXPORT CNresult cnDriverGetVersion(int *major, int *minor, int *patch) {
	if (!major || !minor || !patch) return CN_ERROR_INVALID_VALUE;
	if (fake_env_int("VERSION_NEEDS_INIT", 0) && !fake.initialized) return CN_ERROR_NOT_INITIALIZED;
	int v = 0;
	int r = fake_driver_get_version(&v);
	if (r) return cn(r);
	*major = v / 100000;
	*minor = v / 1000 % 100;
	*patch = v % 1000;
	return CN_SUCCESS;
}
EXPORT CNresult cnDeviceGetCount(int *pcount) { return cn(fake_device_get_count(pcount)); }
EXPORT CNresult cnDeviceGet(CNdev *pdev, int ordinal) {
	int d = 0;
	int r = fake_device_get(pdev ? &d : NULL, ordinal);
	if (r == 0) *pdev = HANDLE_HIGH << 32 | (CNdev)(unsigned)d;
	return cn(r);
}
EXPORT CNresult cnDeviceGetName(char *name, unsigned int len, CNdev dev) { return cn(fake_device_get_name(name, (int)len, h(dev))); }
EXPORT CNresult cnDeviceTotalMem(cn_uint64_t *pbytes, CNdev dev) {
	unsigned long long b = 0;
	int r = fake_device_total_mem(pbytes ? &b : NULL, h(dev));
	if (r == 0) *pbytes = b;
	return cn(r);
}
EXPORT CNresult cnDeviceGetAttribute(int *pi, CNdevice_attribute attrib, CNdev dev) {
	int attr = -1; /* fake_common.h answers CUDA's numbers */
	switch (attrib) {
	case CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT: attr = 16; break;
	case CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: attr = 75; break;
	case CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: attr = 76; break;
	}
	return cn(fake_device_get_attribute(pi, attr, h(dev)));
}
EXPORT CNresult cnDeviceGetUuid(CNuuid *uuid, CNdev dev) {
	if (!uuid) return CN_ERROR_INVALID_VALUE;
	return cn(fake_device_get_uuid((unsigned char *)uuid->uuid, h(dev)));
}
#ifndef FAKE_NO_UUID_STR
/* CNresult cnDeviceGetUuidStr(char *uuid_str, int len, CNdev dev): cn_api.h */
EXPORT CNresult cnDeviceGetUuidStr(char *uuid_str, int len, CNdev dev) {
	unsigned char u[16];
	int r = fake_device_get_uuid(u, h(dev));
	if (r) return cn(r);
	if (!uuid_str || len < 37) return CN_ERROR_INVALID_VALUE;
	const char *forced = getenv("FAKE_CN_UUID_STR");
	if (forced && *forced) {
		snprintf(uuid_str, (size_t)len, "%s", forced);
		return CN_SUCCESS;
	}
	snprintf(uuid_str, (size_t)len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return CN_SUCCESS;
}
#endif
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT CNresult cnDeviceGetPCIBusId(char *pciBusId, int len, CNdev dev) {
	char id[64];
	int r = fake_device_get_pci_bus_id(id, sizeof id, h(dev));
	if (r) return cn(r);
	if (!pciBusId || len < 13) return CN_ERROR_INVALID_VALUE;
	unsigned dom = 0, bus = 0, slot = 0, fn = 0;
	if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4) return CN_ERROR_INVALID_VALUE;
	snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return CN_SUCCESS;
}
#endif
EXPORT CNresult cnGetErrorName(CNresult error, const char **pStr) {
	static const struct { CNresult code; const char *name; } names[] = {
		{CN_SUCCESS, "CN_SUCCESS"}, {CN_ERROR_NOT_READY, "CN_ERROR_NOT_READY"},
		{CN_ERROR_NOT_INITIALIZED, "CN_ERROR_NOT_INITIALIZED"}, {CN_ERROR_NO_DEVICE, "CN_ERROR_NO_DEVICE"},
		{CN_ERROR_INVALID_DEVICE, "CN_ERROR_INVALID_DEVICE"}, {CN_ERROR_INVALID_VALUE, "CN_ERROR_INVALID_VALUE"},
		{CN_ERROR_SYSTEM_DRIVER_MISMATCH, "CN_ERROR_SYSTEM_DRIVER_MISMATCH"}, {CN_ERROR_INVALID_HANDLE, "CN_ERROR_INVALID_HANDLE"},
		{CN_MEMORY_ERROR_OUT_OF_MEMORY, "CN_MEMORY_ERROR_OUT_OF_MEMORY"},
		{CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS, "CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS"}, {CN_INVOKE_ERROR, "CN_INVOKE_ERROR"},
		{CN_CONTEXT_ERROR_INVALID, "CN_CONTEXT_ERROR_INVALID"}, {CN_ERROR_INVALID_FATBIN, "CN_ERROR_INVALID_FATBIN"},
		{CN_ERROR_NOT_FOUND, "CN_ERROR_NOT_FOUND"}, {CN_FATBIN_INVALID_IMAGE, "CN_FATBIN_INVALID_IMAGE"},
		{CN_ERROR_UNKNOWN, "CN_ERROR_UNKNOWN"},
	};
	if (!pStr) return CN_ERROR_INVALID_VALUE;
	*pStr = unknown;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].code == error) *pStr = names[i].name;
	return CN_SUCCESS;
}
EXPORT CNresult cnGetErrorString(CNresult error, const char **pStr) {
	if (!pStr) return CN_ERROR_INVALID_VALUE;
	const char *s = NULL;
	if (error == CN_ERROR_NO_DEVICE) *pStr = "fake: MLU driver cannot detect any usable MLU device";
	else if (cu(error) >= 0 && fake_error_string(cu(error), &s) == 0 && s) *pStr = s;
	else *pStr = unknown;
	return CN_SUCCESS;
}

EXPORT CNresult cnSharedContextAcquire(CNcontext *pctx, CNdev dev) { return cn(fake_primary_ctx_retain((void **)pctx, h(dev))); }
EXPORT CNresult cnSharedContextRelease(CNdev dev) { return cn(fake_primary_ctx_release(h(dev))); }
EXPORT CNresult cnCtxSetCurrent(CNcontext context) { return cn(fake_ctx_set_current(context)); }
EXPORT CNresult cnCtxGetCurrent(CNcontext *pcontext) { return cn(fake_ctx_get_current((void **)pcontext)); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT CNresult cnCtxSync(void) { return cn(fake_ctx_synchronize()); }
#endif
EXPORT CNresult cnMemGetInfo(cn_uint64_t *pfreeBytes, cn_uint64_t *ptotalBytes) {
	unsigned long long f = 0, t = 0;
	int r = fake_mem_get_info(pfreeBytes ? &f : NULL, ptotalBytes ? &t : NULL);
	if (r == 0) { *pfreeBytes = f; *ptotalBytes = t; }
	return cn(r);
}

#ifndef FAKE_NO_MODULES
EXPORT CNresult cnMalloc(CNaddr *pmluAddr, cn_uint64_t bytes) {
	unsigned long long p = 0;
	int r = fake_mem_alloc(pmluAddr ? &p : NULL, (size_t)bytes);
	if (r == 0) *pmluAddr = p;
	return cn(r);
}
EXPORT CNresult cnFree(CNaddr mluAddr) { return cn(fake_mem_free(mluAddr)); }
EXPORT CNresult cnMemcpyHtoD(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes) { return cn(fake_memcpy_htod(dstAddr, srcAddr, (size_t)bytes)); }
EXPORT CNresult cnMemcpyDtoH(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes) { return cn(fake_memcpy_dtoh(dstAddr, srcAddr, (size_t)bytes)); }
EXPORT CNresult cnModuleLoadFatBinary(const void *fatBin, CNmodule *phmod) { return cn(fake_module_load((void **)phmod, fatBin, NULL, 0)); }
EXPORT CNresult cnModuleUnload(CNmodule hmod) { return cn(fake_module_unload(hmod)); }
EXPORT CNresult cnModuleGetKernel(CNmodule hmod, const char *name, CNkernel *phkernel) {
	return cn(fake_module_get_function((void **)phkernel, hmod, name));
}
EXPORT CNresult cnModuleGetSymbol(CNmodule hmod, const char *name, CNaddr *pdptr, cn_uint64_t *pbytes) {
	unsigned long long p = 0;
	size_t n = 0;
	int r = fake_module_get_global(pdptr ? &p : NULL, pbytes ? &n : NULL, hmod, name);
	if (r == 0) {
		if (pdptr) *pdptr = p;
		if (pbytes) *pbytes = n;
	}
	return cn(r);
}

#ifndef FAKE_NO_STREAMS
EXPORT CNresult cnCreateQueue(CNqueue *phqueue, unsigned int flags) {
	if (flags != 0) return CN_ERROR_INVALID_VALUE; /* "Reserved parameter, which must be 0" */
	return cn(fake_stream_create((void **)phqueue, flags));
}
EXPORT CNresult cnQueueSync(CNqueue hqueue) { return cn(fake_stream_synchronize(hqueue)); }
EXPORT CNresult cnDestroyQueue(CNqueue hqueue) { return cn(fake_stream_destroy(hqueue)); }
EXPORT CNresult cnQueueWaitNotifier(CNqueue hqueue, CNnotifier hnotifier) { return cn(fake_stream_wait_event(hqueue, hnotifier, 0)); }
#ifndef FAKE_NO_WAIT_WITH_FLAGS
EXPORT CNresult cnQueueWaitNotifierWithFlags(CNqueue hqueue, CNnotifier hnotifier, unsigned int flags) {
	return cn(fake_stream_wait_event(hqueue, hnotifier, flags));
}
#endif
EXPORT CNresult cnMemcpyHtoDAsync(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes, CNqueue hqueue) {
	return cn(fake_memcpy_async(OP_HTOD, dstAddr, (uintptr_t)srcAddr, (size_t)bytes, hqueue));
}
EXPORT CNresult cnMemcpyDtoHAsync(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes, CNqueue hqueue) {
	return cn(fake_memcpy_async(OP_DTOH, (uintptr_t)dstAddr, srcAddr, (size_t)bytes, hqueue));
}
#ifndef FAKE_NO_ASYNC_V2
EXPORT CNresult cnMemcpyHtoDAsync_V2(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes, CNqueue hqueue) {
	return cnMemcpyHtoDAsync(dstAddr, srcAddr, bytes, hqueue);
}
EXPORT CNresult cnMemcpyDtoHAsync_V2(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes, CNqueue hqueue) {
	return cnMemcpyDtoHAsync(dstAddr, srcAddr, bytes, hqueue);
}
#endif
EXPORT CNresult cnCreateNotifier(CNnotifier *phnotifier, unsigned int flags) { return cn(fake_event_create((void **)phnotifier, flags)); }
EXPORT CNresult cnPlaceNotifier(CNnotifier hnotifier, CNqueue hqueue) { return cn(fake_event_record(hnotifier, hqueue)); }
EXPORT CNresult cnWaitNotifier(CNnotifier hnotifier) { return cn(fake_event_synchronize(hnotifier)); }
EXPORT CNresult cnNotifierElapsedTime(float *pMilliseconds, CNnotifier hstart, CNnotifier hend) {
	return cn(fake_event_elapsed(pMilliseconds, hstart, hend));
}
EXPORT CNresult cnDestroyNotifier(CNnotifier hnotifier) { return cn(fake_event_destroy(hnotifier)); }
EXPORT CNresult cnMallocHost(void **paddr, cn_uint64_t bytes) { return cn(fake_host_alloc(paddr, (size_t)bytes, 0)); }
EXPORT CNresult cnFreeHost(void *addr) { return cn(fake_host_free(addr)); }
#endif
#endif
