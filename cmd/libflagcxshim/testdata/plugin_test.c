/*
 * Loads libflagcxshim as FlagCX loads a device adaptor plugin and drives
 * every field on a fake driver: written from FlagCX's public description of
 * the ABI (FlagCX at 0c721293: flagcx/adaptor/device/device_plugin_load.cc
 * loads with dlopen(RTLD_NOW | RTLD_LOCAL), reads the data symbol
 * "flagcxDeviceAdaptorPlugin_v1" as struct flagcxDeviceAdaptor_v1, copies
 * it, checks name[0] and 32 pointers, and dlcloses at the last handle's
 * free, to dlopen again on the next init). The declarations below are this
 * test's own, not the plugin's header, so that a layout the plugin got
 * wrong fails here.
 *
 * usage: plugin_test PLUGIN NAME VENDOR DMA
 *   NAME    the name FlagCX must see ("flagshim:cuda")
 *   VENDOR  what getVendor must write ("NVIDIA", "MUSA", "UNKNOWN", ...)
 *   DMA     1 when the backend exports dma-bufs, 0 when it answers NotSupported
 * Prints "ok <what>" per check, "FAIL ..." and exits 1 at the first failure.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int res_t; /* flagcxResult_t: 0 success, 1 unhandled device error, 4 invalid argument, 7 in progress, 9 not supported */
enum { OK = 0, UNHANDLED = 1, INVALID = 4, INPROGRESS = 7, NOTSUPPORTED = 9 };
enum { HTOD = 0, DTOH = 1, DTOD = 2 };
enum { HOST = 0, DEVICE = 1, MANAGED = 2 };
typedef struct { void *base; } *stream_t;
typedef struct { void *base; } *event_t;
typedef void *ipc_t;
struct props { char name[256]; int pciBusId, pciDeviceId, pciDomainId; };

struct adaptor {
	char name[32];
	res_t (*deviceSynchronize)(void);
	res_t (*deviceMemcpy)(void *, void *, size_t, int, stream_t, void *);
	res_t (*deviceMemset)(void *, int, size_t, int, stream_t);
	res_t (*deviceMalloc)(void **, size_t, int, stream_t);
	res_t (*deviceFree)(void *, int, stream_t);
	res_t (*setDevice)(int);
	res_t (*getDevice)(int *);
	res_t (*getDeviceCount)(int *);
	res_t (*getVendor)(char *);
	res_t (*hostGetDevicePointer)(void **, void *);
	res_t (*memHandleInit)(int, void **);
	res_t (*memHandleDestroy)(int, void *);
	res_t (*gdrMemAlloc)(void **, size_t, void *);
	res_t (*gdrMemFree)(void *, void *);
	res_t (*hostShareMemAlloc)(void **, size_t, void *);
	res_t (*hostShareMemFree)(void *, void *);
	res_t (*gdrPtrMmap)(void **, void *, size_t);
	res_t (*gdrPtrMunmap)(void *, size_t);
	res_t (*streamCreate)(stream_t *);
	res_t (*streamDestroy)(stream_t);
	res_t (*streamCopy)(stream_t *, void *);
	res_t (*streamFree)(stream_t);
	res_t (*streamSynchronize)(stream_t);
	res_t (*streamQuery)(stream_t);
	res_t (*streamWaitEvent)(stream_t, event_t);
	res_t (*streamWaitValue64)(stream_t, void *, uint64_t, int);
	res_t (*streamWriteValue64)(stream_t, void *, uint64_t, int);
	res_t (*eventCreate)(event_t *, int);
	res_t (*eventDestroy)(event_t);
	res_t (*eventRecord)(event_t, stream_t);
	res_t (*eventSynchronize)(event_t);
	res_t (*eventQuery)(event_t);
	res_t (*eventElapsedTime)(float *, event_t, event_t);
	res_t (*ipcMemHandleCreate)(ipc_t *, size_t *);
	res_t (*ipcMemHandleGet)(ipc_t, void *);
	res_t (*ipcMemHandleOpen)(ipc_t, void **);
	res_t (*ipcMemHandleClose)(void *);
	res_t (*ipcMemHandleFree)(ipc_t);
	res_t (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void **, size_t, void *, void *);
	res_t (*copyArgsInit)(void **);
	res_t (*copyArgsFree)(void *);
	res_t (*launchDeviceFunc)(stream_t, void (*)(stream_t, void *), void *);
	res_t (*getDeviceProperties)(struct props *, int);
	res_t (*getDevicePciBusId)(char *, int, int);
	res_t (*getDeviceByPciBusId)(int *, const char *);
	res_t (*launchHostFunc)(stream_t, void (*)(void *), void *);
	res_t (*dmaSupport)(bool *);
	res_t (*getHandleForAddressRange)(void *, void *, size_t, unsigned long long);
};

_Static_assert(sizeof(struct adaptor) == 416, "v1 is 416 bytes on LP64");
_Static_assert(offsetof(struct adaptor, deviceSynchronize) == 32, "pointers start after name[32]");
_Static_assert(offsetof(struct adaptor, hostGetDevicePointer) == 32 + 9 * 8, "hostGetDevicePointer is the 10th");
_Static_assert(offsetof(struct adaptor, streamCreate) == 32 + 18 * 8, "streamCreate is the 19th");
_Static_assert(offsetof(struct adaptor, eventCreate) == 32 + 27 * 8, "eventCreate is the 28th");
_Static_assert(offsetof(struct adaptor, ipcMemHandleCreate) == 32 + 33 * 8, "ipcMemHandleCreate is the 34th");
_Static_assert(offsetof(struct adaptor, launchDeviceFunc) == 32 + 41 * 8, "launchDeviceFunc is the 42nd");
_Static_assert(offsetof(struct adaptor, launchHostFunc) == 32 + 45 * 8, "launchHostFunc is the 46th");
_Static_assert(offsetof(struct adaptor, getHandleForAddressRange) == 32 + 47 * 8, "getHandleForAddressRange is the 48th");

static struct adaptor a;
static int (*last_error)(char *, int);
static uint64_t (*go_entries)(void); /* the plugin's entries into Go from its fields */

static void fail(const char *what, int line, int got) {
	char why[1024] = "";
	if (last_error) last_error(why, sizeof why);
	printf("FAIL line %d: %s (got %d; last error: %s)\n", line, what, got, why);
	fflush(stdout);
	exit(1);
}
#define CHECK(cond, what) do { if (!(cond)) fail(what, __LINE__, 0); } while (0)
#define EXPECT(call, want) do { int got_ = (call); if (got_ != (want)) fail(#call " != " #want, __LINE__, got_); } while (0)
#define OKAY(call) EXPECT(call, OK)

/* load dlopens and copies the struct as FlagCX does; returns the handle. */
static void *load(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("FAIL dlopen: %s\n", dlerror()); exit(1); }
	struct adaptor *p = dlsym(h, "flagcxDeviceAdaptorPlugin_v1");
	CHECK(p != NULL, "dlsym flagcxDeviceAdaptorPlugin_v1");
	memcpy(&a, p, sizeof a);
	last_error = (int (*)(char *, int))dlsym(h, "flagcxshim_last_error");
	go_entries = (uint64_t (*)(void))dlsym(h, "flagcxshim_go_entries");
	return h;
}

static void check_fields(const char *name) {
	CHECK(a.name[0] != 0, "a name");
	CHECK(memchr(a.name, 0, sizeof a.name) != NULL, "a NUL-terminated name");
	if (strcmp(a.name, name) != 0) { printf("FAIL name %s, want %s\n", a.name, name); exit(1); }
	void *required[] = {
		a.deviceSynchronize, a.deviceMemcpy, a.deviceMemset, a.deviceMalloc, a.deviceFree, a.setDevice, a.getDevice,
		a.getDeviceCount, a.getVendor, a.gdrMemAlloc, a.gdrMemFree, a.streamCreate, a.streamDestroy, a.streamCopy,
		a.streamFree, a.streamSynchronize, a.streamQuery, a.streamWaitEvent, a.streamWaitValue64, a.streamWriteValue64,
		a.eventCreate, a.eventDestroy, a.eventRecord, a.eventSynchronize, a.eventQuery, a.eventElapsedTime,
		a.ipcMemHandleCreate, a.ipcMemHandleGet, a.ipcMemHandleOpen, a.ipcMemHandleClose, a.ipcMemHandleFree,
		a.launchHostFunc,
	};
	CHECK(sizeof required / sizeof required[0] == 32, "32 required fields listed");
	for (size_t i = 0; i < 32; i++) if (!required[i]) fail("a required field is NULL", __LINE__, (int)i);
	void *unchecked[] = { a.hostGetDevicePointer, a.launchDeviceFunc, a.getDevicePciBusId, a.getDeviceByPciBusId,
		a.getDeviceProperties, a.dmaSupport, a.getHandleForAddressRange };
	for (size_t i = 0; i < 7; i++) if (!unchecked[i]) fail("an optional field FlagCX calls unchecked is NULL", __LINE__, (int)i);
	void *nulls[] = { a.memHandleInit, a.memHandleDestroy, a.hostShareMemAlloc, a.hostShareMemFree, a.gdrPtrMmap,
		a.gdrPtrMunmap, a.launchKernel, a.copyArgsInit, a.copyArgsFree };
	for (size_t i = 0; i < 9; i++) if (nulls[i]) fail("a field the built-in leaves NULL is set", __LINE__, (int)i);
	printf("ok fields %s\n", a.name);
}

struct hostfn { int calls; pthread_t thread; unsigned char seen; unsigned char *buf; };
static void host_fn(void *p) {
	struct hostfn *h = p;
	h->calls++;
	h->thread = pthread_self();
	h->seen = h->buf[0];
}
static int device_fn_calls;
static stream_t device_fn_stream;
static void device_fn(stream_t s, void *args) { device_fn_calls += *(int *)args; device_fn_stream = s; }

static void all_set(const unsigned char *p, size_t n, unsigned char v, const char *what) {
	for (size_t i = 0; i < n; i++) if (p[i] != v) fail(what, __LINE__, p[i]);
}

enum { THREADS = 4, ROUNDS = 100 };
struct shared { stream_t s, s2; event_t e; };

/* churn is one of the threads of drive's concurrent part. */
static void *churn(void *arg) {
	struct shared *sh = arg;
	int d = -1;
	OKAY(a.getDevice(&d));
	CHECK(d == 0, "a new thread starts on device 0");
	OKAY(a.setDevice(1));
	for (int i = 0; i < ROUNDS; i++) {
		stream_t x = NULL;
		OKAY(a.streamCreate(&x));
		CHECK(x && x->base, "a stream of this thread's");
		OKAY(a.streamQuery(x));
		OKAY(a.streamSynchronize(x));
		int r = a.streamQuery(sh->s);
		CHECK(r == OK || r == INPROGRESS, "a shared stream's query");
		OKAY(a.eventRecord(sh->e, i % 2 ? sh->s : sh->s2));
		OKAY(a.eventSynchronize(sh->e));
		OKAY(a.streamDestroy(x));
	}
	return NULL;
}

static void drive(const char *vendor, int dma, int direct) {
	int n = -1, d = -1;
	OKAY(a.getDeviceCount(&n));
	CHECK(n == 2, "two fake devices");
	OKAY(a.getDevice(&d));
	CHECK(d == 0, "device 0 before setDevice");
	OKAY(a.setDevice(1));
	OKAY(a.getDevice(&d));
	CHECK(d == 1, "setDevice(1) is the thread's");
	EXPECT(a.setDevice(7), INVALID);
	EXPECT(a.setDevice(-1), INVALID);
	OKAY(a.getDevice(&d));
	CHECK(d == 1, "a refused setDevice changes nothing");
	char v[128];
	memset(v, 'x', sizeof v);
	OKAY(a.getVendor(v));
	if (strcmp(v, vendor) != 0) { printf("FAIL vendor %s, want %s\n", v, vendor); exit(1); }
	printf("ok device %d of %d, vendor %s\n", d, n, v);

	/* memory, synchronous */
	unsigned char *dp = NULL, *hp = NULL, *mp = NULL;
	OKAY(a.deviceMalloc((void **)&dp, 256, DEVICE, NULL));
	CHECK(dp != NULL, "device memory");
	OKAY(a.deviceMalloc((void **)&hp, 256, HOST, NULL));
	CHECK(hp != NULL, "pinned host memory");
	OKAY(a.deviceMalloc((void **)&mp, 64, MANAGED, NULL));
	CHECK(mp != NULL, "managed memory");
	OKAY(a.deviceMemset(dp, 0x5a, 256, DEVICE, NULL));
	OKAY(a.deviceMemcpy(hp, dp, 256, DTOH, NULL, NULL));
	all_set(hp, 256, 0x5a, "memset then copy to host");
	OKAY(a.deviceMemset(hp, 1, 16, HOST, NULL));
	all_set(hp, 16, 1, "a host memset");
	OKAY(a.deviceMemcpy(dp, hp, 16, HTOD, NULL, NULL));
	OKAY(a.deviceMemcpy(mp, dp, 64, DTOD, NULL, NULL));
	OKAY(a.deviceMemcpy(hp + 64, mp, 64, DTOH, NULL, NULL));
	all_set(hp + 64, 16, 1, "device to device");
	all_set(hp + 80, 48, 0x5a, "device to device, the rest");
	void *mapped = NULL;
	OKAY(a.hostGetDevicePointer(&mapped, hp));
	CHECK(mapped != NULL, "pinned memory's device address");
	OKAY(a.deviceSynchronize());
	printf("ok memory\n");

	/* streams: copies, memsets, queries, waits by value, events, host functions */
	stream_t s = NULL, s2 = NULL, s3 = NULL;
	OKAY(a.streamCreate(&s));
	OKAY(a.streamCreate(&s2));
	CHECK(s && s->base, "a stream object whose first word is the native handle");
	OKAY(a.deviceMemset(dp, 0x33, 256, DEVICE, s));
	EXPECT(a.streamQuery(s), INPROGRESS); /* FAKE_QUERY_BUSY=1: the first query of queued work */
	OKAY(a.streamSynchronize(s));
	OKAY(a.streamQuery(s));
	OKAY(a.deviceMemcpy(hp, dp, 256, DTOH, s, NULL));
	OKAY(a.streamSynchronize(s));
	all_set(hp, 256, 0x33, "a memset and a copy on a stream");

	unsigned char *flag = NULL;
	OKAY(a.gdrMemAlloc((void **)&flag, 8, NULL));
	OKAY(a.deviceMemset(flag, 0, 8, DEVICE, NULL));
	event_t ev = NULL, e0 = NULL, e1 = NULL;
	OKAY(a.eventCreate(&ev, 1));
	OKAY(a.eventCreate(&e0, 0));
	OKAY(a.eventCreate(&e1, 0));
	CHECK(ev->base != NULL, "an event object whose first word is the native handle");
	OKAY(a.eventRecord(e0, s));
	OKAY(a.streamWaitValue64(s, flag, 1, 0));
	OKAY(a.deviceMemset(dp, 0x77, 256, DEVICE, s));
	OKAY(a.eventRecord(ev, s));
	OKAY(a.eventRecord(e1, s));
	EXPECT(a.streamQuery(s), INPROGRESS);
	EXPECT(a.eventQuery(ev), INPROGRESS);
	float ms = -1;
	EXPECT(a.eventElapsedTime(&ms, e0, e1), INPROGRESS);
	OKAY(a.deviceMemcpy(hp, dp, 8, DTOH, NULL, NULL));
	all_set(hp, 8, 0x33, "the memset waits for the value");
	OKAY(a.streamWriteValue64(s2, flag, 1, 0));
	OKAY(a.streamSynchronize(s2));
	OKAY(a.eventSynchronize(ev));
	OKAY(a.eventQuery(ev));
	OKAY(a.streamSynchronize(s));
	OKAY(a.streamQuery(s));
	OKAY(a.eventElapsedTime(&ms, e0, e1));
	CHECK(ms >= 0, "elapsed time");
	OKAY(a.deviceMemcpy(hp, dp, 256, DTOH, NULL, NULL));
	all_set(hp, 256, 0x77, "released by the other stream's write");
	OKAY(a.streamWaitEvent(s2, ev));
	OKAY(a.eventRecord(ev, NULL));
	OKAY(a.eventSynchronize(ev));
	printf("ok streams, events, value waits\n");

	struct hostfn hf = { 0, 0, 0, hp };
	OKAY(a.deviceMemset(dp, 0x44, 1, DEVICE, s));
	OKAY(a.deviceMemcpy(hp, dp, 1, DTOH, s, NULL));
	OKAY(a.launchHostFunc(s, host_fn, &hf));
	OKAY(a.launchHostFunc(NULL, host_fn, &hf)); /* NULL stream: nothing, as the built-in */
	OKAY(a.streamSynchronize(s));
	CHECK(hf.calls == 1, "the host function ran once");
	CHECK(hf.seen == 0x44, "after the copy before it");
	CHECK(!pthread_equal(hf.thread, pthread_self()), "on the driver's thread");
	int inc = 3;
	OKAY(a.launchDeviceFunc(s, device_fn, &inc));
	CHECK(device_fn_calls == 3 && device_fn_stream == s, "launchDeviceFunc calls FlagCX's function with the stream");
	OKAY(a.launchDeviceFunc(NULL, device_fn, &inc));
	CHECK(device_fn_calls == 3, "not with a NULL stream");

	OKAY(a.streamCopy(&s3, s->base));
	CHECK(s3 && s3 != s && s3->base == s->base, "streamCopy wraps the native stream");
	OKAY(a.deviceMemset(dp, 0x66, 4, DEVICE, s3));
	OKAY(a.streamSynchronize(s3));
	OKAY(a.streamFree(s3));
	OKAY(a.streamSynchronize(s)); /* the native stream outlives its copy */

	unsigned char *sp = NULL;
	OKAY(a.deviceMalloc((void **)&sp, 128, DEVICE, s)); /* stream-ordered */
	OKAY(a.deviceMemset(sp, 9, 128, DEVICE, s));
	OKAY(a.deviceFree(sp, DEVICE, s));
	OKAY(a.streamSynchronize(s));
	printf("ok host functions, streamCopy, stream-ordered memory\n");

	/* IPC: a handle is 64 flat bytes; FlagCX opens a copy of them */
	ipc_t ih = NULL;
	size_t isz = 0;
	OKAY(a.ipcMemHandleCreate(&ih, &isz));
	CHECK(ih && isz == 64, "a 64-byte handle");
	OKAY(a.ipcMemHandleGet(ih, dp));
	unsigned char wire[64];
	memcpy(wire, ih, 64);
	void *opened = NULL;
	OKAY(a.ipcMemHandleOpen((ipc_t)wire, &opened));
	CHECK(opened == dp, "the fake maps the allocation at its address");
	void *nonnull = dp;
	EXPECT(a.ipcMemHandleOpen((ipc_t)wire, &nonnull), INVALID);
	OKAY(a.ipcMemHandleClose(opened));
	unsigned char garbage[64];
	memset(garbage, 0xa5, sizeof garbage);
	void *g = NULL;
	int r = a.ipcMemHandleOpen((ipc_t)garbage, &g);
	CHECK(r == INVALID || r == UNHANDLED, "garbage bytes are no handle");
	OKAY(a.ipcMemHandleFree(ih));
	EXPECT(a.ipcMemHandleFree((ipc_t)garbage), INVALID);
	printf("ok IPC\n");

	/* properties, PCI bus ids, dma-buf */
	struct props pr;
	OKAY(a.getDeviceProperties(&pr, 1));
	CHECK(pr.pciBusId == 0x19 && pr.pciDeviceId == 0 && pr.pciDomainId == 0, "device 1's bus numbers");
	char bus[17];
	OKAY(a.getDevicePciBusId(bus, sizeof bus, 1));
	int found = -1;
	OKAY(a.getDeviceByPciBusId(&found, bus));
	CHECK(found == 1, "the device at its own bus id");
	EXPECT(a.getDeviceByPciBusId(&found, "not a bus id"), INVALID);
	bool dmaok = !dma;
	OKAY(a.dmaSupport(&dmaok));
	CHECK(dmaok == (dma != 0), "dma-buf support");
	int fd = -1;
	r = a.getHandleForAddressRange(&fd, dp, 256, 0);
	if (dma) {
		CHECK(r == OK && fd >= 0, "a dma-buf descriptor");
		close(fd);
	} else {
		CHECK(r == NOTSUPPORTED, "no dma-buf export: NotSupported");
	}
	printf("ok properties %s, bus %s, dma %d\n", pr.name, bus, dmaok);

	/* bad input: an error code, never a crash */
	struct { void *base; void *junk; } foreign = { (void *)0x1234, (void *)0x5678 };
	EXPECT(a.deviceMemcpy(dp, hp, 8, 7, NULL, NULL), INVALID);
	EXPECT(a.deviceMemcpy(NULL, hp, 8, HTOD, NULL, NULL), INVALID);
	EXPECT(a.deviceMemset(dp, 0, 8, 5, NULL), INVALID);
	EXPECT(a.deviceMalloc(NULL, 8, DEVICE, NULL), INVALID);
	void *x = NULL;
	EXPECT(a.deviceMalloc(&x, 8, 9, NULL), INVALID);
	EXPECT(a.deviceFree(hp + 1, HOST, NULL), INVALID);
	EXPECT(a.streamSynchronize((stream_t)&foreign), INVALID);
	EXPECT(a.streamQuery((stream_t)&foreign), INVALID);
	EXPECT(a.streamDestroy((stream_t)&foreign), INVALID);
	EXPECT(a.deviceMemcpy(hp, dp, 8, DTOH, (stream_t)&foreign, NULL), INVALID);
	EXPECT(a.eventRecord((event_t)&foreign, s), INVALID);
	EXPECT(a.eventCreate(&ev, 3), INVALID);
	EXPECT(a.streamWaitValue64(NULL, flag, 1, 0), INVALID);
	EXPECT(a.eventElapsedTime(NULL, e0, e1), INVALID);
	EXPECT(a.getDevicePciBusId(NULL, 16, 0), INVALID);
	EXPECT(a.getDeviceProperties(&pr, 9), INVALID);
	EXPECT(a.hostGetDevicePointer(&mapped, NULL), INVALID);
	char why[512] = "";
	CHECK(last_error && last_error(why, sizeof why) > 0 && why[0], "flagshim's reason is kept");
	printf("ok bad input (last: %s)\n", why);

	/* direct calls: where the backend's shapes are CUDA's, the hot fields
	 * never enter Go (the count of entries stays put), and a driver's
	 * failure enters Go once, for flagshim's reason */
	CHECK(ev == NULL && e1 != NULL, "the refused eventCreate cleared ev; e1 lives");
	CHECK(go_entries != NULL, "flagcxshim_go_entries is exported");
	OKAY(a.streamSynchronize(s));
	uint64_t before = go_entries();
	for (int i = 0; i < 50; i++) {
		OKAY(a.deviceMemset(hp, i, 4, HOST, NULL));
		OKAY(a.deviceMemcpy(dp, hp, 4, HTOD, s, NULL));
		OKAY(a.deviceMemcpy(dp + 16, dp, 4, DTOD, s, NULL));
		OKAY(a.eventRecord(e1, s));
		OKAY(a.deviceMemcpy(hp + 32, dp + 16, 4, DTOH, s, NULL));
		OKAY(a.eventSynchronize(e1));
		OKAY(a.streamSynchronize(s));
		all_set(hp + 32, 4, (unsigned char)i, "a round trip through direct calls");
		OKAY(a.eventQuery(e1));
		OKAY(a.streamQuery(s));
		void *m = NULL;
		OKAY(a.deviceMalloc(&m, 1 << 20, DEVICE, NULL));
		CHECK(m != NULL, "device memory from a direct call");
		OKAY(a.deviceFree(m, DEVICE, NULL));
		stream_t x = NULL;
		OKAY(a.streamCreate(&x));
		CHECK(x && x->base, "a stream from a direct call, its handle first");
		OKAY(a.streamSynchronize(x));
		OKAY(a.streamDestroy(x));
	}
	uint64_t entered = go_entries() - before;
	if (direct) CHECK(entered == 0, "the hot fields do not enter Go");
	else CHECK(entered > 0, "the hot fields go through Go (direct calls off)");
	before = go_entries();
	EXPECT(a.deviceMemcpy(dp + 255, hp, 8, HTOD, s, NULL), INVALID); /* past the allocation: the driver refuses */
	memset(why, 0, sizeof why);
	CHECK(last_error(why, sizeof why) > 0 && strstr(why, "deviceMemcpy") && strstr(why, "MemcpyHtoDAsync") &&
		strstr(why, "device 1"), "a direct call's failure carries flagshim's reason");
	if (direct) CHECK(go_entries() - before == 1, "a failure enters Go once");
	void *huge = NULL;
	EXPECT(a.deviceMalloc(&huge, (size_t)1 << 50, DEVICE, NULL), UNHANDLED); /* out of memory */
	CHECK(huge == NULL, "no memory on failure");
	CHECK(last_error(why, sizeof why) > 0 && strstr(why, "deviceMalloc"), "the allocation's reason");
	printf("ok direct calls %d (%llu Go entries in 50 rounds; failure: %s)\n", direct, (unsigned long long)entered, why);

	/* the device's context is current after a call, whatever was current
	 * before it (the fake CUDA's own getter and setter, as a framework
	 * calling the driver between FlagCX's calls would) */
	const char *cudalib = getenv("FLAGOS_BACKEND") && strcmp(getenv("FLAGOS_BACKEND"), "cuda") == 0 ? getenv("FLAGOS_LIBCUDA_PATH") : NULL;
	void *cu = cudalib ? dlopen(cudalib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	if (cu) {
		int (*get)(void **) = (int (*)(void **))dlsym(cu, "cuCtxGetCurrent");
		int (*set)(void *) = (int (*)(void *))dlsym(cu, "cuCtxSetCurrent");
		CHECK(get && set, "the fake's context functions");
		void *c1 = NULL, *c0 = NULL, *cur = NULL;
		stream_t s0 = NULL;
		OKAY(a.streamSynchronize(s));
		CHECK(get(&c1) == 0 && c1 != NULL, "device 1's context is current");
		OKAY(a.setDevice(0));
		OKAY(a.streamCreate(&s0));
		OKAY(a.streamSynchronize(s0));
		CHECK(get(&c0) == 0 && c0 != NULL && c0 != c1, "device 0's context is current after a call on its stream");
		before = go_entries();
		OKAY(a.streamQuery(s));
		CHECK(get(&cur) == 0 && cur == c1, "a call on device 1's stream makes its context current");
		OKAY(a.streamQuery(s0));
		CHECK(get(&cur) == 0 && cur == c0, "and device 0's again");
		CHECK(set(NULL) == 0, "no context current");
		OKAY(a.eventRecord(e1, s));
		CHECK(get(&cur) == 0 && cur == c1, "a call with no context current makes the stream's current");
		OKAY(a.eventSynchronize(e1));
		OKAY(a.streamSynchronize(s));
		OKAY(a.streamSynchronize(s));
		CHECK(get(&cur) == 0 && cur == c1, "and keeps it");
		if (direct) CHECK(go_entries() == before, "the context checks were direct calls");
		OKAY(a.streamDestroy(s0));
		OKAY(a.setDevice(1));
		dlclose(cu);
		printf("ok the device's context is current after each call\n");
	}

	/* many threads at once: each creates, uses and destroys streams of its
	 * own while all query, record on and synchronize shared ones */
	struct shared sh = { s, s2, e1 };
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&th[i], NULL, churn, &sh) == 0, "pthread_create");
	for (int i = 0; i < THREADS; i++) CHECK(pthread_join(th[i], NULL) == 0, "pthread_join");
	printf("ok %d threads at once\n", THREADS);

	/* release everything */
	OKAY(a.eventDestroy(ev));
	OKAY(a.eventDestroy(e0));
	OKAY(a.eventDestroy(e1));
	EXPECT(a.eventDestroy(e1), INVALID);
	OKAY(a.streamDestroy(s));
	OKAY(a.streamDestroy(s2));
	EXPECT(a.streamSynchronize(s), INVALID);
	OKAY(a.gdrMemFree(flag, NULL));
	OKAY(a.deviceFree(mp, MANAGED, NULL));
	OKAY(a.deviceFree(hp, HOST, NULL));
	OKAY(a.deviceFree(dp, DEVICE, NULL));
	OKAY(a.deviceFree(NULL, DEVICE, NULL));
	printf("ok released\n");
}

/* forked_child: in the child of a fork made after the plugin ran (its Go
 * runtime started, a stream alive), a field that would enter Go or call
 * the driver answers UNHANDLED at once, last_error says why, and the plain
 * C fields still answer; a hang (entering the copied Go runtime) fails the
 * test through the alarm instead of stalling it. */
static void forked_child(void) {
	stream_t live = NULL;
	int parent_dev = -1;
	OKAY(a.streamCreate(&live));
	OKAY(a.getDevice(&parent_dev));
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		alarm(20);
		int n = -1, dev = -1;
		stream_t s = NULL;
		void *p = NULL;
		char why[512] = "", host[4] = {0};
		if (a.getDeviceCount(&n) != UNHANDLED || n != -1) _exit(10);
		if (a.streamCreate(&s) != UNHANDLED || s != NULL) _exit(11);
		if (a.streamSynchronize(live) != UNHANDLED) _exit(12);
		if (a.deviceMalloc(&p, 64, DEVICE, NULL) != UNHANDLED || p != NULL) _exit(13);
		if (a.setDevice(0) != UNHANDLED) _exit(14);
		if (a.getDevice(&dev) != OK || dev != parent_dev) _exit(15);
		if (a.deviceMemset(host, 7, sizeof host, HOST, NULL) != OK || host[3] != 7) _exit(16);
		if (last_error(why, sizeof why) <= 0 || strstr(why, "child of a fork") == NULL) _exit(17);
		_exit(0);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail("a forked child's fields (exit code: the first that failed; a signal: it hung)", __LINE__, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	OKAY(a.streamDestroy(live));
	printf("ok forked child\n");
}

int main(int argc, char **argv) {
	if (argc != 6) { fprintf(stderr, "usage: %s PLUGIN NAME VENDOR DMA DIRECT\n", argv[0]); return 2; }
	void *h = load(argv[1]);
	check_fields(argv[2]);
	drive(argv[3], atoi(argv[4]), atoi(argv[5]));
	forked_child();
	void *first = (void *)a.getDeviceCount;
	CHECK(dlclose(h) == 0, "dlclose");
	/* FlagCX's next handle init: dlopen again, copy again, use again */
	h = load(argv[1]);
	check_fields(argv[2]);
	CHECK((void *)a.getDeviceCount == first, "the same library: it stayed loaded (nodelete)");
	int n = 0;
	OKAY(a.getDeviceCount(&n));
	CHECK(n == 2, "usable after a reload");
	stream_t s = NULL;
	OKAY(a.streamCreate(&s));
	OKAY(a.streamSynchronize(s));
	OKAY(a.streamDestroy(s));
	CHECK(dlclose(h) == 0, "dlclose");
	printf("ok reloaded\n");
	return 0;
}
