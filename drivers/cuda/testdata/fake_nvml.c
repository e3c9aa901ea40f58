// A fake libnvidia-ml.so.1 for the NVML binding's tests (drivers/cuda): the
// real names and C signatures of nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h),
// behaviour driven by the environment:
//
//   FAKE_NVML_LOG            file each call appends its name to
//   FAKE_NVML_INIT_RESULT    nvmlInit's return code (default 0)
//   FAKE_NVML_COUNT          devices (default 2, at most 4096, flagshim's bound:
//                            the scale benchmarks)
//   FAKE_NVML_COUNT_RESULT   nvmlDeviceGetCount's return code
//   FAKE_NVML_COUNT_RAW      the count nvmlDeviceGetCount answers instead, an
//                            unsigned int as a broken driver might give it
//                            (4294967295); handles still exist only for the
//                            FAKE_NVML_COUNT devices
//   FAKE_NVML_HANDLE_FAIL    index whose handle lookup fails (999)
//   FAKE_NVML_NAME_RESULT    nvmlDeviceGetName's return code
//   FAKE_NVML_NAMES          comma-separated names (default "Fake NVIDIA GPU": GPUs of one model)
//   FAKE_NVML_UUIDS          comma-separated UUIDs (default GPU-0000000<i>-...)
//   FAKE_NVML_MEM_TOTAL      bytes per device: NVML's total, the reserve
//                            included (default 80 GiB; 1 GiB used)
//   FAKE_NVML_RESERVED_MB    MiB of it the driver and firmware reserve
//                            (default 0; an H100 80GB HBM3 with driver 580
//                            reserves 480): nvmlDeviceGetMemoryInfo_v2's
//                            reserved, counted in v1's used; the CUDA driver's
//                            total (the fake libcuda's FAKE_CUDA_TOTAL_MEM) is
//                            then MEM_TOTAL - RESERVED_MB MiB
//   FAKE_NVML_MEMORY_V2_RESULT  nvmlDeviceGetMemoryInfo_v2's return code
//   FAKE_NVML_DRIVER         driver version (default 550.54.15)
//   FAKE_NVML_CUDA           CUDA driver API version (default 12040)
//   FAKE_NVML_MIG            per device, comma-separated: "" or "-" (MIG not
//                            supported, the default), "d" (MIG mode off), or
//                            the number of MIG instances of a GPU in MIG mode
//                            (at indexes 0..n-1 of a maximum of 7)
//   FAKE_NVML_MIG_HOLE       a MIG index that answers NVML_ERROR_NOT_FOUND
//                            though below the GPU's count (a destroyed one)
//
// Build variants: -DFAKE_V1_ONLY (the pre-R319 names nvmlInit,
// nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex), -DFAKE_NO_CC,
// -DFAKE_NO_CUDA_VERSION, -DFAKE_NO_PCI, -DFAKE_NO_MEMORY_V2 (an NVML
// before R510) (optional symbols missing),
// -DFAKE_NO_NAME (a required one missing).
//
// Every query but the init, shutdown and error-string calls answers
// NVML_ERROR_UNINITIALIZED unless an nvmlInit is outstanding, as NVML does.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st {
    int index;
    int mig; /* 0: the GPU; k+1: its MIG instance k */
} *nvmlDevice_t;
typedef struct nvmlMemory_st {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t is 40 bytes");
#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml##data##_v##ver##_t) | (ver << 24U))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t v3 is 68 bytes");

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

#define FAKE_MAX_COUNT 4096
static struct nvmlDevice_st devices[FAKE_MAX_COUNT];
static struct nvmlDevice_st migs[FAKE_MAX_COUNT][7];

#define FAKE_ENV_PREFIX "FAKE_NVML_"
#define FAKE_DEFAULT_COUNT 2
#include "fake_env.h"

static nvmlReturn_t put(char *dst, unsigned int length, const char *s) {
    return put_string(dst, length, s, NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_INSUFFICIENT_SIZE);
}

#ifdef FAKE_V1_ONLY
#define INIT nvmlInit
#define GETCOUNT nvmlDeviceGetCount
#define GETHANDLE nvmlDeviceGetHandleByIndex
#else
#define INIT nvmlInit_v2
#define GETCOUNT nvmlDeviceGetCount_v2
#define GETHANDLE nvmlDeviceGetHandleByIndex_v2
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

nvmlReturn_t INIT(void) {
    logcall(STR(INIT));
    return (nvmlReturn_t)counted_init();
}

nvmlReturn_t nvmlShutdown(void) {
    logcall("nvmlShutdown");
    return (nvmlReturn_t)counted_shutdown(NVML_ERROR_UNINITIALIZED);
}

const char *nvmlErrorString(nvmlReturn_t r) {
    logcall("nvmlErrorString");
    return nvml_error_string(r);
}

#define NEED_INIT() do { if (!counted_initialized()) return NVML_ERROR_UNINITIALIZED; } while (0)

nvmlReturn_t GETCOUNT(unsigned int *n) {
    logcall(STR(GETCOUNT));
    NEED_INIT();
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = (nvmlReturn_t)envlong("FAKE_NVML_COUNT_RESULT", 0);
    if (r != NVML_SUCCESS) return r;
    const char *raw = getenv("FAKE_NVML_COUNT_RAW");
    *n = (raw && *raw) ? (unsigned int)strtoul(raw, NULL, 10) : (unsigned int)count();
    return NVML_SUCCESS;
}

nvmlReturn_t GETHANDLE(unsigned int index, nvmlDevice_t *dev) {
    logcall(STR(GETHANDLE));
    NEED_INIT();
    if (!dev || index >= (unsigned int)count()) return NVML_ERROR_INVALID_ARGUMENT;
    if ((long)index == envlong("FAKE_NVML_HANDLE_FAIL", -1)) return NVML_ERROR_UNKNOWN;
    devices[index].index = (int)index;
    *dev = &devices[index];
    return NVML_SUCCESS;
}

#ifndef FAKE_NO_NAME
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length) {
    logcall("nvmlDeviceGetName");
    NEED_INIT();
    if (!dev) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = (nvmlReturn_t)envlong("FAKE_NVML_NAME_RESULT", 0);
    if (r != NVML_SUCCESS) return r;
    char buf[128];
    if (!nth("FAKE_NVML_NAMES", dev->index, buf, sizeof buf))
        snprintf(buf, sizeof buf, "Fake NVIDIA GPU");
    if (dev->mig) strncat(buf, " MIG 1g.10gb", sizeof buf - strlen(buf) - 1);
    return put(name, length, buf);
}
#endif

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int length) {
    logcall("nvmlDeviceGetUUID");
    NEED_INIT();
    if (!dev) return NVML_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (dev->mig)
        snprintf(buf, sizeof buf, "MIG-%08x-5555-6666-7777-%012x", dev->index, dev->mig - 1);
    else if (!nth("FAKE_NVML_UUIDS", dev->index, buf, sizeof buf))
        snprintf(buf, sizeof buf, "GPU-%08x-1111-2222-3333-444444444444", dev->index);
    return put(uuid, length, buf);
}

/* memory_of is dev's memory as v2 tells it: the total (reserve included),
   the reserve (none for a MIG instance), 1 GiB allocated, the rest free. */
static nvmlMemory_v2_t memory_of(nvmlDevice_t dev) {
    nvmlMemory_v2_t m = {0};
    m.total = (unsigned long long)envlong("FAKE_NVML_MEM_TOTAL", 80L << 30);
    m.reserved = (unsigned long long)envlong("FAKE_NVML_RESERVED_MB", 0) << 20;
    if (dev->mig) {
        m.total = 10ULL << 30;
        m.reserved = 0;
    }
    m.used = 1ULL << 30;
    m.free = m.total - m.reserved - m.used;
    return m;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m) {
    logcall("nvmlDeviceGetMemoryInfo");
    NEED_INIT();
    if (!dev || !m) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlMemory_v2_t v2 = memory_of(dev);
    m->total = v2.total;
    m->used = v2.reserved + v2.used; /* "Sum of Reserved and Allocated device memory" */
    m->free = v2.free;
    return NVML_SUCCESS;
}

#ifndef FAKE_NO_MEMORY_V2
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m) {
    logcall("nvmlDeviceGetMemoryInfo_v2");
    NEED_INIT();
    if (!dev || !m) return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlReturn_t r = (nvmlReturn_t)envlong("FAKE_NVML_MEMORY_V2_RESULT", 0);
    if (r != NVML_SUCCESS) return r;
    *m = memory_of(dev);
    m->version = nvmlMemory_v2;
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    logcall("nvmlSystemGetDriverVersion");
    NEED_INIT();
    const char *v = getenv("FAKE_NVML_DRIVER");
    return put(version, length, (v && *v) ? v : "550.54.15");
}

#ifndef FAKE_NO_CC
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor) {
    logcall("nvmlDeviceGetCudaComputeCapability");
    NEED_INIT();
    if (!dev || !major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}
#endif

#ifndef FAKE_NO_CUDA_VERSION
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
    logcall("nvmlSystemGetCudaDriverVersion_v2");
    NEED_INIT();
    if (!v) return NVML_ERROR_INVALID_ARGUMENT;
    *v = (int)envlong("FAKE_NVML_CUDA", 12040);
    return NVML_SUCCESS;
}
#endif

#ifndef FAKE_NO_PCI
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci) {
    logcall("nvmlDeviceGetPciInfo_v3");
    NEED_INIT();
    if (!dev || !pci) return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    // Device i is at bus BUS0 + i (0x18 + i): past bus 0xff, in the next
    // PCI domain, so that 4096 devices have 4096 addresses.
    unsigned int at = bus0(0x18) + (unsigned int)dev->index;
    pci->domain = at >> 8;
    pci->bus = at & 0xff;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:00.0", pci->domain, pci->bus);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:00.0", pci->domain, pci->bus);
    pci->pciDeviceId = 0x233010de;
    return NVML_SUCCESS;
}
#endif

#ifndef FAKE_NO_MIG
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6

/* mig_of is device i's FAKE_NVML_MIG entry: -1 not supported, -2 off, else
   its instance count. */
static int mig_of(int i) {
    char buf[32];
    if (!nth("FAKE_NVML_MIG", i, buf, sizeof buf) || !buf[0] || buf[0] == '-') return -1;
    if (buf[0] == 'd') return -2;
    int n = atoi(buf);
    return n > 7 ? 7 : n;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending) {
    logcall("nvmlDeviceGetMigMode");
    NEED_INIT();
    if (!dev || dev->mig || !current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
    int m = mig_of(dev->index);
    if (m == -1) return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = m >= 0 ? 1 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count) {
    logcall("nvmlDeviceGetMaxMigDeviceCount");
    NEED_INIT();
    if (!dev || dev->mig || !count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = mig_of(dev->index) >= 0 ? 7 : 0; /* zero "if MIG is not supported or enabled" */
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig) {
    logcall("nvmlDeviceGetMigDeviceHandleByIndex");
    NEED_INIT();
    if (!dev || dev->mig || !mig || index >= 7) return NVML_ERROR_INVALID_ARGUMENT;
    int m = mig_of(dev->index);
    if (m < 0) return NVML_ERROR_NOT_SUPPORTED;
    if ((int)index >= m || (long)index == envlong("FAKE_NVML_MIG_HOLE", -1)) return NVML_ERROR_NOT_FOUND;
    struct nvmlDevice_st *h = &migs[dev->index][index];
    h->index = dev->index;
    h->mig = (int)index + 1;
    *mig = h;
    return NVML_SUCCESS;
}
#endif
