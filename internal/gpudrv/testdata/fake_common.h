/*
 * Behaviour shared by the fake driver libraries (drivers/cuda/testdata/
 * fake_libcuda.c, drivers/musa/testdata/fake_libmusa.c). Each fake defines
 * the real exported symbols with their real C signatures and forwards to the
 * static functions here. Tests build them with `go env CC` -shared -fPIC.
 *
 * Environment, read once when the library is loaded. Each variable may also
 * be given for one vendor, FAKE_CUDA_<NAME> or FAKE_MUSA_<NAME>, which wins
 * over FAKE_<NAME>: a process can then load both fakes with different
 * behaviour (a stub libcuda beside a working libmusa, say).
 *   FAKE_STUB=1            every call returns 34 (*_ERROR_STUB_LIBRARY)
 *   FAKE_INIT_RESULT=N     what cuInit returns (default 0)
 *   FAKE_DEVICE_COUNT=N    devices (default 2, at most 16)
 *   FAKE_DEVICE_NAMES=a,b  device names (default "Fake GPU <i>")
 *   FAKE_TOTAL_MEM=bytes   memory of every device (default 80 GiB)
 *   FAKE_CC=9.0            compute capability (default 9.0)
 *   FAKE_SM_COUNT=N        multiprocessors (default 132)
 *   FAKE_DRIVER_VERSION=N  the encoded driver version (default FAKE_DEFAULT_VERSION)
 *   FAKE_SYNC_RESULT=N     what cuCtxSynchronize returns with a context current
 *   FAKE_LOG=/abs/file     append "load" when loaded and "init" per cuInit
 * Device handles are ordinal+1000, so a binding that passes ordinals where
 * handles are due gets *_ERROR_INVALID_DEVICE. Contexts are current per
 * thread, as in the real drivers: cuCtxSynchronize without a current context
 * returns *_ERROR_INVALID_CONTEXT.
 */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_ERR_PREFIX
#error "define FAKE_ERR_PREFIX (\"CUDA_\" or \"MUSA_\") before including fake_common.h"
#endif

#define FAKE_MAX_DEVICES 16
#define FAKE_HANDLE_BASE 1000

struct fake_ctx { int ordinal; int retained; };

static struct {
	int stub, init_result, count, sm, major, minor, version, sync_result;
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

static int fake_init(unsigned int flags) {
	fake_log("init");
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
	*n = fake.count;
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

static int fake_device_get_attribute(int *v, int attr, int dev) {
	FAKE_GUARD();
	if (fake_ordinal(dev) < 0) return 101;
	if (!v) return 1;
	switch (attr) {
	case 16: *v = fake.sm; return 0;
	case 75: *v = fake.major; return 0;
	case 76: *v = fake.minor; return 0;
	}
	return 1;
}

static int fake_device_get_uuid(unsigned char *uuid, int dev) {
	FAKE_GUARD();
	int i = fake_ordinal(dev);
	if (i < 0) return 101;
	for (int k = 0; k < 16; k++) uuid[k] = (unsigned char)(0x10 * (i + 1) + k);
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

static int fake_ctx_get_current(void **pctx) {
	FAKE_GUARD();
	if (!pctx) return 1;
	*pctx = fake_current;
	return 0;
}

static int fake_ctx_synchronize(void) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	return fake.sync_result;
}

static int fake_mem_get_info(unsigned long long *free_, unsigned long long *total) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!free_ || !total) return 1;
	*total = fake.total_mem;
	*free_ = fake.total_mem - (1ULL << 30) * (unsigned long long)(fake_current->ordinal + 1);
	return 0;
}

static int fake_error_name(int code, const char **s) {
	if (!s) return 1;
	switch (code) {
	case 0: *s = FAKE_ERR_PREFIX "SUCCESS"; return 0;
	case 1: *s = FAKE_ERR_PREFIX "ERROR_INVALID_VALUE"; return 0;
	case 3: *s = FAKE_ERR_PREFIX "ERROR_NOT_INITIALIZED"; return 0;
	case 34: *s = FAKE_ERR_PREFIX "ERROR_STUB_LIBRARY"; return 0;
	case 100: *s = FAKE_ERR_PREFIX "ERROR_NO_DEVICE"; return 0;
	case 101: *s = FAKE_ERR_PREFIX "ERROR_INVALID_DEVICE"; return 0;
	case 201: *s = FAKE_ERR_PREFIX "ERROR_INVALID_CONTEXT"; return 0;
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
	case 34: *s = "fake: stub library"; return 0;
	case 100: *s = "fake: no " FAKE_ERR_PREFIX " capable device is detected"; return 0;
	case 201: *s = "fake: invalid device context"; return 0;
	case 700: *s = "fake: an illegal memory access was encountered"; return 0;
	case 803: *s = "fake: system has unsupported display driver / driver combination"; return 0;
	}
	*s = NULL;
	return 1;
}
