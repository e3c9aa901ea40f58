// A fake libefml.so for the EFML binding's tests (drivers/gcu): the real
// names, C signatures and structs of Enflame's efml.h (the index-based
// "Efml*" family, as EnflameTechnology/gcu-exporter vendors it in
// vendor/go-eflib/efml/efml.h), behaviour driven by the environment:
//
//   FAKE_EFML_LOG           file each call appends its name to
//   FAKE_EFML_INIT_RESULT   EfmlInit's return code (default 0)
//   FAKE_EFML_COUNT         devices (default 1, at most 64)
//   FAKE_EFML_COUNT_RESULT  EfmlGetDevCount's return code
//   FAKE_EFML_COUNT_RAW     the count EfmlGetDevCount answers instead, a
//                           uint32_t as a broken driver might give it
//                           (4294967295); devices still exist only for the
//                           FAKE_EFML_COUNT ones
//   FAKE_EFML_NAMES         comma-separated names (default "S60")
//   FAKE_EFML_UUIDS         comma-separated UUIDs (default 0000000<i>-1e36-c035-0000-00000000000<i>)
//   FAKE_EFML_MEM_TOTAL     bytes per device (default 48 GiB; 1024 MiB used)
//   FAKE_EFML_DRIVER        driver version string (default 1.4.0.9)
//   FAKE_EFML_MEM_RESULT    EfmlGetDevMem's return code
//
// Build variants leave optional functions out: -DFAKE_NO_NAME,
// -DFAKE_NO_UUID, -DFAKE_NO_MEMORY, -DFAKE_NO_INFO, -DFAKE_NO_VERSION,
// -DFAKE_NO_ERRSTR; -DFAKE_NO_COUNT leaves a required one out.
//
// Every call but the error string fails with EFML_ERROR_UNINITIALIZED
// outside EfmlInit ... EfmlShutdown. EfmlInit(true) (no driver) is refused
// with EFML_ERROR_INVALID_ARGUMENT: the binding must ask the driver. String
// outputs take no length in this API: the fake writes at most
// MAX_CHAR_BUFF_LEN (128) bytes, as Enflame's callers allow.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    EFML_SUCCESS = 0,
    EFML_ERROR_UNINITIALIZED = 1,
    EFML_ERROR_INVALID_ARGUMENT = 2,
    EFML_ERROR_NOT_SUPPORTED = 3,
    EFML_ERROR_DRIVER_NOT_LOADED = 6,
    EFML_ERROR_INVALID_INPUT = 8,
    EFML_ERROR_NO_DEVICE = 12,
    EFML_ERROR_FAIL = 254,
} efmlReturn_t;

#define MAX_CHAR_BUFF_LEN (128)

typedef struct {
    char     name[MAX_CHAR_BUFF_LEN];
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t domain_id;
    uint32_t bus_id;
    uint32_t dev_id;
    uint32_t func_id;
    uint32_t logic_id;
} efmlDeviceInfo_t;
_Static_assert(sizeof(efmlDeviceInfo_t) == 156, "efmlDeviceInfo_t is 156 bytes");

typedef struct {
    uint64_t mem_total_size;
    uint32_t mem_used;
} efmlDevMemInfo_t;
_Static_assert(sizeof(efmlDevMemInfo_t) == 16, "efmlDevMemInfo_t is 16 bytes");

#define FAKE_ENV_PREFIX "FAKE_EFML_"
#define FAKE_DEFAULT_COUNT 1
#include "fake_env.h"

#define EXPORT __attribute__((visibility("default")))

static int initialized;

static int valid(uint32_t i) { return (int)i < count(); }

static efmlReturn_t put(char *dst, const char *s) {
    if (!dst) return EFML_ERROR_INVALID_ARGUMENT;
    snprintf(dst, MAX_CHAR_BUFF_LEN, "%s", s);
    return EFML_SUCCESS;
}

EXPORT efmlReturn_t EfmlInit(bool no_driver) {
    logcall("EfmlInit");
    if (no_driver) return EFML_ERROR_INVALID_ARGUMENT;
    efmlReturn_t r = (efmlReturn_t)envlong("FAKE_EFML_INIT_RESULT", 0);
    if (r == EFML_SUCCESS) initialized = 1;
    return r;
}

EXPORT void EfmlShutdown() {
    logcall("EfmlShutdown");
    initialized = 0;
}

#ifndef FAKE_NO_ERRSTR
EXPORT efmlReturn_t EfmlErrorString(efmlReturn_t result, char *p_error_str) {
    logcall("EfmlErrorString");
    const char *s = "Unknown Error";
    switch ((int)result) {
    case 0: s = "Success"; break;
    case 1: s = "Uninitialized"; break;
    case 3: s = "Not Supported"; break;
    case 6: s = "Driver Not Loaded"; break;
    case 12: s = "No Device"; break;
    case 254: s = "Fail"; break;
    }
    return put(p_error_str, s);
}
#endif

#ifndef FAKE_NO_VERSION
EXPORT efmlReturn_t EfmlGetDriverVer(char *p_driver_ver) {
    logcall("EfmlGetDriverVer");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    const char *v = getenv("FAKE_EFML_DRIVER");
    return put(p_driver_ver, v && *v ? v : "1.4.0.9");
}
#endif

#ifndef FAKE_NO_COUNT
EXPORT efmlReturn_t EfmlGetDevCount(uint32_t *dev_count) {
    logcall("EfmlGetDevCount");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    if (!dev_count) return EFML_ERROR_INVALID_ARGUMENT;
    efmlReturn_t r = (efmlReturn_t)envlong("FAKE_EFML_COUNT_RESULT", 0);
    if (r != EFML_SUCCESS) return r;
    const char *raw = getenv("FAKE_EFML_COUNT_RAW");
    *dev_count = (raw && *raw) ? (uint32_t)strtoul(raw, NULL, 10) : (uint32_t)count();
    return EFML_SUCCESS;
}
#endif

#ifndef FAKE_NO_NAME
EXPORT efmlReturn_t EfmlGetDevName(uint32_t dev_idx, char *p_name) {
    logcall("EfmlGetDevName");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    if (!valid(dev_idx)) return EFML_ERROR_INVALID_INPUT;
    char buf[MAX_CHAR_BUFF_LEN];
    if (!nth("FAKE_EFML_NAMES", (int)dev_idx, buf, sizeof buf)) strcpy(buf, "S60");
    return put(p_name, buf);
}
#endif

#ifndef FAKE_NO_UUID
EXPORT efmlReturn_t EfmlGetDevUuid(uint32_t dev_idx, char *p_info) {
    logcall("EfmlGetDevUuid");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    if (!valid(dev_idx)) return EFML_ERROR_INVALID_INPUT;
    char buf[MAX_CHAR_BUFF_LEN];
    if (!nth("FAKE_EFML_UUIDS", (int)dev_idx, buf, sizeof buf))
        snprintf(buf, sizeof buf, "0000000%u-1e36-c035-0000-00000000000%u", dev_idx % 10, dev_idx % 10);
    return put(p_info, buf);
}
#endif

#ifndef FAKE_NO_MEMORY
EXPORT efmlReturn_t EfmlGetDevMem(uint32_t dev_idx, efmlDevMemInfo_t *p_mem) {
    logcall("EfmlGetDevMem");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    if (!valid(dev_idx)) return EFML_ERROR_INVALID_INPUT;
    if (!p_mem) return EFML_ERROR_INVALID_ARGUMENT;
    efmlReturn_t r = (efmlReturn_t)envlong("FAKE_EFML_MEM_RESULT", 0);
    if (r != EFML_SUCCESS) return r;
    const char *t = getenv("FAKE_EFML_MEM_TOTAL");
    p_mem->mem_total_size = t && *t ? strtoull(t, NULL, 10) : 48ULL << 30;
    p_mem->mem_used = 1024; /* MiB */
    return EFML_SUCCESS;
}
#endif

#ifndef FAKE_NO_INFO
EXPORT efmlReturn_t EfmlGetDevInfo(uint32_t dev_idx, efmlDeviceInfo_t *p_info) {
    logcall("EfmlGetDevInfo");
    if (!initialized) return EFML_ERROR_UNINITIALIZED;
    if (!valid(dev_idx)) return EFML_ERROR_INVALID_INPUT;
    if (!p_info) return EFML_ERROR_INVALID_ARGUMENT;
    memset(p_info, 0, sizeof *p_info);
    snprintf(p_info->name, sizeof p_info->name, "Enflame S60 (info)");
    p_info->vendor_id = 0x1e36;
    p_info->device_id = 0xc035;
    p_info->domain_id = 0;
    p_info->bus_id = bus0(0x5a) + dev_idx;
    p_info->dev_id = 0;
    p_info->func_id = 0;
    p_info->logic_id = dev_idx;
    return EFML_SUCCESS;
}
#endif
