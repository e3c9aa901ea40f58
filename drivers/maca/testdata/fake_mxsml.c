// A fake libmxsml.so for the MXSML binding's tests (drivers/maca): the real
// names, C signatures and structs of MetaX's MxSmlExtension.h (MXSML 2.3.1,
// as go-mxsml vendors it: ghangz/go-mxsml
// pkg/mxsmlextension/MxSmlExtension.h), behaviour driven by the
// environment:
//
//   FAKE_MXSML_LOG            file each call appends its name to
//   FAKE_MXSML_INIT_RESULT    mxSmlExInit's return code (default 0)
//   FAKE_MXSML_COUNT          devices (default 2, at most 64)
//   FAKE_MXSML_COUNT_RESULT   mxSmlExDeviceGetCount's return code
//   FAKE_MXSML_COUNT_RAW      the count mxSmlExDeviceGetCount answers instead,
//                             an unsigned int as a broken driver might give
//                             it (4294967295); handles still exist only for
//                             the FAKE_MXSML_COUNT devices
//   FAKE_MXSML_HANDLE_FAIL    index whose handle lookup fails (999)
//   FAKE_MXSML_NAMES          comma-separated names (default "MetaX C500")
//   FAKE_MXSML_UUIDS          comma-separated UUIDs (default GPU-5f3c...-<i>)
//   FAKE_MXSML_MEM_TOTAL      bytes per device (default 64 GiB; 4 GiB used)
//   FAKE_MXSML_MEM_ORDER      "header" (default: {free, total, used} as
//                             MxSmlExtension.h 2.3.1), "pymxsml" ({total,
//                             free, used} as MetaX's pymxsml declares it) or
//                             "garbage" (three numbers that are neither)
//   FAKE_MXSML_DRIVER         driver version (default 2.32.0.6)
//   FAKE_MXSML_MACA_COUNT     what mxSmlExMacaDeviceGetCount answers ("the
//                             number of maca compute devices"; default the
//                             device count)
//
// mxSmlExDeviceGetUUID refuses a length past MXSMLEX_DEVICE_UUID_BUFFER_SIZE
// (80, "Guaranteed maximum possible size for device UUID") as the header's
// "length is invalid" allows.
//
// Build variants: -DFAKE_NO_OPTIONAL (no mxSmlExDeviceGetUUID,
// ...GetMemoryInfo, ...GetPciInfo, ...GetComputeCapability,
// mxSmlExSystemGetDriverVersion, mxSmlExMacaDeviceGetCount), -DFAKE_NO_NAME
// (a required one missing).
//
// Every query but the init, shutdown and error-string calls answers
// MXSMLEX_ERROR_UNINITIALIZED unless an mxSmlExInit is outstanding.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum MxSmlExReturn {
    MXSMLEX_SUCCESS = 0,
    MXSMLEX_ERROR_UNINITIALIZED = 1,
    MXSMLEX_ERROR_INVALID_ARGUMENT = 2,
    MXSMLEX_ERROR_INSUFFICIENT_SIZE = 7,
    MXSMLEX_ERROR_UNKNOWN = 999
} mxSmlExReturn_t;

struct MxSmlExDevice { int index; };
typedef struct {
    struct MxSmlExDevice *handle;
} mxSmlExDevice_t;
_Static_assert(sizeof(mxSmlExDevice_t) == sizeof(void *), "mxSmlExDevice_t is one pointer");

typedef struct MxSmlExMemory {
    unsigned long long free;
    unsigned long long total;
    unsigned long long used;
} mxSmlExMemory_t;

typedef struct MxSmlExPciInfo {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} mxSmlExPciInfo_t;
_Static_assert(sizeof(mxSmlExPciInfo_t) == 68, "mxSmlExPciInfo_t is 68 bytes");

static struct MxSmlExDevice devices[64];

#define FAKE_ENV_PREFIX "FAKE_MXSML_"
#define FAKE_DEFAULT_COUNT 2
#include "fake_env.h"

static mxSmlExReturn_t put(char *dst, unsigned int length, const char *s) {
    return put_string(dst, length, s, MXSMLEX_ERROR_INVALID_ARGUMENT, MXSMLEX_ERROR_INSUFFICIENT_SIZE);
}

mxSmlExReturn_t mxSmlExInit(void) {
    logcall("mxSmlExInit");
    return (mxSmlExReturn_t)counted_init();
}

mxSmlExReturn_t mxSmlExShutdown(void) {
    logcall("mxSmlExShutdown");
    return (mxSmlExReturn_t)counted_shutdown(MXSMLEX_ERROR_UNINITIALIZED);
}

const char *mxSmlExErrorString(mxSmlExReturn_t result) {
    logcall("mxSmlExErrorString");
    if ((int)result == 18) return "RM has detected an MXSML/RM version mismatch.";
    return nvml_error_string(result);
}

#define NEED_INIT() do { if (!counted_initialized()) return MXSMLEX_ERROR_UNINITIALIZED; } while (0)

mxSmlExReturn_t mxSmlExDeviceGetCount(unsigned int *deviceCount) {
    logcall("mxSmlExDeviceGetCount");
    NEED_INIT();
    if (!deviceCount) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    mxSmlExReturn_t r = (mxSmlExReturn_t)envlong("FAKE_MXSML_COUNT_RESULT", 0);
    if (r != MXSMLEX_SUCCESS) return r;
    const char *raw = getenv("FAKE_MXSML_COUNT_RAW");
    *deviceCount = (raw && *raw) ? (unsigned int)strtoul(raw, NULL, 10) : (unsigned int)count();
    return MXSMLEX_SUCCESS;
}

mxSmlExReturn_t mxSmlExGetDeviceHandleByIndex(unsigned int deviceId, mxSmlExDevice_t *deviceHandle) {
    logcall("mxSmlExGetDeviceHandleByIndex");
    NEED_INIT();
    if (!deviceHandle || deviceId >= (unsigned int)count()) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    if ((long)deviceId == envlong("FAKE_MXSML_HANDLE_FAIL", -1)) return MXSMLEX_ERROR_UNKNOWN;
    devices[deviceId].index = (int)deviceId;
    deviceHandle->handle = &devices[deviceId];
    return MXSMLEX_SUCCESS;
}

/* valid reports whether h is a handle this fake gave out. */
static int valid(mxSmlExDevice_t h) {
    return h.handle >= &devices[0] && h.handle < &devices[64] && h.handle->index < count();
}

#ifndef FAKE_NO_NAME
mxSmlExReturn_t mxSmlExDeviceGetName(mxSmlExDevice_t deviceHandle, char *name, unsigned int length) {
    logcall("mxSmlExDeviceGetName");
    NEED_INIT();
    if (!valid(deviceHandle)) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (!nth("FAKE_MXSML_NAMES", deviceHandle.handle->index, buf, sizeof buf)) snprintf(buf, sizeof buf, "MetaX C500");
    return put(name, length, buf);
}
#endif

#ifndef FAKE_NO_OPTIONAL
mxSmlExReturn_t mxSmlExDeviceGetUUID(mxSmlExDevice_t deviceHandle, char *uuid, unsigned int length) {
    logcall("mxSmlExDeviceGetUUID");
    NEED_INIT();
    if (!valid(deviceHandle) || length > 80) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (!nth("FAKE_MXSML_UUIDS", deviceHandle.handle->index, buf, sizeof buf))
        snprintf(buf, sizeof buf, "GPU-5f3c0000-1111-2222-3333-00000000000%d", deviceHandle.handle->index);
    return put(uuid, length, buf);
}

mxSmlExReturn_t mxSmlExMacaDeviceGetCount(unsigned int *deviceCount) {
    logcall("mxSmlExMacaDeviceGetCount");
    NEED_INIT();
    if (!deviceCount) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    *deviceCount = (unsigned int)envlong("FAKE_MXSML_MACA_COUNT", count());
    return MXSMLEX_SUCCESS;
}

mxSmlExReturn_t mxSmlExDeviceGetMemoryInfo(mxSmlExDevice_t deviceHandle, mxSmlExMemory_t *memory) {
    logcall("mxSmlExDeviceGetMemoryInfo");
    NEED_INIT();
    if (!valid(deviceHandle) || !memory) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    unsigned long long total = (unsigned long long)envlong("FAKE_MXSML_MEM_TOTAL", 64L << 30);
    unsigned long long used = 4ULL << 30, free = total - used;
    const char *order = getenv("FAKE_MXSML_MEM_ORDER");
    if (order && !strcmp(order, "pymxsml")) {
        /* {total, free, used} in the header's field names */
        memory->free = total;
        memory->total = free;
        memory->used = used;
    } else if (order && !strcmp(order, "garbage")) {
        memory->free = 7;
        memory->total = total;
        memory->used = total / 2;
    } else {
        memory->free = free;
        memory->total = total;
        memory->used = used;
    }
    return MXSMLEX_SUCCESS;
}

mxSmlExReturn_t mxSmlExDeviceGetPciInfo(mxSmlExDevice_t deviceHandle, mxSmlExPciInfo_t *pci) {
    logcall("mxSmlExDeviceGetPciInfo");
    NEED_INIT();
    if (!valid(deviceHandle) || !pci) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->bus = bus0(0x3a) + (unsigned int)deviceHandle.handle->index;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02x:00.0", pci->bus);
    snprintf(pci->busId, sizeof pci->busId, "0000:%02x:00.0", pci->bus);
    pci->pciDeviceId = 0x40819999;
    return MXSMLEX_SUCCESS;
}

mxSmlExReturn_t mxSmlExDeviceGetComputeCapability(mxSmlExDevice_t deviceHandle, int *major, int *minor) {
    logcall("mxSmlExDeviceGetComputeCapability");
    NEED_INIT();
    if (!valid(deviceHandle) || !major || !minor) return MXSMLEX_ERROR_INVALID_ARGUMENT;
    *major = 10;
    *minor = 0;
    return MXSMLEX_SUCCESS;
}

mxSmlExReturn_t mxSmlExSystemGetDriverVersion(char *version, unsigned int length) {
    logcall("mxSmlExSystemGetDriverVersion");
    NEED_INIT();
    const char *v = getenv("FAKE_MXSML_DRIVER");
    return put(version, length, (v && *v) ? v : "2.32.0.6");
}
#endif
