/*
 * The C floor of flagshim's hot paths: the same CUDA driver calls the Go
 * backend makes, made directly from C, timed the way `go test -bench`
 * reports (ns/op), so scripts/bench-ratio.sh can print Go / C ratios.
 *
 *   cfloor PTX [iterations] [repeats]
 *
 * PTX is drivers/cuda/testdata/gpu.ptx (its nop3 and nop8 kernels). libcuda
 * is opened as $FLAGOS_LIBCUDA_PATH or libcuda.so.1. No CUDA headers are
 * needed: the few prototypes are written here. Build: cc -O2 -o cfloor
 * scripts/cfloor.c -ldl
 *
 * Built with -DCFLOOR_LIB -shared -fPIC it is libcfloor.so instead, the
 * same loops for drivers/cuda's BenchmarkGPUPaired, which calls them from
 * the Go process in short slices alternating with the Go backend's own, so
 * both see the machine in the same state:
 *
 *   int  cfloor_open(const char *ptx);   0, or the CUresult that failed
 *   int  cfloor_graph_open(void);        the graph loops' setup (after cfloor_open): 0, or the CUresult
 *   long cfloor_slice(int op, long n);   ns that n of op took (enum op below); -1: the driver lacks op's function
 *   long cfloor_threads(int threads, long per, int shared);
 *                                        ns that threads C threads took to make per launches each
 *                                        (cuCtxSetCurrent + cuLaunchKernel of nop3, as the Go backend
 *                                        makes them), each on a stream of its own (shared 0) or all on
 *                                        one (shared 1), from a barrier to the last join; drained after;
 *                                        threads at most CFLOOR_MAX_THREADS; -1: setup failed
 *
 * The calls of a Go program's hot paths beyond launches (OP_SET_HTOD4K,
 * OP_SET_DTOH4K: a 4 KiB cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2 of malloc'd
 * memory; OP_SET_STREAM_SYNC: cuStreamSynchronize of an idle stream;
 * OP_SET_EVENT_RECORD: cuEventRecord on that stream) each make the context
 * current first, as the Go backend does in the same transition.
 *
 * The graph loops (drivers/cuda's BenchmarkGPUGraphReplay100) time one
 * iteration as 100 nop3 launches and a synchronize of their stream, a
 * stream created with the default flags as the Go backend's NewStream
 * makes: OP_LAUNCH100 calls cuLaunchKernel 100 times, OP_GRAPH100 launches
 * a graph of those 100 launches (captured once, in relaxed mode, as the Go
 * backend captures) with one cuGraphLaunch.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(int *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuCtxSynchronize_v2)(CUcontext); /* CUDA 13.0+; NULL where the driver lacks it */
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);

typedef void *CUgraph, *CUgraphExec, *CUevent;
static CUresult (*cuStreamCreate)(CUstream *, unsigned);
static CUresult (*cuStreamSynchronize)(CUstream);
static CUresult (*cuStreamBeginCapture_v2)(CUstream, int);
static CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
static CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
static CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuEventCreate)(CUevent *, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static void *libcuda;

static void *sym(void *lib, const char *name) {
	void *f = dlsym(lib, name);
	if (!f) fprintf(stderr, "cfloor: %s: %s\n", name, dlerror());
	return f;
}

#define CHECK(call) do { CUresult r_ = (call); if (r_) { fprintf(stderr, "cfloor: %s returned %d\n", #call, r_); exit(1); } } while (0)

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *slurp(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(1); }
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = calloc(1, (size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(1); }
	fclose(f);
	return b;
}

/* The numbers are drivers/cuda's gpu benchmarks' too: append only. */
enum op { OP_SET_CURRENT, OP_SYNCHRONIZE, OP_SYNC_ONLY, OP_SET_LAUNCH3, OP_SET_LAUNCH8, OP_LAUNCH3, OP_LAUNCH8,
	OP_LAUNCH100, OP_GRAPH100, OP_SYNC_CONTEXT, OP_SET_HTOD4K, OP_SET_DTOH4K, OP_SET_STREAM_SYNC, OP_SET_EVENT_RECORD };

static int dev;
static CUcontext ctx;
static CUmodule mod;
static CUfunction nop3, nop8;
static CUdeviceptr p, a0, a1, a4, a5;
static unsigned a2 = 1000, a3 = 7;
static float a6 = 0.5f;
static double a7 = 2.5;
static void *args3[] = {&a0, &a1, &a2};
static void *args8[] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7};

/* setup opens libcuda, makes device 0's primary context current, loads the
 * PTX and allocates the kernels' buffer; 0 or the failing CUresult (-1: the
 * library or a symbol is missing). */
static int setup(const char *ptx) {
	const char *path = getenv("FLAGOS_LIBCUDA_PATH");
	void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { fprintf(stderr, "cfloor: %s\n", dlerror()); return -1; }
	libcuda = lib;
	if (!(cuInit = sym(lib, "cuInit")) || !(cuDeviceGet = sym(lib, "cuDeviceGet")) ||
	    !(cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain")) ||
	    !(cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent")) || !(cuCtxSynchronize = sym(lib, "cuCtxSynchronize")) ||
	    !(cuModuleLoadData = sym(lib, "cuModuleLoadData")) || !(cuModuleGetFunction = sym(lib, "cuModuleGetFunction")) ||
	    !(cuMemAlloc = sym(lib, "cuMemAlloc_v2")) || !(cuLaunchKernel = sym(lib, "cuLaunchKernel")))
		return -1;
	CUresult r;
	if ((r = cuInit(0)) || (r = cuDeviceGet(&dev, 0)) || (r = cuDevicePrimaryCtxRetain(&ctx, dev)) ||
	    (r = cuCtxSetCurrent(ctx)) || (r = cuModuleLoadData(&mod, slurp(ptx))) ||
	    (r = cuModuleGetFunction(&nop3, mod, "nop3")) || (r = cuModuleGetFunction(&nop8, mod, "nop8")) ||
	    (r = cuMemAlloc(&p, 64)))
		return r;
	a0 = p, a1 = p + 8, a4 = 1ULL << 40, a5 = 3;
	cuCtxSynchronize_v2 = dlsym(lib, "cuCtxSynchronize_v2"); /* optional: OP_SYNC_CONTEXT */
	return 0;
}

static CUstream gstream;
static CUgraphExec gexec;

/* graph_setup creates the graph loops' stream and captures the 100-launch
 * graph; 0 or the failing CUresult (-1: a symbol is missing). */
static int graph_setup(void) {
	if (!(cuStreamCreate = sym(libcuda, "cuStreamCreate")) || !(cuStreamSynchronize = sym(libcuda, "cuStreamSynchronize")) ||
	    !(cuStreamBeginCapture_v2 = sym(libcuda, "cuStreamBeginCapture_v2")) ||
	    !(cuStreamEndCapture = sym(libcuda, "cuStreamEndCapture")) ||
	    !(cuGraphInstantiateWithFlags = sym(libcuda, "cuGraphInstantiateWithFlags")) ||
	    !(cuGraphLaunch = sym(libcuda, "cuGraphLaunch")))
		return -1;
	CUresult r;
	CUgraph g;
	if ((r = cuCtxSetCurrent(ctx)) || (r = cuStreamCreate(&gstream, 0)) || (r = cuStreamBeginCapture_v2(gstream, 2 /* RELAXED */)))
		return r;
	for (int i = 0; i < 100; i++)
		if ((r = cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, gstream, args3, NULL))) return r;
	if ((r = cuStreamEndCapture(gstream, &g)) || (r = cuGraphInstantiateWithFlags(&gexec, g, 0)))
		return r;
	/* one replay first: the first launch of an instance uploads it */
	if ((r = cuGraphLaunch(gexec, gstream)) || (r = cuStreamSynchronize(gstream)))
		return r;
	return 0;
}

static CUstream xstream;
static CUevent xevent;
static CUdeviceptr xdev;
static char *xhost;

/* extra_setup makes what the copy, stream and event loops use: a 4 KiB
 * device buffer and its malloc'd host twin, a stream with the default
 * flags (as the Go backend's NewStream) and an event recorded on it. Once;
 * 0 or the failing CUresult (-1: a symbol is missing). */
static int extra_setup(void) {
	static int done, result;
	if (done) return result;
	done = 1;
	if (!(cuMemcpyHtoD = sym(libcuda, "cuMemcpyHtoD_v2")) || !(cuMemcpyDtoH = sym(libcuda, "cuMemcpyDtoH_v2")) ||
	    !(cuStreamCreate = sym(libcuda, "cuStreamCreate")) || !(cuStreamSynchronize = sym(libcuda, "cuStreamSynchronize")) ||
	    !(cuEventCreate = sym(libcuda, "cuEventCreate")) || !(cuEventRecord = sym(libcuda, "cuEventRecord")))
		return result = -1;
	if (!(xhost = calloc(1, 4096))) return result = -1;
	CUresult r;
	if ((r = cuCtxSetCurrent(ctx)) || (r = cuMemAlloc(&xdev, 4096)) || (r = cuStreamCreate(&xstream, 0)) ||
	    (r = cuEventCreate(&xevent, 0)))
		return result = r;
	return result = 0;
}

/* slice times n of op; launches are drained after the clock stops. */
static double slice(enum op op, long n) {
	double t = now();
	switch (op) {
	case OP_SET_CURRENT:
		for (long i = 0; i < n; i++) CHECK(cuCtxSetCurrent(ctx));
		break;
	case OP_SYNCHRONIZE:
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuCtxSynchronize()); }
		break;
	case OP_SYNC_CONTEXT: /* the context named, none made current: what Synchronize does on CUDA 13 */
		if (!cuCtxSynchronize_v2) return -1;
		for (long i = 0; i < n; i++) CHECK(cuCtxSynchronize_v2(ctx));
		break;
	case OP_SYNC_ONLY:
		CHECK(cuCtxSetCurrent(ctx));
		t = now();
		for (long i = 0; i < n; i++) CHECK(cuCtxSynchronize());
		break;
	case OP_SET_LAUNCH3:
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, NULL, args3, NULL)); }
		break;
	case OP_SET_LAUNCH8:
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuLaunchKernel(nop8, 1, 1, 1, 1, 1, 1, 0, NULL, args8, NULL)); }
		break;
	case OP_LAUNCH3:
		CHECK(cuCtxSetCurrent(ctx));
		t = now();
		for (long i = 0; i < n; i++) CHECK(cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, NULL, args3, NULL));
		break;
	case OP_LAUNCH8:
		CHECK(cuCtxSetCurrent(ctx));
		t = now();
		for (long i = 0; i < n; i++) CHECK(cuLaunchKernel(nop8, 1, 1, 1, 1, 1, 1, 0, NULL, args8, NULL));
		break;
	case OP_LAUNCH100:
		CHECK(cuCtxSetCurrent(ctx));
		t = now();
		for (long i = 0; i < n; i++) {
			for (int k = 0; k < 100; k++) CHECK(cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, gstream, args3, NULL));
			CHECK(cuStreamSynchronize(gstream));
		}
		break;
	case OP_SET_HTOD4K:
		if (extra_setup()) return -1;
		t = now();
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuMemcpyHtoD(xdev, xhost, 4096)); }
		break;
	case OP_SET_DTOH4K:
		if (extra_setup()) return -1;
		t = now();
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuMemcpyDtoH(xhost, xdev, 4096)); }
		break;
	case OP_SET_STREAM_SYNC:
		if (extra_setup()) return -1;
		t = now();
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuStreamSynchronize(xstream)); }
		break;
	case OP_SET_EVENT_RECORD:
		if (extra_setup()) return -1;
		t = now();
		for (long i = 0; i < n; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuEventRecord(xevent, xstream)); }
		break;
	case OP_GRAPH100:
		CHECK(cuCtxSetCurrent(ctx));
		t = now();
		for (long i = 0; i < n; i++) {
			CHECK(cuGraphLaunch(gexec, gstream));
			CHECK(cuStreamSynchronize(gstream));
		}
		break;
	}
	double dt = now() - t;
	if (op >= OP_SET_LAUNCH3 && op <= OP_LAUNCH8) CHECK(cuCtxSynchronize());
	if (op == OP_SET_EVENT_RECORD) CHECK(cuStreamSynchronize(xstream));
	return dt;
}

#ifdef CFLOOR_LIB
/* Threads launching at once (cfloor_threads): each makes the context
 * current and launches nop3, per times, on its own stream or the shared
 * one, as the Go benchmark's goroutines do through the backend. */
#define CFLOOR_MAX_THREADS 64
static CUstream tstreams[CFLOOR_MAX_THREADS];
static pthread_barrier_t tbarrier;
struct tjob { CUstream stream; long per; CUresult r; };

static void *tmain(void *arg) {
	struct tjob *j = arg;
	pthread_barrier_wait(&tbarrier);
	for (long i = 0; i < j->per && !j->r; i++)
		if (!(j->r = cuCtxSetCurrent(ctx)))
			j->r = cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, j->stream, args3, NULL);
	return NULL;
}

static double threads(int n, long per, int shared) {
	if (n < 1 || n > CFLOOR_MAX_THREADS || extra_setup()) return -1;
	for (int i = 0; i < n; i++)
		if (!tstreams[i] && cuStreamCreate(&tstreams[i], 0)) return -1;
	pthread_t th[CFLOOR_MAX_THREADS];
	struct tjob jobs[CFLOOR_MAX_THREADS];
	pthread_barrier_init(&tbarrier, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct tjob){shared ? tstreams[0] : tstreams[i], per, 0};
		if (pthread_create(&th[i], NULL, tmain, &jobs[i])) { fprintf(stderr, "cfloor: pthread_create failed\n"); exit(1); }
	}
	pthread_barrier_wait(&tbarrier);
	double t = now();
	for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
	double dt = now() - t;
	pthread_barrier_destroy(&tbarrier);
	for (int i = 0; i < n; i++) {
		if (jobs[i].r) { fprintf(stderr, "cfloor: thread %d: cuLaunchKernel returned %d\n", i, jobs[i].r); exit(1); }
		CHECK(cuCtxSetCurrent(ctx));
		CHECK(cuStreamSynchronize(jobs[i].stream));
	}
	return dt;
}

int cfloor_open(const char *ptx) { return setup(ptx); }
int cfloor_graph_open(void) { return graph_setup(); }
long cfloor_slice(int op, long n) { return (long)slice((enum op)op, n); }
long cfloor_threads(int n, long per, int shared) { return (long)threads(n, per, shared); }
#else
int main(int argc, char **argv) {
	if (argc < 2) { fprintf(stderr, "usage: cfloor PTX [iterations] [repeats]\n"); return 2; }
	long iters = argc > 2 ? atol(argv[2]) : 200000;
	int repeats = argc > 3 ? atoi(argv[3]) : 5;
	int r0 = setup(argv[1]);
	if (r0) { fprintf(stderr, "cfloor: setup failed: %d\n", r0); return 1; }
	int graphs = graph_setup();
	if (graphs) fprintf(stderr, "cfloor: graph setup failed: %d; the graph loops are skipped\n", graphs);
	/* div: a loop of iters/div iterations (each of 100 launches for the graph loops) */
	static const struct { enum op op; const char *name; long div; } loops[] = {
		{OP_SET_CURRENT, "SetCurrent", 1}, {OP_SYNCHRONIZE, "Synchronize", 1}, {OP_SYNC_ONLY, "SyncOnly", 1},
		{OP_SYNC_CONTEXT, "SyncContext", 1},
		{OP_LAUNCH3, "Launch3Args", 10}, {OP_SET_LAUNCH3, "SetLaunch3Args", 10},
		{OP_LAUNCH8, "Launch8Args", 10}, {OP_SET_LAUNCH8, "SetLaunch8Args", 10},
		{OP_LAUNCH100, "Launch100Sync", 1000}, {OP_GRAPH100, "Graph100Sync", 1000},
		{OP_SET_HTOD4K, "SetHtoD4K", 10}, {OP_SET_DTOH4K, "SetDtoH4K", 10},
		{OP_SET_STREAM_SYNC, "SetStreamSync", 1}, {OP_SET_EVENT_RECORD, "SetEventRecord", 1},
	};
	for (int r = 0; r < repeats; r++) {
		for (size_t l = 0; l < sizeof loops / sizeof loops[0]; l++) {
			if (graphs && (loops[l].op == OP_LAUNCH100 || loops[l].op == OP_GRAPH100)) continue;
			if (loops[l].op == OP_SYNC_CONTEXT && !cuCtxSynchronize_v2) continue;
			long n = iters / loops[l].div;
			if (n < 1) n = 1;
			if (loops[l].op >= OP_SET_HTOD4K && extra_setup()) continue;
			printf("BenchmarkC_%s\t%ld\t%.2f ns/op\n", loops[l].name, n, slice(loops[l].op, n) / n);
		}
		fflush(stdout);
	}
	return 0;
}
#endif
