// A fake libmtml.so for the MTML binding's tests (drivers/musa): the real
// names, C signatures and structs of Moore Threads' mtml.h (MTML 2.2.0),
// behaviour driven by the environment:
//
//   FAKE_MTML_LOG            file each call appends its name to
//   FAKE_MTML_INIT_RESULT    mtmlLibraryInit's return code (default 0)
//   FAKE_MTML_COUNT          devices (default 1, at most 64)
//   FAKE_MTML_COUNT_RESULT   mtmlLibraryCountDevice's return code
//   FAKE_MTML_COUNT_RAW      the count mtmlLibraryCountDevice answers instead,
//                            an unsigned int as a broken driver might give it
//                            (4294967295); devices still exist only for the
//                            FAKE_MTML_COUNT ones
//   FAKE_MTML_NAMES          comma-separated names (default "MTT S4000")
//   FAKE_MTML_UUIDS          comma-separated UUIDs (default 0000000<i>-aaaa-...)
//   FAKE_MTML_MEM_TOTAL      bytes per device (default 48 GiB; 2 GiB used)
//   FAKE_MTML_DRIVER         driver version (default 2.7.0)
//   FAKE_MTML_MPC_PARENT     index of a device that is an MPC parent
//   FAKE_MTML_BUS0           device 0's PCI bus number, hex (default 3a); device
//                            i's is BUS0 + i
//
// Build variants leave optional functions out: -DFAKE_NO_MEMORY,
// -DFAKE_NO_SYSTEM, -DFAKE_NO_PCI, -DFAKE_NO_PROPERTY, -DFAKE_NO_ERRSTR;
// -DFAKE_NO_UUID leaves a required one out.
//
// Library handles are counted: every call checks its handle is one that
// mtmlLibraryInit returned and mtmlLibraryShutDown has not released.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int MtmlReturn;
#define MTML_SUCCESS 0
#define MTML_ERROR_INVALID_ARGUMENT 3
#define MTML_ERROR_INSUFFICIENT_SIZE 6
#define MTML_ERROR_NOT_FOUND 7

typedef struct MtmlLibrary { unsigned magic; } MtmlLibrary;
typedef struct MtmlSystem { unsigned magic; } MtmlSystem;
typedef struct MtmlDevice { int index; } MtmlDevice;
typedef struct MtmlMemory { int index; } MtmlMemory;

typedef struct {
    char sbdf[32];
    unsigned int segment, bus, device, pciDeviceId, pciSubsystemId, busWidth;
    float pciMaxSpeed, pciCurSpeed;
    unsigned int pciMaxWidth, pciCurWidth, pciMaxGen, pciCurGen;
    int rsvd[6];
} MtmlPciInfo;
_Static_assert(sizeof(MtmlPciInfo) == 104, "MtmlPciInfo is 104 bytes");

typedef struct {
    unsigned int virtCap : 1;
    unsigned int virtRole : 3;
    unsigned int mpcCap : 1;
    unsigned int mpcType : 3;
    unsigned int mtLinkCap : 1;
    unsigned int rsvd : 23;
    unsigned int rsvd2 : 32;
} MtmlDeviceProperty;
_Static_assert(sizeof(MtmlDeviceProperty) == 8, "MtmlDeviceProperty is 8 bytes");

#define MAGIC 0x6d746d6cu
static MtmlDevice devices[64];
static MtmlMemory memories[64];
static MtmlSystem thesystem = {MAGIC};

#define FAKE_ENV_PREFIX "FAKE_MTML_"
#define FAKE_DEFAULT_COUNT 1
#include "fake_env.h"

static int live(const MtmlLibrary *lib) { return lib && lib->magic == MAGIC; }

static MtmlReturn put(char *dst, unsigned int length, const char *s) {
    return put_string(dst, length, s, MTML_ERROR_INVALID_ARGUMENT, MTML_ERROR_INSUFFICIENT_SIZE);
}

MtmlReturn mtmlLibraryInit(MtmlLibrary **lib) {
    logcall("mtmlLibraryInit");
    if (!lib) return MTML_ERROR_INVALID_ARGUMENT;
    MtmlReturn r = (MtmlReturn)envlong("FAKE_MTML_INIT_RESULT", 0);
    if (r != MTML_SUCCESS) return r;
    MtmlLibrary *l = malloc(sizeof *l);
    l->magic = MAGIC;
    *lib = l;
    return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryShutDown(MtmlLibrary *lib) {
    logcall("mtmlLibraryShutDown");
    if (!live(lib)) return MTML_ERROR_INVALID_ARGUMENT;
    lib->magic = 0;
    free(lib);
    return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryCountDevice(const MtmlLibrary *lib, unsigned int *n) {
    logcall("mtmlLibraryCountDevice");
    if (!live(lib) || !n) return MTML_ERROR_INVALID_ARGUMENT;
    MtmlReturn r = (MtmlReturn)envlong("FAKE_MTML_COUNT_RESULT", 0);
    if (r != MTML_SUCCESS) return r;
    const char *raw = getenv("FAKE_MTML_COUNT_RAW");
    *n = (raw && *raw) ? (unsigned int)strtoul(raw, NULL, 10) : (unsigned int)count();
    return MTML_SUCCESS;
}

MtmlReturn mtmlLibraryInitDeviceByIndex(const MtmlLibrary *lib, unsigned int index, MtmlDevice **dev) {
    logcall("mtmlLibraryInitDeviceByIndex");
    if (!live(lib) || !dev || index >= (unsigned int)count()) return MTML_ERROR_INVALID_ARGUMENT;
    devices[index].index = (int)index;
    *dev = &devices[index];
    return MTML_SUCCESS;
}

MtmlReturn mtmlDeviceGetName(const MtmlDevice *dev, char *name, unsigned int length) {
    logcall("mtmlDeviceGetName");
    if (!dev) return MTML_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (!nth("FAKE_MTML_NAMES", dev->index, buf, sizeof buf)) strcpy(buf, "MTT S4000");
    return put(name, length, buf);
}

#ifndef FAKE_NO_UUID
MtmlReturn mtmlDeviceGetUUID(const MtmlDevice *dev, char *uuid, unsigned int length) {
    logcall("mtmlDeviceGetUUID");
    if (!dev) return MTML_ERROR_INVALID_ARGUMENT;
    char buf[128];
    if (!nth("FAKE_MTML_UUIDS", dev->index, buf, sizeof buf))
        snprintf(buf, sizeof buf, "%08x-aaaa-bbbb-cccc-dddddddddddd", dev->index);
    return put(uuid, length, buf);
}
#endif

#ifndef FAKE_NO_MEMORY
MtmlReturn mtmlDeviceInitMemory(const MtmlDevice *dev, MtmlMemory **mem) {
    logcall("mtmlDeviceInitMemory");
    if (!dev || !mem) return MTML_ERROR_INVALID_ARGUMENT;
    memories[dev->index].index = dev->index;
    *mem = &memories[dev->index];
    return MTML_SUCCESS;
}

MtmlReturn mtmlMemoryGetTotal(const MtmlMemory *mem, unsigned long long *total) {
    logcall("mtmlMemoryGetTotal");
    if (!mem || !total) return MTML_ERROR_INVALID_ARGUMENT;
    *total = (unsigned long long)envlong("FAKE_MTML_MEM_TOTAL", 48L << 30);
    return MTML_SUCCESS;
}

MtmlReturn mtmlMemoryGetUsed(const MtmlMemory *mem, unsigned long long *used) {
    logcall("mtmlMemoryGetUsed");
    if (!mem || !used) return MTML_ERROR_INVALID_ARGUMENT;
    *used = 2ULL << 30;
    return MTML_SUCCESS;
}
#endif

#ifndef FAKE_NO_SYSTEM
MtmlReturn mtmlLibraryInitSystem(const MtmlLibrary *lib, MtmlSystem **sys) {
    logcall("mtmlLibraryInitSystem");
    if (!live(lib) || !sys) return MTML_ERROR_INVALID_ARGUMENT;
    *sys = &thesystem;
    return MTML_SUCCESS;
}

MtmlReturn mtmlSystemGetDriverVersion(const MtmlSystem *sys, char *version, unsigned int length) {
    logcall("mtmlSystemGetDriverVersion");
    if (!sys || sys->magic != MAGIC) return MTML_ERROR_INVALID_ARGUMENT;
    const char *v = getenv("FAKE_MTML_DRIVER");
    return put(version, length, (v && *v) ? v : "2.7.0");
}
#endif

#ifndef FAKE_NO_PCI
MtmlReturn mtmlDeviceGetPciInfo(const MtmlDevice *dev, MtmlPciInfo *pci) {
    logcall("mtmlDeviceGetPciInfo");
    if (!dev || !pci) return MTML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    pci->bus = bus0(0x3a) + (unsigned int)dev->index;
    snprintf(pci->sbdf, sizeof pci->sbdf, "00000000:%02x:00.0", pci->bus);
    pci->pciMaxSpeed = 16.0f;
    pci->rsvd[5] = -1;
    return MTML_SUCCESS;
}
#endif

#ifndef FAKE_NO_PROPERTY
MtmlReturn mtmlDeviceGetProperty(const MtmlDevice *dev, MtmlDeviceProperty *prop) {
    logcall("mtmlDeviceGetProperty");
    if (!dev || !prop) return MTML_ERROR_INVALID_ARGUMENT;
    memset(prop, 0, sizeof *prop);
    prop->virtRole = 7; // neighbours set, so a misread of mpcType shows
    prop->mtLinkCap = 1;
    prop->mpcCap = 1;
    prop->mpcType = ((long)dev->index == envlong("FAKE_MTML_MPC_PARENT", -1)) ? 1 : 2;
    return MTML_SUCCESS;
}
#endif

#ifndef FAKE_NO_ERRSTR
const char *mtmlErrorString(MtmlReturn r) {
    logcall("mtmlErrorString");
    switch (r) {
    case 0: return "Success";
    case 1: return "Driver Not Loaded";
    case 3: return "Invalid Argument";
    }
    return "Unknown Error";
}
#endif
