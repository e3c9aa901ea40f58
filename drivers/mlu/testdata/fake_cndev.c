// A fake libcndev.so for the CNDev binding's tests (drivers/mlu): the real
// names, C signatures and structs of Cambricon's cndev.h (the
// CNDEV_VERSION_6 header Cambricon/mlu-exporter vendors,
// pkg/cndev/include/cndev.h), behaviour driven by the environment:
//
//   FAKE_CNDEV_LOG           file each call appends its name to
//   FAKE_CNDEV_INIT_RESULT   cndevInit's return code (default 0)
//   FAKE_CNDEV_COUNT         devices (default 1, at most 64)
//   FAKE_CNDEV_COUNT_RESULT  cndevGetDeviceCount's return code
//   FAKE_CNDEV_COUNT_RAW     the count cndevGetDeviceCount answers instead, an
//                            unsigned int as a broken driver might give it
//                            (4294967295); devices still exist only for the
//                            FAKE_CNDEV_COUNT ones
//   FAKE_CNDEV_NAMES         comma-separated names (default "MLU590")
//   FAKE_CNDEV_UUIDS         comma-separated UUIDs (default 0000000<i>-aaaa-bbbb-cccc-dddddddddddd)
//   FAKE_CNDEV_MEM_TOTAL_MB  physical memory per device in MB (default 81920; 2048 used)
//   FAKE_CNDEV_NAME_GUARD    1: the name is unterminated, ending at a PROT_NONE page
//   FAKE_CNDEV_DRIVER        driver version "major.minor.build" (default 6.2.10)
//   FAKE_CNDEV_UUID_RESULT   cndevGetUUID's return code
//
// Build variants leave optional functions out: -DFAKE_NO_NAME,
// -DFAKE_NO_UUID, -DFAKE_NO_MEMORY, -DFAKE_NO_PCI, -DFAKE_NO_VERSION,
// -DFAKE_NO_ERRSTR; -DFAKE_NO_HANDLE leaves a required one out.
//
// Every call but the error string fails with CNDEV_ERROR_UNINITIALIZED
// outside cndevInit ... cndevRelease; structs with a version field must
// carry CNDEV_VERSION_6 (else CNDEV_ERROR_UNSUPPORTED_API_VERSION); device
// handles are index + 100, so a binding that passes indexes where handles
// are due gets CNDEV_ERROR_INVALID_DEVICE_ID.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char __uint8_t;
typedef unsigned short __uint16_t;
typedef int __int32_t;
typedef unsigned int __uint32_t;
typedef unsigned long __uint64_t;
typedef long __int64_t;
typedef __int32_t cndevDevice_t;

#define CNDEV_VERSION_6 6
#define CNDEV_UUID_SIZE 37

typedef enum {
    CNDEV_SUCCESS = 0,
    CNDEV_ERROR_UNSUPPORTED_API_VERSION = 3,
    CNDEV_ERROR_UNINITIALIZED = 4,
    CNDEV_ERROR_INVALID_ARGUMENT = 5,
    CNDEV_ERROR_INVALID_DEVICE_ID = 6,
} cndevRet_t;

typedef struct {
    __int32_t version;
    __uint32_t number;
} cndevCardInfo_t;

typedef struct {
    __int32_t version;
    __uint8_t uuid[CNDEV_UUID_SIZE];
    __uint64_t ncsUUID64;
} cndevUUID_t;
_Static_assert(sizeof(cndevUUID_t) == 56, "cndevUUID_t is 56 bytes");

typedef struct {
    __int64_t physicalMemoryTotal;
    __int64_t physicalMemoryUsed;
    __int64_t reservedMemory;
    __int64_t virtualMemoryTotal;
    __int64_t virtualMemoryUsed;
    __uint64_t globalMemory;
    __uint64_t reserved[16];
} cndevMemoryInfoV2_t;
_Static_assert(sizeof(cndevMemoryInfoV2_t) == 176, "cndevMemoryInfoV2_t is 176 bytes");

typedef struct {
    __uint32_t subsystemId;
    __uint32_t deviceId;
    __uint16_t vendor;
    __uint16_t subsystemVendor;
    __uint32_t domain;
    __uint32_t bus;
    __uint32_t device;
    __uint32_t function;
    __uint16_t moduleId;
    __uint16_t slotId;
    __uint32_t reserved[8];
} cndevPCIeInfoV2_t;
_Static_assert(sizeof(cndevPCIeInfoV2_t) == 64, "cndevPCIeInfoV2_t is 64 bytes");

#include <sys/mman.h>
#include <unistd.h>
#define FAKE_ENV_PREFIX "FAKE_CNDEV_"
#define FAKE_DEFAULT_COUNT 1
#include "fake_env.h"

#define EXPORT __attribute__((visibility("default")))

static int initialized;

// index is the device of a handle, -1 for none.
static int index_of(cndevDevice_t h) {
    int i = h - 100;
    return i >= 0 && i < count() ? i : -1;
}

EXPORT cndevRet_t cndevInit(__int32_t reserved) {
    logcall("cndevInit");
    if (reserved != 0) return CNDEV_ERROR_INVALID_ARGUMENT;
    cndevRet_t r = (cndevRet_t)envlong("FAKE_CNDEV_INIT_RESULT", 0);
    if (r == CNDEV_SUCCESS) initialized = 1;
    return r;
}

EXPORT cndevRet_t cndevRelease(void) {
    logcall("cndevRelease");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    initialized = 0;
    return CNDEV_SUCCESS;
}

#ifndef FAKE_NO_ERRSTR
EXPORT const char *cndevGetErrorString(cndevRet_t errorId) {
    logcall("cndevGetErrorString");
    switch ((int)errorId) {
    case 0: return "Success";
    case 1: return "No Driver";
    case 3: return "API Version is not support";
    case 4: return "API not Initial";
    case 6: return "Invalid device id";
    case 10: return "Not supported";
    case 12: return "No MLU devices";
    case 13: return "No permission";
    }
    return "Cndev_ERROR not found!";
}
#endif

EXPORT cndevRet_t cndevGetDeviceCount(cndevCardInfo_t *cardNum) {
    logcall("cndevGetDeviceCount");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    if (!cardNum) return CNDEV_ERROR_INVALID_ARGUMENT;
    if (cardNum->version != CNDEV_VERSION_6) return CNDEV_ERROR_UNSUPPORTED_API_VERSION;
    cndevRet_t r = (cndevRet_t)envlong("FAKE_CNDEV_COUNT_RESULT", 0);
    if (r != CNDEV_SUCCESS) return r;
    const char *raw = getenv("FAKE_CNDEV_COUNT_RAW");
    cardNum->number = (raw && *raw) ? (__uint32_t)strtoul(raw, NULL, 10) : (__uint32_t)count();
    return CNDEV_SUCCESS;
}

#ifndef FAKE_NO_HANDLE
EXPORT cndevRet_t cndevGetDeviceHandleByIndex(__int32_t index, cndevDevice_t *handle) {
    logcall("cndevGetDeviceHandleByIndex");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    if (!handle) return CNDEV_ERROR_INVALID_ARGUMENT;
    if (index < 0 || index >= count()) return CNDEV_ERROR_INVALID_DEVICE_ID;
    *handle = index + 100;
    return CNDEV_SUCCESS;
}
#endif

#ifndef FAKE_NO_NAME
EXPORT const char *cndevGetCardNameStringByDevId(cndevDevice_t device) {
    logcall("cndevGetCardNameStringByDevId");
    static char names[64][64];
    int i = index_of(device);
    if (!initialized || i < 0) return "Unknown";
    if (!nth("FAKE_CNDEV_NAMES", i, names[i], sizeof names[i])) strcpy(names[i], "MLU590");
    if (envlong("FAKE_CNDEV_NAME_GUARD", 0)) {
        // The name without its terminator, its last byte the last of a
        // readable page that a PROT_NONE page follows: a reader that
        // scans past the mapping crashes.
        static char *guarded;
        long page = sysconf(_SC_PAGESIZE);
        if (!guarded) {
            char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return "mmap failed";
            memset(m, 'X', page);
            if (mprotect(m + page, page, PROT_NONE) != 0) return "mprotect failed";
            guarded = m;
        }
        size_t n = strlen(names[i]);
        memcpy(guarded + page - n, names[i], n);
        return guarded + page - n;
    }
    return names[i];
}
#endif

#ifndef FAKE_NO_UUID
EXPORT cndevRet_t cndevGetUUID(cndevUUID_t *uuidInfo, cndevDevice_t device) {
    logcall("cndevGetUUID");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    int i = index_of(device);
    if (i < 0) return CNDEV_ERROR_INVALID_DEVICE_ID;
    if (!uuidInfo) return CNDEV_ERROR_INVALID_ARGUMENT;
    if (uuidInfo->version != CNDEV_VERSION_6) return CNDEV_ERROR_UNSUPPORTED_API_VERSION;
    cndevRet_t r = (cndevRet_t)envlong("FAKE_CNDEV_UUID_RESULT", 0);
    if (r != CNDEV_SUCCESS) return r;
    char buf[CNDEV_UUID_SIZE];
    if (!nth("FAKE_CNDEV_UUIDS", i, buf, sizeof buf)) snprintf(buf, sizeof buf, "0000000%d-aaaa-bbbb-cccc-dddddddddddd", i % 10);
    memset(uuidInfo->uuid, 0, sizeof uuidInfo->uuid);
    memcpy(uuidInfo->uuid, buf, strlen(buf));
    uuidInfo->ncsUUID64 = 0x1234;
    return CNDEV_SUCCESS;
}
#endif

#ifndef FAKE_NO_MEMORY
EXPORT cndevRet_t cndevGetMemoryUsageV2(cndevMemoryInfoV2_t *memInfo, cndevDevice_t device) {
    logcall("cndevGetMemoryUsageV2");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    if (index_of(device) < 0) return CNDEV_ERROR_INVALID_DEVICE_ID;
    if (!memInfo) return CNDEV_ERROR_INVALID_ARGUMENT;
    memset(memInfo, 0, sizeof *memInfo);
    memInfo->physicalMemoryTotal = envlong("FAKE_CNDEV_MEM_TOTAL_MB", 81920);
    memInfo->physicalMemoryUsed = 2048;
    memInfo->reservedMemory = 512;
    memInfo->virtualMemoryTotal = 1 << 20;
    memInfo->globalMemory = 77;
    return CNDEV_SUCCESS;
}
#endif

#ifndef FAKE_NO_PCI
EXPORT cndevRet_t cndevGetPCIeInfoV2(cndevPCIeInfoV2_t *deviceInfo, cndevDevice_t device) {
    logcall("cndevGetPCIeInfoV2");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    int i = index_of(device);
    if (i < 0) return CNDEV_ERROR_INVALID_DEVICE_ID;
    if (!deviceInfo) return CNDEV_ERROR_INVALID_ARGUMENT;
    memset(deviceInfo, 0, sizeof *deviceInfo);
    deviceInfo->vendor = 0xcabc;
    deviceInfo->deviceId = 0x0590;
    deviceInfo->domain = 0;
    deviceInfo->bus = bus0(0x3a) + (unsigned)i;
    deviceInfo->device = 0;
    deviceInfo->function = 0;
    deviceInfo->slotId = 0xffff;
    return CNDEV_SUCCESS;
}
#endif

#ifndef FAKE_NO_VERSION
EXPORT cndevRet_t cndevGetDriverVersion(__uint32_t *majorVersion, __uint32_t *minorVersion, __uint32_t *buildVersion) {
    logcall("cndevGetDriverVersion");
    if (!initialized) return CNDEV_ERROR_UNINITIALIZED;
    if (!majorVersion || !minorVersion || !buildVersion) return CNDEV_ERROR_INVALID_ARGUMENT;
    const char *v = getenv("FAKE_CNDEV_DRIVER");
    unsigned a = 6, b = 2, c = 10;
    if (v && *v) sscanf(v, "%u.%u.%u", &a, &b, &c);
    *majorVersion = a;
    *minorVersion = b;
    *buildVersion = c;
    return CNDEV_SUCCESS;
}
#endif
