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
 */
#include <dlfcn.h>
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
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);

static void *sym(void *lib, const char *name) {
	void *p = dlsym(lib, name);
	if (!p) { fprintf(stderr, "cfloor: %s: %s\n", name, dlerror()); exit(1); }
	return p;
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

int main(int argc, char **argv) {
	if (argc < 2) { fprintf(stderr, "usage: cfloor PTX [iterations] [repeats]\n"); return 2; }
	long iters = argc > 2 ? atol(argv[2]) : 200000;
	int repeats = argc > 3 ? atoi(argv[3]) : 5;
	const char *path = getenv("FLAGOS_LIBCUDA_PATH");
	void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { fprintf(stderr, "cfloor: %s\n", dlerror()); return 1; }
	cuInit = sym(lib, "cuInit");
	cuDeviceGet = sym(lib, "cuDeviceGet");
	cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
	cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
	cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
	cuModuleLoadData = sym(lib, "cuModuleLoadData");
	cuModuleGetFunction = sym(lib, "cuModuleGetFunction");
	cuMemAlloc = sym(lib, "cuMemAlloc_v2");
	cuLaunchKernel = sym(lib, "cuLaunchKernel");

	int dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction nop3, nop8;
	CUdeviceptr p;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, slurp(argv[1])));
	CHECK(cuModuleGetFunction(&nop3, mod, "nop3"));
	CHECK(cuModuleGetFunction(&nop8, mod, "nop8"));
	CHECK(cuMemAlloc(&p, 64));

	CUdeviceptr a0 = p, a1 = p + 8, a4 = 1ULL << 40, a5 = 3;
	unsigned a2 = 1000, a3 = 7;
	float a6 = 0.5f;
	double a7 = 2.5;
	void *args3[] = {&a0, &a1, &a2};
	void *args8[] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7};

	for (int r = 0; r < repeats; r++) {
		double t = now();
		for (long i = 0; i < iters; i++) CHECK(cuCtxSetCurrent(ctx));
		printf("BenchmarkC_SetCurrent\t%ld\t%.2f ns/op\n", iters, (now() - t) / iters);

		t = now();
		for (long i = 0; i < iters; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuCtxSynchronize()); }
		printf("BenchmarkC_Synchronize\t%ld\t%.2f ns/op\n", iters, (now() - t) / iters);

		t = now();
		for (long i = 0; i < iters; i++) CHECK(cuCtxSynchronize());
		printf("BenchmarkC_SyncOnly\t%ld\t%.2f ns/op\n", iters, (now() - t) / iters);

		long li = iters / 10;
		t = now();
		for (long i = 0; i < li; i++) CHECK(cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, NULL, args3, NULL));
		printf("BenchmarkC_Launch3Args\t%ld\t%.2f ns/op\n", li, (now() - t) / li);
		CHECK(cuCtxSynchronize());
		t = now();
		for (long i = 0; i < li; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuLaunchKernel(nop3, 1, 1, 1, 1, 1, 1, 0, NULL, args3, NULL)); }
		printf("BenchmarkC_SetLaunch3Args\t%ld\t%.2f ns/op\n", li, (now() - t) / li);
		CHECK(cuCtxSynchronize());
		t = now();
		for (long i = 0; i < li; i++) CHECK(cuLaunchKernel(nop8, 1, 1, 1, 1, 1, 1, 0, NULL, args8, NULL));
		printf("BenchmarkC_Launch8Args\t%ld\t%.2f ns/op\n", li, (now() - t) / li);
		CHECK(cuCtxSynchronize());
		t = now();
		for (long i = 0; i < li; i++) { CHECK(cuCtxSetCurrent(ctx)); CHECK(cuLaunchKernel(nop8, 1, 1, 1, 1, 1, 1, 0, NULL, args8, NULL)); }
		printf("BenchmarkC_SetLaunch8Args\t%ld\t%.2f ns/op\n", li, (now() - t) / li);
		CHECK(cuCtxSynchronize());
		fflush(stdout);
	}
	return 0;
}
