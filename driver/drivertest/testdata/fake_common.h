/*
 * Behaviour shared by the fake driver libraries (fake_cufamily.c: libcuda,
 * libmusa and other CUDA-shaped driver APIs; fake_hipfamily.c: libamdhip64,
 * libtopsrt, libmcruntime; the fakes of drivers/mlu, drivers/npu and
 * drivers/kunlunxin). Each fake defines the
 * real exported symbols with their real C signatures and forwards to the
 * static functions here. Tests build them with `go env CC` -shared -fPIC.
 *
 * Environment, read once when the library is loaded. Each variable may also
 * be given for one vendor, FAKE_CUDA_<NAME>, FAKE_MUSA_<NAME> or
 * FAKE_HIP_<NAME>, which wins over FAKE_<NAME>: a process can then load
 * several fakes with different behaviour (a stub libcuda beside a working
 * libmusa, say).
 *   FAKE_STUB=1            every call returns 34 (*_ERROR_STUB_LIBRARY)
 *   FAKE_INIT_RESULT=N     what cuInit returns (default 0)
 *   FAKE_DEVICE_COUNT=N    devices (default 2, at most FAKE_MAX_DEVICES: 16)
 *   FAKE_DEVICE_NAMES=a,b  device names (default "Fake GPU <i>")
 *   FAKE_TOTAL_MEM=bytes   memory of every device (default 80 GiB)
 *   FAKE_CC=9.0            compute capability (default 9.0)
 *   FAKE_SM_COUNT=N        multiprocessors (default 132)
 *   FAKE_DRIVER_VERSION=N  the encoded driver version (default FAKE_DEFAULT_VERSION)
 *   FAKE_SYNC_RESULT=N     what cuCtxSynchronize returns with a context current
 *   FAKE_LOG=/abs/file     append "load" when loaded and "init" per cuInit
 *   FAKE_INIT_SLEEP_MS=N   cuInit sleeps N ms first (a hanging driver)
 *   FAKE_INIT_CRASH=segv   cuInit crashes (segv: SIGSEGV; abort: SIGABRT)
 *   FAKE_INIT_AWAIT=/abs/file  cuInit first waits until that file holds a line
 *                          "init" (another fake's FAKE_LOG), at most 10 s, and
 *                          returns 999 (*_ERROR_UNKNOWN) when it never does: a
 *                          test then proves two drivers' inits overlapped
 *   FAKE_INIT_HELPER=/abs/prefix  cuInit forks a helper that keeps every
 *                          inherited descriptor and exits once <prefix>.release
 *                          exists (at most 20 s), creating <prefix>.exited
 *                          first; cuInit writes its pid to <prefix>.pid
 *   FAKE_RAW_COUNT=N       cuDeviceGetCount answers N, unchecked (a broken driver)
 *   FAKE_INIT_CPUS=/abs/file  cuInit writes there how many CPUs its thread may
 *                          run on (its affinity), one line
 *   FAKE_INIT_STDOUT=text  cuInit prints the text on standard output first
 *
 * Modules and memory (module section below). Device memory is host memory
 * (calloc); CUdeviceptr is its address. Every allocation and module global is
 * tracked, and copies, frees and launches outside them are errors, so a
 * binding that swaps arguments fails loudly. A module image is text:
 *   fake-module                          the first line, else *_ERROR_INVALID_IMAGE (200)
 *   global NAME SIZE                     a global of SIZE zeroed bytes
 *   function NAME KIND [TYPE...]         a kernel; TYPE: ptr u64 i64 f64 (8 bytes), u32 i32 f32 (4)
 *   error TEXT                           the load fails with *_ERROR_INVALID_PTX (218) and TEXT
 *                                        in the JIT error log (cuModuleLoadDataEx)
 * KINDs: add (a, b, c, n): c[i] = a[i] + b[i] as floats for i < min(n, threads),
 * the parameters of plugins/nvshmem/testdata/add.cu; inc (p, n): p[i] += 1 as
 * unsigned 32-bit counters for i < min(n, threads); echo (out, x...): copies
 * each x (its TYPE's size) into 8-byte slots of out, zeroed first; nop;
 * fail: the launch returns *_ERROR_LAUNCH_FAILED (719).
 * Modules belong to the context current at load; getting a function or a
 * global, launching and unloading with another context current is
 * *_ERROR_INVALID_CONTEXT (201); a dead handle is *_ERROR_INVALID_HANDLE
 * (400). fake_live_modules() and fake_live_allocs() (exported) count what is
 * loaded and allocated, for leak checks.
 *
 * Device handles are ordinal+1000, so a binding that passes ordinals where
 * handles are due gets *_ERROR_INVALID_DEVICE. Contexts are current per
 * thread, as in the real drivers: cuCtxSynchronize without a current context
 * returns *_ERROR_INVALID_CONTEXT.
 */
#pragma GCC diagnostic ignored "-Wunused-function"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/types.h>

#ifndef FAKE_ERR_PREFIX
#error "define FAKE_ERR_PREFIX (\"CUDA_\", \"MUSA_\" or \"HIP_\") before including fake_common.h"
#endif

/* The most devices FAKE_DEVICE_COUNT gives; scripts/scale-bench.sh builds
 * the fake with -DFAKE_MAX_DEVICES=4096 (flagshim's bound). */
#ifndef FAKE_MAX_DEVICES
#define FAKE_MAX_DEVICES 16
#endif
#define FAKE_HANDLE_BASE 1000

struct fake_ctx { int ordinal; int retained; unsigned long long used; };

static struct {
	int stub, init_result, count, sm, major, minor, version, sync_result;
	int init_sleep_ms, raw_count, has_raw_count;
	const char *init_crash;
	unsigned long long total_mem;
	char names[FAKE_MAX_DEVICES][128];
	const char *log;
	int initialized;
	struct fake_ctx ctx[FAKE_MAX_DEVICES];
} fake;

static __thread struct fake_ctx *fake_current;

/* fake_getenv reads FAKE_<vendor>_<name>, else FAKE_<name>. */
static const char *fake_getenv(const char *name) {
	char k[128];
	snprintf(k, sizeof k, "FAKE_%s%s", FAKE_ERR_PREFIX, name);
	const char *v = getenv(k);
	if (v && *v) return v;
	snprintf(k, sizeof k, "FAKE_%s", name);
	return getenv(k);
}

static int fake_env_int(const char *name, int def) {
	const char *v = fake_getenv(name);
	return v && *v ? atoi(v) : def;
}

static void fake_log(const char *what) {
	if (!fake.log || !*fake.log) return;
	FILE *f = fopen(fake.log, "a");
	if (!f) return;
	fprintf(f, "%s\n", what);
	fclose(f);
}

__attribute__((constructor)) static void fake_load(void) {
	fake.stub = fake_env_int("STUB", 0);
	fake.init_result = fake_env_int("INIT_RESULT", 0);
	fake.count = fake_env_int("DEVICE_COUNT", 2);
	if (fake.count > FAKE_MAX_DEVICES) fake.count = FAKE_MAX_DEVICES;
	fake.sm = fake_env_int("SM_COUNT", 132);
	fake.version = fake_env_int("DRIVER_VERSION", FAKE_DEFAULT_VERSION);
	fake.sync_result = fake_env_int("SYNC_RESULT", 0);
	fake.init_sleep_ms = fake_env_int("INIT_SLEEP_MS", 0);
	fake.init_crash = fake_getenv("INIT_CRASH");
	const char *raw = fake_getenv("RAW_COUNT");
	if (raw && *raw) { fake.has_raw_count = 1; fake.raw_count = atoi(raw); }
	const char *m = fake_getenv("TOTAL_MEM");
	fake.total_mem = m && *m ? strtoull(m, NULL, 10) : 80ULL << 30;
	const char *cc = fake_getenv("CC");
	fake.major = 9; fake.minor = 0;
	if (cc && *cc) sscanf(cc, "%d.%d", &fake.major, &fake.minor);
	for (int i = 0; i < FAKE_MAX_DEVICES; i++) {
		snprintf(fake.names[i], sizeof fake.names[i], "Fake GPU %d", i);
		fake.ctx[i].ordinal = i;
	}
	const char *names = fake_getenv("DEVICE_NAMES");
	if (names && *names) {
		char buf[2048];
		snprintf(buf, sizeof buf, "%s", names);
		int i = 0;
		for (char *save, *t = strtok_r(buf, ",", &save); t && i < FAKE_MAX_DEVICES; t = strtok_r(NULL, ",", &save))
			snprintf(fake.names[i++], sizeof fake.names[0], "%s", t);
	}
	fake.log = fake_getenv("LOG");
	fake_log("load");
}

/* Every call but the version and error queries fails before a successful init. */
#define FAKE_GUARD() do { \
	if (fake.stub) return 34; \
	if (!fake.initialized) return 3; \
} while (0)

static int fake_ordinal(int dev) {
	int i = dev - FAKE_HANDLE_BASE;
	return i >= 0 && i < fake.count ? i : -1;
}

/* fake_await_init waits (at most 10 s) for path to hold a line "init". */
static int fake_await_init(const char *path) {
	for (int i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			char line[64];
			int seen = 0;
			while (!seen && fgets(line, sizeof line, f)) seen = !strcmp(line, "init\n");
			fclose(f);
			if (seen) return 1;
		}
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* fake_spawn_helper forks a process that outlives the caller's use of the
 * driver, as a runtime's helper daemon would, holding every descriptor it
 * inherited, and exits once <prefix>.release exists, or after 20 s. The
 * caller writes the helper's pid to <prefix>.pid before init goes on, so
 * the file is there whenever init has returned (written by the helper, it
 * could come after the answer on a loaded machine). Only
 * async-signal-safe calls in the helper: the caller may be multi-threaded. */
static void fake_spawn_helper(const char *prefix) {
	char pidfile[4096], release[4096], exited[4096];
	snprintf(pidfile, sizeof pidfile, "%s.pid", prefix);
	snprintf(release, sizeof release, "%s.release", prefix);
	snprintf(exited, sizeof exited, "%s.exited", prefix);
	pid_t pid = fork();
	if (pid < 0) return;
	if (pid > 0) {
		FILE *f = fopen(pidfile, "w");
		if (f) { fprintf(f, "%ld", (long)pid); fclose(f); }
		return;
	}
	int fd;
	for (int i = 0; i < 20000 && access(release, F_OK) != 0; i++) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	fd = open(exited, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) close(fd);
	_exit(0);
}

/* fake_write_cpus writes to path how many CPUs the calling thread may run on. */
static void fake_write_cpus(const char *path) {
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0) return;
	FILE *f = fopen(path, "w");
	if (!f) return;
	fprintf(f, "%d\n", CPU_COUNT(&set));
	fclose(f);
}

static int fake_init(unsigned int flags) {
	fake_log("init");
	const char *chatter = fake_getenv("INIT_STDOUT");
	if (chatter && *chatter) { /* a driver that talks on standard output */
		printf("fake driver: %s\n", chatter);
		fflush(stdout);
	}
	const char *cpus = fake_getenv("INIT_CPUS");
	if (cpus && *cpus) fake_write_cpus(cpus);
	const char *helper = fake_getenv("INIT_HELPER");
	if (helper && *helper) fake_spawn_helper(helper);
	const char *await = fake_getenv("INIT_AWAIT");
	if (await && *await && !fake_await_init(await)) return 999;
	if (fake.init_sleep_ms > 0) {
		struct timespec ts = { fake.init_sleep_ms / 1000, (long)(fake.init_sleep_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0) {}
	}
	if (fake.init_crash && !strcmp(fake.init_crash, "segv")) { volatile int *p = NULL; *p = 1; }
	if (fake.init_crash && !strcmp(fake.init_crash, "abort")) abort();
	if (fake.stub) return 34;
	if (flags != 0) return 1;
	if (fake.init_result) return fake.init_result;
	fake.initialized = 1;
	return 0;
}

static int fake_driver_get_version(int *v) {
	if (!v) return 1;
	if (fake.stub) return 34;
	*v = fake.version;
	return 0;
}

static int fake_device_get_count(int *n) {
	FAKE_GUARD();
	if (!n) return 1;
	*n = fake.has_raw_count ? fake.raw_count : fake.count;
	return 0;
}

static int fake_device_get(int *dev, int ordinal) {
	FAKE_GUARD();
	if (!dev) return 1;
	if (ordinal < 0 || ordinal >= fake.count) return 101;
	*dev = ordinal + FAKE_HANDLE_BASE;
	return 0;
}

static int fake_device_get_name(char *name, int len, int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
	if (!name || len <= 0) return 1;
	snprintf(name, (size_t)len, "%s", fake.names[i]);
	return 0;
}

static int fake_device_total_mem(unsigned long long *bytes, int dev) {
	FAKE_GUARD();
	if (fake_ordinal(dev) < 0) return 101;
	if (!bytes) return 1;
	*bytes = fake.total_mem;
	return 0;
}

static int fake_dma_buf_supported(void);
static int fake_device_get_attribute(int *v, int attr, int dev) {
	FAKE_GUARD();
	if (fake_ordinal(dev) < 0) return 101;
	if (!v) return 1;
	switch (attr) {
	case 16: *v = fake.sm; return 0;
	case 75: *v = fake.major; return 0;
	case 76: *v = fake.minor; return 0;
	case 124: *v = fake_dma_buf_supported(); return 0; /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (fake_ops.h) */
	}
	return 1;
}

static int fake_device_get_uuid(unsigned char *uuid, int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
#ifdef FAKE_UUID_TEXT
	/* ROCm's form: the 16 hex digits of the UUID's body as characters, no
	 * NUL (driver.UUIDHexText): device 0 is "1011121314151617". */
	static const char hex[] = "0123456789abcdef";
	for (int k = 0; k < 8; k++) {
		unsigned b = (unsigned)(0x10 * (i + 1) + k);
		uuid[2 * k] = (unsigned char)hex[b >> 4];
		uuid[2 * k + 1] = (unsigned char)hex[b & 15];
	}
#else
	for (int k = 0; k < 16; k++) uuid[k] = (unsigned char)(0x10 * (i + 1) + k);
#endif
	return 0;
}

static int fake_device_get_pci_bus_id(char *id, int len, int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
	if (!id || len < 13) return 1;
	snprintf(id, (size_t)len, "00000000:%02X:00.0", 0x18 + i);
	return 0;
}

static int fake_primary_ctx_retain(void **pctx, int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
	if (!pctx) return 1;
	__atomic_add_fetch(&fake.ctx[i].retained, 1, __ATOMIC_SEQ_CST);
	*pctx = &fake.ctx[i];
	return 0;
}

static int fake_primary_ctx_release(int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
	__atomic_sub_fetch(&fake.ctx[i].retained, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int fake_ctx_set_current(void *ctx) {
	FAKE_GUARD();
	struct fake_ctx *c = ctx;
	if (c && (c < &fake.ctx[0] || c >= &fake.ctx[fake.count] || c->retained <= 0)) return 201;
	fake_current = c;
	return 0;
}

/* fake_set_device selects a device on the calling thread (hipSetDevice):
 * the runtime's own context of that device becomes current. */
static int fake_set_device(int ordinal) {
	FAKE_GUARD();
	if (ordinal < 0 || ordinal >= fake.count) return 101;
	if (__atomic_load_n(&fake.ctx[ordinal].retained, __ATOMIC_SEQ_CST) == 0)
		__atomic_store_n(&fake.ctx[ordinal].retained, 1, __ATOMIC_SEQ_CST);
	fake_current = &fake.ctx[ordinal];
	return 0;
}

static int fake_get_device(int *ordinal) {
	FAKE_GUARD();
	if (!ordinal) return 1;
	*ordinal = fake_current ? fake_current->ordinal : 0;
	return 0;
}

static int fake_ctx_get_current(void **pctx) {
	FAKE_GUARD();
	if (!pctx) return 1;
	*pctx = fake_current;
	return 0;
}

static int fake_sync_ctx(struct fake_ctx *c);

static int fake_ctx_synchronize(void) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	int r = fake_sync_ctx(fake_current);
	return r ? r : fake.sync_result;
}

/* fake_ctx_synchronize_of waits for ctx's work whether or not it is
 * current (CUDA 13's cuCtxSynchronize_v2); NULL is the current context. The
 * calling thread's current context stays as it was. */
static int fake_nctx_syncs;
static int fake_ctx_synchronize_of(void *ctx) {
	FAKE_GUARD();
	struct fake_ctx *c = ctx ? ctx : fake_current;
	if (!c || c < &fake.ctx[0] || c >= &fake.ctx[fake.count] || c->retained <= 0) return 201;
	__atomic_add_fetch(&fake_nctx_syncs, 1, __ATOMIC_SEQ_CST);
	int r = fake_sync_ctx(c);
	return r ? r : fake.sync_result;
}

static int fake_mem_get_info(unsigned long long *free_, unsigned long long *total) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!free_ || !total) return 1;
	*total = fake.total_mem;
	*free_ = fake.total_mem - __atomic_load_n(&fake_current->used, __ATOMIC_SEQ_CST);
	return 0;
}

static int fake_error_name(int code, const char **s) {
	if (!s) return 1;
	switch (code) {
	case 0: *s = FAKE_ERR_PREFIX "SUCCESS"; return 0;
	case 1: *s = FAKE_ERR_PREFIX "ERROR_INVALID_VALUE"; return 0;
	case 2: *s = FAKE_ERR_PREFIX "ERROR_OUT_OF_MEMORY"; return 0;
	case 600: *s = FAKE_ERR_PREFIX "ERROR_NOT_READY"; return 0;
	case 3: *s = FAKE_ERR_PREFIX "ERROR_NOT_INITIALIZED"; return 0;
	case 34: *s = FAKE_ERR_PREFIX "ERROR_STUB_LIBRARY"; return 0;
	case 100: *s = FAKE_ERR_PREFIX "ERROR_NO_DEVICE"; return 0;
	case 101: *s = FAKE_ERR_PREFIX "ERROR_INVALID_DEVICE"; return 0;
	case 200: *s = FAKE_ERR_PREFIX "ERROR_INVALID_IMAGE"; return 0;
	case 201: *s = FAKE_ERR_PREFIX "ERROR_INVALID_CONTEXT"; return 0;
	case 218: *s = FAKE_ERR_PREFIX "ERROR_INVALID_PTX"; return 0;
	case 400: *s = FAKE_ERR_PREFIX "ERROR_INVALID_HANDLE"; return 0;
	case 401: *s = FAKE_ERR_PREFIX "ERROR_ILLEGAL_STATE"; return 0;
	case 900: *s = FAKE_ERR_PREFIX "ERROR_STREAM_CAPTURE_UNSUPPORTED"; return 0;
	case 901: *s = FAKE_ERR_PREFIX "ERROR_STREAM_CAPTURE_INVALIDATED"; return 0;
	case 500: *s = FAKE_ERR_PREFIX "ERROR_NOT_FOUND"; return 0;
	case 719: *s = FAKE_ERR_PREFIX "ERROR_LAUNCH_FAILED"; return 0;
	case 700: *s = FAKE_ERR_PREFIX "ERROR_ILLEGAL_ADDRESS"; return 0;
	case 803: *s = FAKE_ERR_PREFIX "ERROR_SYSTEM_DRIVER_MISMATCH"; return 0;
	case 804: *s = FAKE_ERR_PREFIX "ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"; return 0;
	case 999: *s = FAKE_ERR_PREFIX "ERROR_UNKNOWN"; return 0;
	}
	*s = NULL;
	return 1;
}

static int fake_error_string(int code, const char **s) {
	if (!s) return 1;
	switch (code) {
	case 2: *s = "fake: out of memory"; return 0;
	case 34: *s = "fake: stub library"; return 0;
	case 100: *s = "fake: no " FAKE_ERR_PREFIX " capable device is detected"; return 0;
	case 201: *s = "fake: invalid device context"; return 0;
	case 500: *s = "fake: named symbol not found"; return 0;
	case 700: *s = "fake: an illegal memory access was encountered"; return 0;
	case 803: *s = "fake: system has unsupported display driver / driver combination"; return 0;
	}
	*s = NULL;
	return 1;
}

/* ---- modules and memory ---- */

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_PARAMS 64
enum { FK_NOP, FK_ADD, FK_ECHO, FK_FAIL, FK_INC };

struct fake_alloc { uintptr_t p; size_t n; int global; struct fake_ctx *ctx; struct fake_alloc *next; };
struct fake_global { char name[128]; size_t size; uintptr_t p; };
struct fake_module;
struct fake_func { char name[128]; int kind, nparams; int psize[FAKE_MAX_PARAMS]; struct fake_module *mod; };
struct fake_module {
	int live;
	struct fake_ctx *ctx;
	int nglobals, nfuncs;
	struct fake_global globals[16];
	struct fake_func funcs[16];
	struct fake_module *next;
};

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_module *fake_modules; /* every module ever loaded; never freed, so stale handles stay readable */
static struct fake_alloc *fake_allocs;   /* live allocations and globals */
static int fake_nmodules, fake_nallocs;

/* fake_current_ordinal is the device whose context is current on the
 * calling thread, -1 when none (for other fakes that check their callers
 * made a context current: plugins/nvshmem's fake NVSHMEM). */
FAKE_EXPORT int fake_current_ordinal(void) { return fake_current ? fake_current->ordinal : -1; }
/* fake_context_syncs counts the waits for a named context (see
 * fake_ctx_synchronize_of). */
FAKE_EXPORT int fake_context_syncs(void) { return __atomic_load_n(&fake_nctx_syncs, __ATOMIC_SEQ_CST); }

FAKE_EXPORT int fake_live_modules(void) {
	pthread_mutex_lock(&fake_mu);
	int n = fake_nmodules;
	pthread_mutex_unlock(&fake_mu);
	return n;
}

FAKE_EXPORT int fake_live_allocs(void) {
	pthread_mutex_lock(&fake_mu);
	int n = fake_nallocs;
	pthread_mutex_unlock(&fake_mu);
	return n;
}

/* fake_track records [p, p+n); fake_mu held. */
static void fake_track(uintptr_t p, size_t n, int global) {
	struct fake_alloc *a = calloc(1, sizeof *a);
	a->p = p; a->n = n; a->global = global; a->next = fake_allocs;
	fake_allocs = a;
	if (!global) fake_nallocs++;
}

/* fake_untrack forgets the allocation starting at p; 0 when there is none
 * of that kind. fake_mu held. A device allocation gives its bytes back to
 * its context. */
static int fake_untrack(uintptr_t p, int global) {
	for (struct fake_alloc **pp = &fake_allocs; *pp; pp = &(*pp)->next) {
		struct fake_alloc *a = *pp;
		if (a->p == p && a->global == global) {
			*pp = a->next;
			if (a->ctx) __atomic_sub_fetch(&a->ctx->used, a->n, __ATOMIC_SEQ_CST);
			free(a);
			if (!global) fake_nallocs--;
			return 1;
		}
	}
	return 0;
}

/* fake_valid reports whether [p, p+n) lies inside one tracked block. */
static int fake_valid(uintptr_t p, size_t n) {
	pthread_mutex_lock(&fake_mu);
	int ok = 0;
	for (struct fake_alloc *a = fake_allocs; a; a = a->next)
		if (p >= a->p && p + n <= a->p + a->n && p + n >= p) { ok = 1; break; }
	pthread_mutex_unlock(&fake_mu);
	return ok;
}

static int fake_type_size(const char *t) {
	if (!strcmp(t, "ptr") || !strcmp(t, "u64") || !strcmp(t, "i64") || !strcmp(t, "f64")) return 8;
	if (!strcmp(t, "u32") || !strcmp(t, "i32") || !strcmp(t, "f32")) return 4;
	return 0;
}

static void fake_jit_log(char *buf, size_t size, const char *fmt, const char *a, int n) {
	if (!buf || !size) return;
	snprintf(buf, size, fmt, a, n);
}

/* fake_parse fills m from the text image; the result code, with a message
 * in log on failure. */
static int fake_parse(struct fake_module *m, const char *image, char *log, size_t logsize) {
	if (strncmp(image, "fake-module", 11) != 0 || (image[11] != '\n' && image[11] != 0)) {
		fake_jit_log(log, logsize, "fake: %snot a fake module image (line %d)", "", 1);
		return 200;
	}
	char line[512];
	const char *p = image;
	int lineno = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= sizeof line) len = sizeof line - 1;
		memcpy(line, p, len);
		line[len] = 0;
		p = e ? e + 1 : p + strlen(p);
		lineno++;
		if (lineno == 1) continue;
		char *save, *w = strtok_r(line, " \t\r", &save);
		if (!w || w[0] == '#') continue;
		if (!strcmp(w, "global")) {
			char *name = strtok_r(NULL, " \t\r", &save), *size = strtok_r(NULL, " \t\r", &save);
			if (!name || !size || m->nglobals == 16 || atoi(size) <= 0) {
				fake_jit_log(log, logsize, "fake: %sbad global at line %d", "", lineno);
				return 200;
			}
			struct fake_global *g = &m->globals[m->nglobals++];
			snprintf(g->name, sizeof g->name, "%s", name);
			g->size = (size_t)atoi(size);
		} else if (!strcmp(w, "function")) {
			char *name = strtok_r(NULL, " \t\r", &save), *kind = strtok_r(NULL, " \t\r", &save);
			if (!name || !kind || m->nfuncs == 16) {
				fake_jit_log(log, logsize, "fake: %sbad function at line %d", "", lineno);
				return 200;
			}
			struct fake_func *f = &m->funcs[m->nfuncs++];
			snprintf(f->name, sizeof f->name, "%s", name);
			f->mod = m;
			if (!strcmp(kind, "add")) {
				f->kind = FK_ADD; f->nparams = 4;
				f->psize[0] = f->psize[1] = f->psize[2] = 8; f->psize[3] = 4;
			} else if (!strcmp(kind, "inc")) {
				f->kind = FK_INC; f->nparams = 2;
				f->psize[0] = 8; f->psize[1] = 4;
			} else if (!strcmp(kind, "echo")) f->kind = FK_ECHO;
			else if (!strcmp(kind, "nop")) f->kind = FK_NOP;
			else if (!strcmp(kind, "fail")) f->kind = FK_FAIL;
			else {
				fake_jit_log(log, logsize, "fake: unknown kind %s at line %d", kind, lineno);
				return 200;
			}
			for (char *t; f->kind != FK_ADD && f->kind != FK_INC && (t = strtok_r(NULL, " \t\r", &save));) {
				int sz = fake_type_size(t);
				if (!sz || f->nparams == FAKE_MAX_PARAMS) {
					fake_jit_log(log, logsize, "fake: bad parameter type %s at line %d", t, lineno);
					return 200;
				}
				f->psize[f->nparams++] = sz;
			}
		} else if (!strcmp(w, "error")) {
			char *rest = strtok_r(NULL, "\r", &save);
			fake_jit_log(log, logsize, "%s (line %d)", rest ? rest : "error", lineno);
			return 218;
		} else {
			fake_jit_log(log, logsize, "fake: unknown directive %s at line %d", w, lineno);
			return 200;
		}
	}
	return 0;
}

static int fake_module_load(void **pmod, const void *image, char *log, size_t logsize) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!pmod || !image) return 1;
	struct fake_module *m = calloc(1, sizeof *m);
	int r = fake_parse(m, image, log, logsize);
	if (r) { free(m); return r; }
	m->ctx = fake_current;
	m->live = 1;
	pthread_mutex_lock(&fake_mu);
	for (int i = 0; i < m->nglobals; i++) {
		m->globals[i].p = (uintptr_t)calloc(1, m->globals[i].size);
		fake_track(m->globals[i].p, m->globals[i].size, 1);
	}
	m->next = fake_modules;
	fake_modules = m;
	fake_nmodules++;
	pthread_mutex_unlock(&fake_mu);
	if (log && logsize) log[0] = 0;
	*pmod = m;
	return 0;
}

/* fake_module_check: 0 when m is a live module of the current context. */
static int fake_module_check(struct fake_module *m) {
	if (!fake_current) return 201;
	pthread_mutex_lock(&fake_mu);
	int known = 0;
	for (struct fake_module *x = fake_modules; x; x = x->next)
		if (x == m) { known = 1; break; }
	int live = known && m->live;
	pthread_mutex_unlock(&fake_mu);
	if (!live) return 400;
	return m->ctx == fake_current ? 0 : 201;
}

static int fake_module_load_data_ex(void **pmod, const void *image, unsigned n, const int *opts, void **vals) {
	char *log = NULL;
	size_t size = 0;
	if (n && (!opts || !vals)) return 1;
	for (unsigned i = 0; i < n; i++) {
		if (opts[i] == 5) log = vals[i];
		else if (opts[i] == 6) size = (size_t)(uintptr_t)vals[i];
	}
	return fake_module_load(pmod, image, log, size);
}

static int fake_module_unload(void *mod) {
	FAKE_GUARD();
	struct fake_module *m = mod;
	int r = fake_module_check(m);
	if (r) return r;
	pthread_mutex_lock(&fake_mu);
	if (!m->live) { pthread_mutex_unlock(&fake_mu); return 400; }
	m->live = 0;
	fake_nmodules--;
	for (int i = 0; i < m->nglobals; i++) {
		fake_untrack(m->globals[i].p, 1);
		free((void *)m->globals[i].p);
	}
	pthread_mutex_unlock(&fake_mu);
	return 0;
}

static int fake_module_get_global(unsigned long long *dptr, size_t *bytes, void *mod, const char *name) {
	FAKE_GUARD();
	if (!name) return 1;
	struct fake_module *m = mod;
	int r = fake_module_check(m);
	if (r) return r;
	for (int i = 0; i < m->nglobals; i++)
		if (!strcmp(m->globals[i].name, name)) {
			if (dptr) *dptr = m->globals[i].p;
			if (bytes) *bytes = m->globals[i].size;
			return 0;
		}
	return 500;
}

static int fake_module_get_function(void **pf, void *mod, const char *name) {
	FAKE_GUARD();
	if (!pf || !name) return 1;
	struct fake_module *m = mod;
	int r = fake_module_check(m);
	if (r) return r;
	for (int i = 0; i < m->nfuncs; i++)
		if (!strcmp(m->funcs[i].name, name)) { *pf = &m->funcs[i]; return 0; }
	return 500;
}

/* fake_func_get_param_info is cuFuncGetParamInfo: parameter index's offset
 * (each aligned to its size) and size; 1 (*_ERROR_INVALID_VALUE) past the
 * last parameter, as CUDA answers. */
static int fake_func_get_param_info(void *fn, size_t index, size_t *offset, size_t *size) {
	FAKE_GUARD();
	struct fake_func *f = fn;
	if (!f || !offset || !size) return 1;
	if (index >= (size_t)f->nparams) return 1;
	size_t off = 0;
	for (size_t i = 0; i <= index; i++) {
		size_t s = (size_t)f->psize[i];
		off = (off + s - 1) / s * s;
		if (i < index) off += s;
	}
	*offset = off;
	*size = (size_t)f->psize[index];
	return 0;
}

/* fake_run executes kernel f over threads threads with its parameters. */
static int fake_run(struct fake_func *f, unsigned long long threads, void **params) {
	switch (f->kind) {
	case FK_FAIL:
		return 719;
	case FK_ADD: {
		float *a = *(float **)params[0], *b = *(float **)params[1], *c = *(float **)params[2];
		unsigned n = *(unsigned *)params[3];
		unsigned long long m = n < threads ? n : threads;
		if (!m) return 0;
		if (!fake_valid((uintptr_t)a, m * 4) || !fake_valid((uintptr_t)b, m * 4) || !fake_valid((uintptr_t)c, m * 4)) return 700;
		for (unsigned long long i = 0; i < m; i++) c[i] = a[i] + b[i];
		return 0;
	}
	case FK_INC: {
		unsigned *p = *(unsigned **)params[0];
		unsigned n = *(unsigned *)params[1];
		unsigned long long m = n < threads ? n : threads;
		if (!m) return 0;
		if (!fake_valid((uintptr_t)p, m * 4)) return 700;
		for (unsigned long long i = 0; i < m; i++) p[i]++;
		return 0;
	}
	case FK_ECHO: {
		if (f->nparams < 1) return 1;
		char *out = *(char **)params[0];
		size_t n = 8 * (size_t)(f->nparams - 1);
		if (n && !fake_valid((uintptr_t)out, n)) return 700;
		memset(out, 0, n);
		for (int i = 1; i < f->nparams; i++) memcpy(out + 8 * (i - 1), params[i], (size_t)f->psize[i]);
		return 0;
	}
	}
	return 0;
}

static int fake_stream_enqueue_launch(void *stream, struct fake_func *f, unsigned long long threads, void **params);

/* FAKE_LAUNCH_DWELL_US=N: each launch stays N microseconds in the call
 * before it runs or queues, logging "launch dwell" (FAKE_LOG), and one that
 * finds a launch of the same stream (the default stream, 0, included)
 * already in the call logs "launch overlap": the check that a caller's
 * launches on one stream take turns before the driver (without the turns,
 * goroutines launching on one stream meet here). At most 64 launches are
 * tracked in the call at once; more are not checked. */
static pthread_mutex_t fake_dwell_mu = PTHREAD_MUTEX_INITIALIZER;
static void *fake_dwelling[64];
static int fake_ndwelling;

static void fake_dwell(void *stream) {
	int us = fake_env_int("LAUNCH_DWELL_US", 0);
	if (us <= 0) return;
	pthread_mutex_lock(&fake_dwell_mu);
	int met = 0, slot = -1;
	for (int i = 0; i < fake_ndwelling; i++) met |= fake_dwelling[i] == stream;
	if (fake_ndwelling < 64) {
		slot = fake_ndwelling++;
		fake_dwelling[slot] = stream;
	}
	pthread_mutex_unlock(&fake_dwell_mu);
	fake_log(met ? "launch overlap" : "launch dwell");
	usleep((useconds_t)us);
	if (slot < 0) return;
	pthread_mutex_lock(&fake_dwell_mu);
	for (int i = 0; i < fake_ndwelling; i++)
		if (fake_dwelling[i] == stream) {
			fake_dwelling[i] = fake_dwelling[--fake_ndwelling];
			break;
		}
	pthread_mutex_unlock(&fake_dwell_mu);
}

static int fake_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shmem, void *stream, void **params, void **extra) {
	FAKE_GUARD();
	(void)shmem;
	struct fake_func *f = fn;
	if (!f) return 400;
	int r = fake_module_check(f->mod);
	if (r) return r == 201 ? 400 : r;
	if (!gx || !gy || !gz || !bx || !by || !bz) return 1;
	if (extra) return 1; /* the fake has no "extra" */
	if (f->nparams && !params) return 1;
	unsigned long long threads = (unsigned long long)gx * gy * gz * bx * by * bz;
	fake_dwell(stream);
	if (stream) return fake_stream_enqueue_launch(stream, f, threads, params);
	return fake_run(f, threads, params);
}

static int fake_mem_alloc(unsigned long long *dptr, size_t n) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!dptr || !n) return 1;
	if (n > fake.total_mem - __atomic_load_n(&fake_current->used, __ATOMIC_SEQ_CST)) return 2;
	void *p = calloc(1, n);
	if (!p) return 2;
	pthread_mutex_lock(&fake_mu);
	fake_track((uintptr_t)p, n, 0);
	fake_allocs->ctx = fake_current;
	__atomic_add_fetch(&fake_current->used, n, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&fake_mu);
	*dptr = (uintptr_t)p;
	return 0;
}

static int fake_mem_free(unsigned long long p) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!p) return 0;
	pthread_mutex_lock(&fake_mu);
	int ok = fake_untrack((uintptr_t)p, 0);
	pthread_mutex_unlock(&fake_mu);
	if (!ok) return 1;
	free((void *)(uintptr_t)p);
	return 0;
}

static int fake_memcpy_htod(unsigned long long dst, const void *src, size_t n) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!n) return 0;
	if (!src || !fake_valid(dst, n)) return 1;
	memcpy((void *)(uintptr_t)dst, src, n);
	return 0;
}

static int fake_memcpy_dtoh(void *dst, unsigned long long src, size_t n) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!n) return 0;
	if (!dst || !fake_valid(src, n)) return 1;
	memcpy(dst, (void *)(uintptr_t)src, n);
	return 0;
}

/* ---- streams, events, pinned host memory ----
 * Work queued on a stream runs when something waits for it: a stream or
 * event synchronize, a context synchronize, or a wait on an event recorded
 * there. So results read before a synchronize are stale, as on a GPU, and an
 * event not yet reached answers *_ERROR_NOT_READY (600). Launch parameters
 * are copied at launch, as the drivers do. Pinned host memory is calloc'ed
 * and tracked; asynchronous copies must use it. fake_live_streams(),
 * fake_live_events() and fake_live_host() count what is alive;
 * fake_pending_events() the events whose stream has not reached them. A
 * stream that waits for an event runs, first, the work of the event's
 * stream up to it; -DFAKE_WAIT_IGNORED builds a broken driver whose wait
 * does nothing (the conformance kit's own tests show the kit rejects it). */

enum { OP_LAUNCH, OP_HTOD, OP_DTOH, OP_RECORD };
struct fake_event;
struct fake_op {
	int kind;
	struct fake_func *f;
	unsigned long long threads;
	unsigned long long vals[FAKE_MAX_PARAMS];
	void *pp[FAKE_MAX_PARAMS];
	uintptr_t dst, src;
	size_t n;
	struct fake_event *ev;
	struct fake_op *next;
};
/* a captured graph (exec 0) or an instance of one (exec 1): its work, in order */
struct fake_graph { int live, exec; struct fake_ctx *ctx; struct fake_op *head, *tail; struct fake_graph *next; };
static void fake_free_ops(struct fake_op *op);
struct fake_stream {
	int live; struct fake_ctx *ctx; struct fake_op *head, *tail; int err; struct fake_stream *next;
	struct fake_graph *capture; int capture_invalid; /* while capturing: the graph being recorded */
};
struct fake_event { int live, recorded, pending; struct fake_ctx *ctx; struct timespec t; struct fake_stream *on; struct fake_event *next; };
struct fake_host { uintptr_t p; size_t n; struct fake_host *next; };

static pthread_mutex_t fake_smu = PTHREAD_MUTEX_INITIALIZER; /* streams, events, host memory */
static struct fake_stream *fake_streams;
static struct fake_event *fake_events;
static struct fake_host *fake_hosts;
static int fake_nstreams, fake_nevents, fake_nhost;

FAKE_EXPORT int fake_live_streams(void) { pthread_mutex_lock(&fake_smu); int n = fake_nstreams; pthread_mutex_unlock(&fake_smu); return n; }
FAKE_EXPORT int fake_live_events(void) { pthread_mutex_lock(&fake_smu); int n = fake_nevents; pthread_mutex_unlock(&fake_smu); return n; }
FAKE_EXPORT int fake_live_host(void) { pthread_mutex_lock(&fake_smu); int n = fake_nhost; pthread_mutex_unlock(&fake_smu); return n; }
/* fake_pending_events counts the live events recorded on a stream whose work
 * before them has not run yet: the conformance kit's proof that a wait ran
 * the work it waited for. */
FAKE_EXPORT int fake_pending_events(void) {
	pthread_mutex_lock(&fake_smu);
	int n = 0;
	for (struct fake_event *e = fake_events; e; e = e->next)
		if (e->live && e->pending) n++;
	pthread_mutex_unlock(&fake_smu);
	return n;
}

/* fake_stream_ok: 0 when s is a live stream of the current context; fake_smu held. */
static int fake_stream_ok(struct fake_stream *s) {
	if (!fake_current) return 201;
	for (struct fake_stream *x = fake_streams; x; x = x->next)
		if (x == s) return s->live ? (s->ctx == fake_current ? 0 : 201) : 400;
	return 400;
}

static int fake_event_ok(struct fake_event *e) {
	for (struct fake_event *x = fake_events; x; x = x->next)
		if (x == e) return e->live ? 0 : 400;
	return 400;
}

/* fake_host_ok: whether [p, p+n) lies in pinned host memory; fake_smu held. */
static int fake_host_ok(uintptr_t p, size_t n) {
	for (struct fake_host *h = fake_hosts; h; h = h->next)
		if (p >= h->p && p + n <= h->p + h->n && p + n >= p) return 1;
	return 0;
}

static void fake_capture_push(struct fake_graph *g, struct fake_op *op);

/* fake_push queues op on s, or records it into s's capture. */
static void fake_push(struct fake_stream *s, struct fake_op *op) {
	if (s->capture) {
		fake_capture_push(s->capture, op);
		return;
	}
	if (s->tail) s->tail->next = op; else s->head = op;
	s->tail = op;
}

/* The operations of fake_ops.h (memsets, device copies, frees, value waits
 * and writes, host functions): whether one cannot run yet, running one, and
 * making progress elsewhere while a stream waits. */
#define FAKE_BLOCKED (-1)
static int fake_op_blocked(const struct fake_op *op);
static int fake_run_op(struct fake_op *op);
static int fake_unblock(struct fake_stream *s);

/* fake_flush_to runs s's queued work in order; the first error sticks to the
 * stream and is returned. A value wait that is not met stops it: with wait
 * 0 it returns FAKE_BLOCKED, else it makes progress elsewhere or polls
 * (fake_unblock). fake_smu held. */
static int fake_flush_to(struct fake_stream *s, int wait) {
	while (s->head) {
		struct fake_op *op = s->head;
		if (fake_op_blocked(op)) {
			if (!wait) return FAKE_BLOCKED;
			int u = fake_unblock(s);
			if (u) return u;
			continue;
		}
		s->head = op->next;
		if (!s->head) s->tail = NULL;
		int r = 0;
		switch (op->kind) {
		case OP_LAUNCH: r = fake_run(op->f, op->threads, op->pp); break;
		case OP_HTOD: memcpy((void *)op->dst, (const void *)op->src, op->n); break;
		case OP_DTOH: memcpy((void *)op->dst, (const void *)op->src, op->n); break;
		case OP_RECORD:
			clock_gettime(CLOCK_MONOTONIC, &op->ev->t);
			op->ev->recorded = 1;
			op->ev->pending = 0;
			break;
		default:
			r = fake_run_op(op);
		}
		if (r && !s->err) s->err = r;
		free(op);
	}
	return s->err;
}

static int fake_flush(struct fake_stream *s) { return fake_flush_to(s, 1); }

static int fake_stream_create(void **ps, unsigned flags) {
	FAKE_GUARD();
	(void)flags;
	if (!fake_current) return 201;
	if (!ps) return 1;
	struct fake_stream *s = calloc(1, sizeof *s);
	s->live = 1;
	s->ctx = fake_current;
	pthread_mutex_lock(&fake_smu);
	s->next = fake_streams;
	fake_streams = s;
	fake_nstreams++;
	pthread_mutex_unlock(&fake_smu);
	*ps = s;
	return 0;
}

static int fake_stream_synchronize(void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_stream_ok(stream);
	struct fake_stream *cs = stream;
	if (!r && cs->capture) { cs->capture_invalid = 1; r = 900; } /* not while capturing: the capture is ruined */
	if (!r) r = fake_flush(stream);
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_stream_destroy(void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_stream_ok(stream);
	if (!r) {
		struct fake_stream *s = stream;
		fake_flush(s);
		if (s->capture) { /* the capture ends with the stream */
			fake_free_ops(s->capture->head);
			free(s->capture);
			s->capture = NULL;
		}
		s->live = 0;
		fake_nstreams--;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_stream_enqueue_launch(void *stream, struct fake_func *f, unsigned long long threads, void **params) {
	pthread_mutex_lock(&fake_smu);
	int r = fake_stream_ok(stream);
	if (!r) {
		struct fake_op *op = calloc(1, sizeof *op);
		op->kind = OP_LAUNCH;
		op->f = f;
		op->threads = threads;
		for (int i = 0; i < f->nparams; i++) {
			memcpy(&op->vals[i], params[i], (size_t)f->psize[i]);
			op->pp[i] = &op->vals[i];
		}
		fake_push(stream, op);
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_memcpy_async(int kind, uintptr_t dst, uintptr_t src, size_t n, void *stream) {
	FAKE_GUARD();
	if (!n) return 0;
	uintptr_t dev = kind == OP_HTOD ? dst : src, host = kind == OP_HTOD ? src : dst;
	if (!fake_valid(dev, n)) return 1;
	pthread_mutex_lock(&fake_smu);
	int r = stream ? fake_stream_ok(stream) : (fake_current ? 0 : 201);
	if (!r && !fake_host_ok(host, n)) r = 1;
	if (!r) {
		if (!stream) {
			memcpy((void *)dst, (const void *)src, n);
		} else {
			struct fake_op *op = calloc(1, sizeof *op);
			op->kind = kind;
			op->dst = dst; op->src = src; op->n = n;
			fake_push(stream, op);
		}
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_event_create(void **pe, unsigned flags) {
	FAKE_GUARD();
	(void)flags;
	if (!fake_current) return 201;
	if (!pe) return 1;
	struct fake_event *e = calloc(1, sizeof *e);
	e->live = 1;
	e->ctx = fake_current;
	pthread_mutex_lock(&fake_smu);
	e->next = fake_events;
	fake_events = e;
	fake_nevents++;
	pthread_mutex_unlock(&fake_smu);
	*pe = e;
	return 0;
}

static int fake_event_record(void *event, void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_event_ok(event);
	if (!r && stream) r = fake_stream_ok(stream);
	if (!r) {
		struct fake_event *e = event;
		if (!stream) {
			clock_gettime(CLOCK_MONOTONIC, &e->t);
			e->recorded = 1;
			e->pending = 0;
		} else {
			struct fake_op *op = calloc(1, sizeof *op);
			op->kind = OP_RECORD;
			op->ev = e;
			if (!((struct fake_stream *)stream)->capture) { /* a captured record happens at each replay */
				e->pending = 1;
				e->on = stream;
			}
			fake_push(stream, op);
		}
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_event_synchronize(void *event) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_event_ok(event);
	struct fake_event *e = event;
	if (!r && e->pending && e->on) r = fake_flush(e->on);
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_stream_wait_event(void *stream, void *event, unsigned flags) {
	FAKE_GUARD();
	(void)flags;
	pthread_mutex_lock(&fake_smu);
	int r = fake_stream_ok(stream);
	if (!r) r = fake_event_ok(event);
	struct fake_event *e = event;
#ifndef FAKE_WAIT_IGNORED /* a broken driver whose wait orders nothing, for the kit's own tests */
	if (!r && e->pending && e->on && e->on != stream) r = fake_flush(e->on);
#else
	(void)e;
#endif
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_event_elapsed(float *ms, void *start, void *end) {
	FAKE_GUARD();
	if (!ms) return 1;
	pthread_mutex_lock(&fake_smu);
	int r = fake_event_ok(start);
	if (!r) r = fake_event_ok(end);
	struct fake_event *a = start, *b = end;
	if (!r && (!a->recorded && !a->pending)) r = 400;
	if (!r && (!b->recorded && !b->pending)) r = 400;
	if (!r && (a->pending || b->pending)) r = 600;
	if (!r) *ms = (float)((b->t.tv_sec - a->t.tv_sec) * 1e3 + (b->t.tv_nsec - a->t.tv_nsec) / 1e6);
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_event_destroy(void *event) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_event_ok(event);
	if (!r) {
		((struct fake_event *)event)->live = 0;
		fake_nevents--;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_host_alloc(void **pp, size_t n, unsigned flags) {
	FAKE_GUARD();
	(void)flags;
	if (!fake_current) return 201;
	if (!pp || !n) return 1;
	void *p = calloc(1, n);
	if (!p) return 2;
	struct fake_host *h = calloc(1, sizeof *h);
	h->p = (uintptr_t)p;
	h->n = n;
	pthread_mutex_lock(&fake_smu);
	h->next = fake_hosts;
	fake_hosts = h;
	fake_nhost++;
	pthread_mutex_unlock(&fake_smu);
	*pp = p;
	return 0;
}

static int fake_host_free(void *p) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = 1;
	for (struct fake_host **hp = &fake_hosts; *hp; hp = &(*hp)->next) {
		if ((*hp)->p == (uintptr_t)p) {
			struct fake_host *h = *hp;
			*hp = h->next;
			free(h);
			free(p);
			fake_nhost--;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

/* fake_sync_ctx runs the queued work of every stream of context c (a
 * context or device synchronize). */
static int fake_sync_ctx(struct fake_ctx *c) {
	pthread_mutex_lock(&fake_smu);
	int r = 0;
	for (struct fake_stream *s = fake_streams; s; s = s->next)
		if (s->live && s->ctx == c) {
			int x = fake_flush(s);
			if (x && !r) r = x;
		}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

/* ---- stream capture and graphs ----
 * Begin-capture turns a stream into a recording, as the drivers do: the
 * work queued on it while it captures (launches, their parameters copied;
 * asynchronous copies; event records) is appended to a graph instead of its
 * queue. The NULL and legacy streams (0, 1) are refused with 900
 * (*_STREAM_CAPTURE_UNSUPPORTED), as CUDA and HIP refuse them; a mode
 * outside 0..2 is 1; beginning again on a capturing stream is 401
 * (*_ILLEGAL_STATE). Synchronizing a capturing stream returns 900 and
 * invalidates its capture, whose end then returns 901
 * (*_STREAM_CAPTURE_INVALIDATED) and a NULL graph; ending a stream that does
 * not capture is 401. Instantiate copies a graph's work into an instance;
 * launching the instance queues a copy of that work on the stream (runs it
 * at once on the NULL stream; records it into the graph of a capturing
 * stream). Graphs and instances belong to the capturing stream's context;
 * every call needs a current context (201 without), and a dead handle is
 * 400. fake_live_graphs() and fake_live_execs() count what is alive;
 * fake_capture_mode() is the mode of the last successful begin. */

static struct fake_graph *fake_graphs; /* every graph and instance; never freed, so stale handles stay readable */
static int fake_ngraphs, fake_nexecs, fake_last_mode = -1;

FAKE_EXPORT int fake_live_graphs(void) { pthread_mutex_lock(&fake_smu); int n = fake_ngraphs; pthread_mutex_unlock(&fake_smu); return n; }
FAKE_EXPORT int fake_live_execs(void) { pthread_mutex_lock(&fake_smu); int n = fake_nexecs; pthread_mutex_unlock(&fake_smu); return n; }
FAKE_EXPORT int fake_capture_mode(void) { pthread_mutex_lock(&fake_smu); int m = fake_last_mode; pthread_mutex_unlock(&fake_smu); return m; }

/* fake_graph_ok: 0 when g is a live graph (exec 0) or instance (exec 1) of
 * the current context; fake_smu held. */
static int fake_graph_ok(struct fake_graph *g, int exec) {
	if (!fake_current) return 201;
	for (struct fake_graph *x = fake_graphs; x; x = x->next)
		if (x == g) return g->live && g->exec == exec ? (g->ctx == fake_current ? 0 : 201) : 400;
	return 400;
}

/* fake_clone copies op for another queue or graph, its parameter pointers
 * moved to the copy's own values. */
static struct fake_op *fake_clone(const struct fake_op *op) {
	struct fake_op *c = malloc(sizeof *c);
	memcpy(c, op, sizeof *c);
	for (int i = 0; i < FAKE_MAX_PARAMS; i++)
		if (op->pp[i]) c->pp[i] = &c->vals[i];
	c->next = NULL;
	return c;
}

static void fake_free_ops(struct fake_op *op) {
	while (op) {
		struct fake_op *n = op->next;
		free(op);
		op = n;
	}
}

static int fake_stream_begin_capture(void *stream, int mode) {
	FAKE_GUARD();
	if (stream == NULL || stream == (void *)1) return 900;
	if (mode < 0 || mode > 2) return 1;
	pthread_mutex_lock(&fake_smu);
	struct fake_stream *s = stream;
	int r = fake_stream_ok(s);
	if (!r && s->capture) r = 401;
	if (!r) {
		struct fake_graph *g = calloc(1, sizeof *g);
		g->ctx = s->ctx;
		s->capture = g;
		s->capture_invalid = 0;
		fake_last_mode = mode;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_stream_end_capture(void *stream, void **pgraph) {
	FAKE_GUARD();
	if (!pgraph) return 1;
	pthread_mutex_lock(&fake_smu);
	struct fake_stream *s = stream;
	int r = fake_stream_ok(s);
	if (!r && !s->capture) r = 401;
	if (!r) {
		struct fake_graph *g = s->capture;
		s->capture = NULL;
		if (s->capture_invalid) {
			fake_free_ops(g->head);
			free(g);
			*pgraph = NULL;
			r = 901;
		} else {
			g->live = 1;
			g->next = fake_graphs;
			fake_graphs = g;
			fake_ngraphs++;
			*pgraph = g;
		}
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_graph_instantiate(void **pexec, void *graph, unsigned long long flags) {
	FAKE_GUARD();
	if (!pexec) return 1;
	if (flags) return 1; /* the fake knows no flags */
	pthread_mutex_lock(&fake_smu);
	struct fake_graph *g = graph;
	int r = fake_graph_ok(g, 0);
	if (!r) {
		struct fake_graph *e = calloc(1, sizeof *e);
		e->live = 1;
		e->exec = 1;
		e->ctx = g->ctx;
		for (struct fake_op *op = g->head; op; op = op->next) {
			struct fake_op *c = fake_clone(op);
			if (e->tail) e->tail->next = c; else e->head = c;
			e->tail = c;
		}
		e->next = fake_graphs;
		fake_graphs = e;
		fake_nexecs++;
		*pexec = e;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_graph_launch(void *exec, void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	struct fake_graph *e = exec;
	int r = fake_graph_ok(e, 1);
	if (!r && stream) r = fake_stream_ok(stream);
	if (!r) {
		struct fake_stream now = { .live = 1, .ctx = fake_current }; /* the NULL stream: run at once */
		struct fake_stream *s = stream ? stream : &now;
		for (struct fake_op *op = e->head; op; op = op->next) {
			struct fake_op *c = fake_clone(op);
			if (c->kind == OP_RECORD && !s->capture) {
				c->ev->pending = 1;
				c->ev->on = stream;
			}
			fake_push(s, c);
		}
		if (!stream) r = fake_flush(&now);
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_graph_destroy_any(void *graph, int exec) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	struct fake_graph *g = graph;
	int r = fake_graph_ok(g, exec);
	if (!r) {
		g->live = 0;
		fake_free_ops(g->head);
		g->head = g->tail = NULL;
		if (exec) fake_nexecs--; else fake_ngraphs--;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static void fake_capture_push(struct fake_graph *g, struct fake_op *op) {
	if (g->tail) g->tail->next = op; else g->head = op;
	g->tail = op;
}

#include "fake_ops.h"
