/*
 * What the FlagCX plugin's direct calls (cmd/libflagcxshim/fast.c) spend
 * besides the driver call itself, measured on the GPU machine with the
 * driver API alone (no nvcc, no CUDA headers; libcuda.so.1 dlopened by
 * absolute path): the selection (cuCtxSetCurrent of the context already
 * current, against cuCtxGetCurrent, which fast.c's FX_SKIP_CURRENT calls
 * instead when the context is current), the locks the registry used and
 * uses (a pthread rwlock's read side; the mutex its writers take; an
 * acquire load; the registry's own lock-free lookup, registry.c compiled
 * in), the allocation of a stream object, and for scale the two operations
 * whose goals were missed: stream create+destroy and event
 * record+synchronize on an idle stream.
 *
 *   gcc -O2 -I cmd/libflagcxshim -o ctx_cost scripts/flagcx/ctx_cost.c cmd/libflagcxshim/registry.c -ldl -pthread
 *   ./ctx_cost [/abs/path/libcuda.so.1 [ITERATIONS]]
 *
 * Without a path, the x86-64 libcuda.so.1 that `ldconfig -p` lists.
 * Prints one line per case: "NAME MEDIAN_NS MIN_NS" (ns per call, the
 * median and minimum of 7 chunks of the iterations, after a warm-up
 * chunk), then "select: ..." saying which FX_SKIP_CURRENT the numbers
 * pick. Exit 1 when the driver refuses a call.
 *
 * The driver API's declarations (cuda.h 13.0, as NVIDIA/cuda-python's
 * cuda_bindings/cuda/bindings/cydriver.pxd.in declares them; the _v2 names
 * are what cuda.h's #defines make of cuStreamDestroy, cuEventDestroy and
 * cuDevicePrimaryCtxRelease):
 *   CUresult cuInit(unsigned int Flags)
 *   CUresult cuDeviceGet(CUdevice *device, int ordinal)          CUdevice is int
 *   CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
 *   CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
 *   CUresult cuCtxSetCurrent(CUcontext ctx), cuCtxGetCurrent(CUcontext *pctx)
 *   CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)   CU_STREAM_NON_BLOCKING 0x1
 *   CUresult cuStreamDestroy_v2(CUstream hStream)
 *   CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)      CU_EVENT_DISABLE_TIMING 0x2
 *   CUresult cuEventRecord(CUevent hEvent, CUstream hStream), cuEventSynchronize(CUevent hEvent)
 *   CUresult cuEventDestroy_v2(CUevent hEvent)
 * (CUresult an int, 0 success; the handles opaque pointers.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry.h"

typedef int CUresult;
typedef void *H; /* CUcontext, CUstream, CUevent */

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(int *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(H *, int);
static CUresult (*cuDevicePrimaryCtxRelease)(int);
static CUresult (*cuCtxSetCurrent)(H);
static CUresult (*cuCtxGetCurrent)(H *);
static CUresult (*cuStreamCreate)(H *, unsigned);
static CUresult (*cuStreamDestroy)(H);
static CUresult (*cuEventCreate)(H *, unsigned);
static CUresult (*cuEventRecord)(H, H);
static CUresult (*cuEventSynchronize)(H);
static CUresult (*cuEventDestroy)(H);

static H ctx, stream, event;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t word = 1, sink;
static uintptr_t objs[64];

#define CU(call) \
	do { \
		CUresult r_ = (call); \
		if (r_ != 0) { \
			printf("FAIL %s: CUresult %d\n", #call, r_); \
			exit(1); \
		} \
	} while (0)

static void *sym(void *lib, const char *name) {
	void *p = dlsym(lib, name);
	if (!p) {
		printf("FAIL dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

/* libcuda finds the x86-64 libcuda.so.1 in ldconfig's cache. */
static void libcuda(char *out, size_t n) {
	FILE *f = popen("ldconfig -p", "r");
	char line[1024];
	out[0] = 0;
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "libcuda.so.1 ") && strstr(line, "x86-64")) {
			char *p = strstr(line, "=> ");
			if (p && p[3] == '/') {
				snprintf(out, n, "%s", p + 3);
				out[strcspn(out, "\n")] = 0;
				break;
			}
		}
	if (f) pclose(f);
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *x, const void *y) {
	double d = *(const double *)x - *(const double *)y;
	return (d > 0) - (d < 0);
}

/* the cases: one call of each */
static void set_current(void) { CU(cuCtxSetCurrent(ctx)); }
static void get_current(void) {
	H c;
	CU(cuCtxGetCurrent(&c));
	sink += c == ctx; /* fast.c compares it with the selector */
}
static void rwlock_read(void) {
	pthread_rwlock_rdlock(&rw);
	sink += word;
	pthread_rwlock_unlock(&rw);
}
static void mutex(void) {
	pthread_mutex_lock(&mu);
	sink += word;
	pthread_mutex_unlock(&mu);
}
static void acquire_load(void) { sink += __atomic_load_n(&word, __ATOMIC_ACQUIRE); }
static void registry_find(void) {
	struct fx_hit h;
	sink += fx_reg_find(objs[sink & 63], 3, 1, &h);
}
static void calloc_free(void) {
	void *p = calloc(2, sizeof(uintptr_t));
	__asm__ volatile("" : : "r"(p) : "memory");
	free(p);
}
static void stream_create_destroy(void) {
	H s;
	CU(cuStreamCreate(&s, 0x1));
	CU(cuStreamDestroy(s));
}
static void event_record_sync(void) {
	CU(cuEventRecord(event, stream));
	CU(cuEventSynchronize(event));
}

enum { CHUNKS = 7 };

/* run times f: a warm-up chunk, then CHUNKS chunks of n calls. */
static void run(const char *name, long n, void (*f)(void), double *median) {
	double t[CHUNKS];
	for (long i = 0; i < n; i++) f();
	for (int c = 0; c < CHUNKS; c++) {
		double t0 = now();
		for (long i = 0; i < n; i++) f();
		t[c] = (now() - t0) / n;
	}
	qsort(t, CHUNKS, sizeof t[0], cmp);
	printf("%-24s %9.1f %9.1f\n", name, t[CHUNKS / 2], t[0]);
	fflush(stdout);
	if (median) *median = t[CHUNKS / 2];
}

int main(int argc, char **argv) {
	char path[4096];
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	if (argc > 1) snprintf(path, sizeof path, "%s", argv[1]);
	else libcuda(path, sizeof path);
	if (path[0] != '/' || n <= 0) {
		printf("FAIL no absolute path of libcuda.so.1 (give it: %s /abs/path/libcuda.so.1 [ITERATIONS])\n", argv[0]);
		return 1;
	}
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("FAIL dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	cuInit = sym(lib, "cuInit");
	cuDeviceGet = sym(lib, "cuDeviceGet");
	cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
	cuDevicePrimaryCtxRelease = sym(lib, "cuDevicePrimaryCtxRelease_v2");
	cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
	cuCtxGetCurrent = sym(lib, "cuCtxGetCurrent");
	cuStreamCreate = sym(lib, "cuStreamCreate");
	cuStreamDestroy = sym(lib, "cuStreamDestroy_v2");
	cuEventCreate = sym(lib, "cuEventCreate");
	cuEventRecord = sym(lib, "cuEventRecord");
	cuEventSynchronize = sym(lib, "cuEventSynchronize");
	cuEventDestroy = sym(lib, "cuEventDestroy_v2");
	int dev;
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&stream, 0x1));
	CU(cuEventCreate(&event, 0x2));
	for (int i = 0; i < 64; i++) { /* live objects to look up, as the plugin's streams and events */
		objs[i] = (uintptr_t)calloc(2, sizeof(uintptr_t));
		if (!objs[i] || !fx_reg_insert(objs[i], i, 0, 1)) return printf("FAIL registry insert\n"), 1;
	}
	printf("# %s, %ld calls a chunk (stream create+destroy: %ld)\n", path, n, n / 10);
	printf("%-24s %9s %9s\n", "case", "median_ns", "min_ns");
	double set, get;
	run("ctx_set_current_same", n, set_current, &set);
	run("ctx_get_current", n, get_current, &get);
	run("rwlock_rdlock_unlock", n, rwlock_read, NULL);
	run("mutex_lock_unlock", n, mutex, NULL);
	run("atomic_acquire_load", n, acquire_load, NULL);
	run("registry_find", n, registry_find, NULL);
	run("calloc2_free", n, calloc_free, NULL);
	run("event_record_sync", n, event_record_sync, NULL);
	run("stream_create_destroy", n / 10 > 0 ? n / 10 : 1, stream_create_destroy, NULL);
	printf("select: get %.1f ns vs set %.1f ns: FX_SKIP_CURRENT %d (%s)\n", get, set, get < set,
		get < set ? "read the current context, set it only when it differs" : "set the context on every call");
	CU(cuEventDestroy(event));
	CU(cuStreamDestroy(stream));
	CU(cuDevicePrimaryCtxRelease(dev));
	return sink == 42 ? 2 : 0; /* use sink */
}
