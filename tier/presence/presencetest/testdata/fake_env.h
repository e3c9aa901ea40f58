// The environment-driven helpers the fake management libraries share
// (fake_nvml.c, fake_mtml.c, fake_mxsml.c, ...: each vendor's testdata).
// Define FAKE_ENV_PREFIX ("FAKE_NVML_") and FAKE_DEFAULT_COUNT before
// including it.
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// logcall appends name to the file <prefix>LOG names, when set. Every
// function of a fake calls it first, so it also plays a library that
// misbehaves in the call named by <prefix>HANG (never returns: the
// presence tier's deadline) or <prefix>STDOUT (writes to standard output
// first: the CLI's --json must stay clean).
static void logcall(const char *name) {
    const char *hang = getenv(FAKE_ENV_PREFIX "HANG");
    const char *out = getenv(FAKE_ENV_PREFIX "STDOUT");
    if (out && strcmp(out, name) == 0) {
        printf("%s: a library's chatter on standard output\n", name);
        fflush(stdout);
    }
    if (hang && strcmp(hang, name) == 0)
        for (;;) sleep(60);
    const char *p = getenv(FAKE_ENV_PREFIX "LOG");
    if (!p || !*p) return;
    FILE *f = fopen(p, "a");
    if (!f) return;
    fprintf(f, "%s\n", name);
    fclose(f);
}

static long envlong(const char *k, long def) {
    const char *v = getenv(k);
    return (v && *v) ? strtol(v, NULL, 10) : def;
}

// nth copies the n-th comma-separated item of the variable k into out.
static int nth(const char *k, int n, char *out, size_t len) {
    const char *v = getenv(k);
    if (!v || !*v) return 0;
    for (int i = 0; i < n; i++) {
        v = strchr(v, ',');
        if (!v) return 0;
        v++;
    }
    size_t l = strcspn(v, ",");
    if (l >= len) l = len - 1;
    memcpy(out, v, l);
    out[l] = 0;
    return 1;
}

// bus0 is device 0's PCI bus number: <prefix>BUS0 in hex, else def; the
// record tests set it to the driver fake's (device i is at bus0 + i).
static unsigned int bus0(unsigned int def) {
    const char *v = getenv(FAKE_ENV_PREFIX "BUS0");
    return (v && *v) ? (unsigned int)strtoul(v, NULL, 16) : def;
}

// count is <prefix>COUNT devices, 0 to FAKE_MAX_COUNT (64 unless the fake
// defines it).
#ifndef FAKE_MAX_COUNT
#define FAKE_MAX_COUNT 64
#endif
static int count(void) {
    long n = envlong(FAKE_ENV_PREFIX "COUNT", FAKE_DEFAULT_COUNT);
    if (n < 0) n = 0;
    if (n > FAKE_MAX_COUNT) n = FAKE_MAX_COUNT;
    return (int)n;
}

// A counting init, as NVML's: counted_init returns <prefix>INIT_RESULT
// where it is set (and counts nothing), else counts one init;
// counted_shutdown releases one, or returns uninit when none is held;
// counted_initialized tells whether one is held.
static int inits;

static int counted_init(void) {
    int r = (int)envlong(FAKE_ENV_PREFIX "INIT_RESULT", 0);
    if (r != 0) return r;
    __atomic_add_fetch(&inits, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int counted_shutdown(int uninit) {
    if (__atomic_load_n(&inits, __ATOMIC_SEQ_CST) <= 0) return uninit;
    __atomic_sub_fetch(&inits, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int counted_initialized(void) { return __atomic_load_n(&inits, __ATOMIC_SEQ_CST) > 0; }

// put_string copies s into dst, a buffer of length bytes, terminated:
// invalid (a NULL dst) and small (s does not fit) are the library's codes.
static int put_string(char *dst, unsigned int length, const char *s, int invalid, int small) {
    if (!dst) return invalid;
    if (strlen(s) + 1 > length) return small;
    strcpy(dst, s);
    return 0;
}

// nvml_error_string is NVML's words for the codes NVML-numbered libraries
// share (NVML, MXSML, XPUML mirror nvmlReturn_t): "Unknown Error" for the
// others. A fake adds its own codes before falling back on it.
static const char *nvml_error_string(int code) {
    switch (code) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    }
    return "Unknown Error";
}
