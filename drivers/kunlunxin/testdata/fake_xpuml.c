// A fake libxpuml.so.1 for the XPUML binding's tests (drivers/kunlunxin):
// the real names, C signatures and 128-byte structs of Kunlunxin's xpuml.h
// (kunlunxin/go-xpuml pkg/xpuml/xpuml.h; zxw3221/libxpu-container
// src/xpuml.h), behaviour driven by the environment:
//
//   FAKE_XPUML_LOG            file each call appends its name to
//   FAKE_XPUML_INIT_RESULT    xpumlInit's return code (default 0)
//   FAKE_XPUML_COUNT          devices (default 2, at most 64)
//   FAKE_XPUML_COUNT_RESULT   xpumlDeviceGetCount's return code
//   FAKE_XPUML_COUNT_RAW      the count xpumlDeviceGetCount answers instead,
//                             an unsigned int as a broken driver might give
//                             it (4294967295); handles still exist only for
//                             the FAKE_XPUML_COUNT devices
//   FAKE_XPUML_HANDLE_FAIL    index whose handle lookup fails (999)
//   FAKE_XPUML_NAMES          comma-separated names (default "R300"), for
//                             xpumlDeviceGetName
//   FAKE_XPUML_MODEL          the attributes' modelId (default 3: R300)
//   FAKE_XPUML_MEM_TOTAL      bytes per device (default 32 GiB; 2 GiB used)
//   FAKE_XPUML_MEM_FREE       the free bytes answered instead (default total - used)
//   FAKE_XPUML_DRIVER         driver version (default 4.0.25)
//
// Build variants: -DFAKE_NO_NAME (the 2022-07 header and binary: no
// xpumlDeviceGetName; the name comes from the attributes' modelId),
// -DFAKE_NO_OPTIONAL (no name, attributes, memory, PCI or driver version),
// -DFAKE_NO_COUNT (a required one missing).
//
// Every query but the init, shutdown and error-string calls answers
// XPUML_ERROR_UNINITIALIZED unless an xpumlInit is outstanding.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum xpumlReturn_enum {
    XPUML_SUCCESS = 0,
    XPUML_ERROR_UNINITIALIZED = 1,
    XPUML_ERROR_INVALID_ARGUMENT = 2,
    XPUML_ERROR_INSUFFICIENT_SIZE = 7,
    XPUML_ERROR_UNKNOWN = 999
} xpumlReturn_t;

typedef struct xpumlDevice_st { int index; } *xpumlDevice_t;

typedef struct xpumlPciInfo_st {
    unsigned int domain, bus, device, function, pciDeviceId, pciSubSystemId;
    char busId[32];
    unsigned long long reserved[9];
} xpumlPciInfo_t;
typedef struct xpumlMemory_st {
    unsigned long long pageSizeGlobalMemory, totalGlobalMemory, freeGlobalMemory, usedGlobalMemory;
    unsigned long long pageSizeL3Memory, totalL3Memory, freeL3Memory, usedL3Memory;
    unsigned long long reserved[8];
} xpumlMemory_t;
typedef struct xpumlDeviceAttributes_st {
    int archId, boardId, modelId;
    unsigned int clusterCount, sdnnCount, dmaEngineCount, decoderCount, encoderCount, imgProcCount, maxVFCount;
    unsigned long long globalMemorySizeMB, l3MemorySizeMB;
    unsigned long long sn[2];
    unsigned long long reserved[7];
} xpumlDeviceAttributes_t;
_Static_assert(sizeof(xpumlPciInfo_t) == 128, "xpumlPciInfo_t is 8B * 16");
_Static_assert(sizeof(xpumlMemory_t) == 128, "xpumlMemory_t is 8B * 16");
_Static_assert(sizeof(xpumlDeviceAttributes_t) == 128, "xpumlDeviceAttributes_t is 8B * 16");

static struct xpumlDevice_st devices[64];

#define FAKE_ENV_PREFIX "FAKE_XPUML_"
#define FAKE_DEFAULT_COUNT 2
#include "fake_env.h"

static xpumlReturn_t put(char *dst, unsigned int length, const char *s) {
    return put_string(dst, length, s, XPUML_ERROR_INVALID_ARGUMENT, XPUML_ERROR_INSUFFICIENT_SIZE);
}

xpumlReturn_t xpumlInit(void) {
    logcall("xpumlInit");
    return (xpumlReturn_t)counted_init();
}

xpumlReturn_t xpumlShutdown(void) {
    logcall("xpumlShutdown");
    return (xpumlReturn_t)counted_shutdown(XPUML_ERROR_UNINITIALIZED);
}

const char *xpumlErrorString(xpumlReturn_t result) {
    logcall("xpumlErrorString");
    return nvml_error_string(result);
}

#define NEED_INIT() do { if (!counted_initialized()) return XPUML_ERROR_UNINITIALIZED; } while (0)

#ifndef FAKE_NO_COUNT
xpumlReturn_t xpumlDeviceGetCount(unsigned int *deviceCount) {
    logcall("xpumlDeviceGetCount");
    NEED_INIT();
    if (!deviceCount) return XPUML_ERROR_INVALID_ARGUMENT;
    xpumlReturn_t r = (xpumlReturn_t)envlong("FAKE_XPUML_COUNT_RESULT", 0);
    if (r != XPUML_SUCCESS) return r;
    const char *raw = getenv("FAKE_XPUML_COUNT_RAW");
    *deviceCount = (raw && *raw) ? (unsigned int)strtoul(raw, NULL, 10) : (unsigned int)count();
    return XPUML_SUCCESS;
}
#endif

xpumlReturn_t xpumlDeviceGetHandleByIndex(unsigned int index, xpumlDevice_t *device) {
    logcall("xpumlDeviceGetHandleByIndex");
    NEED_INIT();
    if (!device || index >= (unsigned int)count()) return XPUML_ERROR_INVALID_ARGUMENT;
    if ((long)index == envlong("FAKE_XPUML_HANDLE_FAIL", -1)) return XPUML_ERROR_UNKNOWN;
    devices[index].index = (int)index;
    *device = &devices[index];
    return XPUML_SUCCESS;
}

static int valid(xpumlDevice_t d) { return d >= &devices[0] && d < &devices[64] && d->index < count(); }

#if !defined(FAKE_NO_NAME) && !defined(FAKE_NO_OPTIONAL)
xpumlReturn_t xpumlDeviceGetName(xpumlDevice_t device, char *name, unsigned int length) {
    logcall("xpumlDeviceGetName");
    NEED_INIT();
    if (!valid(device)) return XPUML_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (!nth("FAKE_XPUML_NAMES", device->index, buf, sizeof buf)) snprintf(buf, sizeof buf, "R300");
    return put(name, length, buf);
}
#endif

#ifndef FAKE_NO_OPTIONAL
xpumlReturn_t xpumlDeviceGetAttributes(xpumlDevice_t device, xpumlDeviceAttributes_t *attributes) {
    logcall("xpumlDeviceGetAttributes");
    NEED_INIT();
    if (!valid(device) || !attributes) return XPUML_ERROR_INVALID_ARGUMENT;
    memset(attributes, 0, sizeof *attributes);
    attributes->modelId = (int)envlong("FAKE_XPUML_MODEL", 3);
    attributes->archId = attributes->modelId <= 1 ? 1 : attributes->modelId <= 299 ? 2 : 3;
    attributes->boardId = 101;
    attributes->clusterCount = 8;
    attributes->globalMemorySizeMB = (unsigned long long)envlong("FAKE_XPUML_MEM_TOTAL", 32L << 30) >> 20;
    return XPUML_SUCCESS;
}

xpumlReturn_t xpumlDeviceGetMemoryInfo(xpumlDevice_t device, xpumlMemory_t *memory) {
    logcall("xpumlDeviceGetMemoryInfo");
    NEED_INIT();
    if (!valid(device) || !memory) return XPUML_ERROR_INVALID_ARGUMENT;
    memset(memory, 0, sizeof *memory);
    memory->pageSizeGlobalMemory = 4096;
    memory->totalGlobalMemory = (unsigned long long)envlong("FAKE_XPUML_MEM_TOTAL", 32L << 30);
    memory->usedGlobalMemory = 2ULL << 30;
    memory->freeGlobalMemory = memory->totalGlobalMemory - memory->usedGlobalMemory;
    if (getenv("FAKE_XPUML_MEM_FREE")) memory->freeGlobalMemory = (unsigned long long)envlong("FAKE_XPUML_MEM_FREE", 0);
    memory->totalL3Memory = 64ULL << 20; /* must not be read as the device's memory */
    return XPUML_SUCCESS;
}

xpumlReturn_t xpumlDeviceGetPciInfo(xpumlDevice_t device, xpumlPciInfo_t *pci) {
    logcall("xpumlDeviceGetPciInfo");
    NEED_INIT();
    if (!valid(device) || !pci) return XPUML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->bus = bus0(0x4f) + (unsigned int)device->index;
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%01X", pci->domain, pci->bus, pci->device, pci->function);
    pci->pciDeviceId = 0x36851d22;
    return XPUML_SUCCESS;
}

xpumlReturn_t xpumlSystemGetDriverVersion(char *version, unsigned int length) {
    logcall("xpumlSystemGetDriverVersion");
    NEED_INIT();
    const char *v = getenv("FAKE_XPUML_DRIVER");
    return put(version, length, (v && *v) ? v : "4.0.25");
}
#endif
