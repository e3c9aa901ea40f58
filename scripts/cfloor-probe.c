/*
 * The C floor of an exact probe, whole process: dlopen libcuda, cuInit,
 * count the devices and read each one's name and memory, as `flagshim info`
 * with FLAGOS_PROBE=exact does at least. scripts/probe-bench.py times it
 * against flagshim and nvidia-smi -L; scripts/proc-split.py reads the
 * "MONO <main start> <main end> <threads>" line it writes to stderr
 * (CLOCK_MONOTONIC, ns; the threads it has then) to split its cost into
 * start-up, main and exit.
 *
 * CFLOOR_EXIT=_exit ends it without the libraries' destructors, as Go's
 * os.Exit does; CFLOOR_THREADS=N starts N idle threads first, as a Go
 * runtime has, and CFLOOR_JOIN=1 ends them after the probe, before main's
 * end.
 *
 * Build: cc -O2 -o cfloor-probe scripts/cfloor-probe.c -ldl -lpthread
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long mono(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile int quit;

static void *idle(void *arg) {
	(void)arg;
	while (!quit) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(void) {
	long long start = mono();
	const char *extra = getenv("CFLOOR_THREADS"); /* idle threads, as a Go runtime has */
	int nextra = extra ? atoi(extra) : 0;
	pthread_t idlers[64];
	if (nextra > 64) nextra = 64;
	for (int i = 0; i < nextra; i++) pthread_create(&idlers[i], NULL, idle, NULL);
	const char *path = getenv("FLAGOS_LIBCUDA_PATH");
	void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
	int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
	int (*get)(int *, int) = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
	int (*name)(char *, int, int) = (int (*)(char *, int, int))dlsym(lib, "cuDeviceGetName");
	int (*mem)(size_t *, int) = (int (*)(size_t *, int))dlsym(lib, "cuDeviceTotalMem_v2");
	if (!init || !count || !get || !name || !mem) { fprintf(stderr, "missing symbols\n"); return 1; }
	int n = 0;
	if (init(0) || count(&n)) return 1;
	for (int i = 0; i < n; i++) {
		int d;
		char buf[256];
		size_t bytes;
		if (get(&d, i) || name(buf, sizeof buf, d) || mem(&bytes, d)) return 1;
		printf("cuda:%d: %s (%zu bytes)\n", i, buf, bytes);
	}
	if (getenv("CFLOOR_JOIN")) { /* the idle threads end before main does */
		quit = 1;
		for (int i = 0; i < nextra; i++) pthread_join(idlers[i], NULL);
	}
	long long end = mono();
	int threads = 0;
	DIR *task = opendir("/proc/self/task");
	for (struct dirent *e; task && (e = readdir(task));)
		threads += e->d_name[0] != '.';
	if (task) closedir(task);
	fprintf(stderr, "MONO %lld %lld %d\n", start, end, threads);
	const char *how = getenv("CFLOOR_EXIT");
	if (how && !strcmp(how, "_exit")) { /* skip the libraries' destructors, as Go's os.Exit does */
		fflush(stdout);
		_exit(0);
	}
	return 0;
}
