// Checks flagshim's declaration of FlagCX's device adaptor v1 (the 416-byte
// struct of cmd/libflagcxshim/flagcx_v1.h: the name, then 48 pointers in
// this order) against FlagCX's own header, at compile time: if FlagCX's
// header says otherwise, this file does not compile and flagcx-gpu.sh says
// so. Built by scripts/flagcx-gpu.sh with FlagCX's include folders.
#include <cstddef>
#include <cstring> // flagcx_device_adaptor.h uses memset and memcpy

#include "flagcx_device_adaptor.h"

typedef struct flagcxDeviceAdaptor_v1 V1;
static_assert(sizeof(V1) == 416, "FlagCX's v1 is 416 bytes");
static_assert(offsetof(V1, name) == 0 && sizeof(((V1 *)0)->name) == 32, "name[32] first");
static_assert(offsetof(V1, deviceSynchronize) == 32 + 0 * 8, "deviceSynchronize is field 1 of 48");
static_assert(offsetof(V1, deviceMemcpy) == 32 + 1 * 8, "deviceMemcpy is field 2 of 48");
static_assert(offsetof(V1, deviceMemset) == 32 + 2 * 8, "deviceMemset is field 3 of 48");
static_assert(offsetof(V1, deviceMalloc) == 32 + 3 * 8, "deviceMalloc is field 4 of 48");
static_assert(offsetof(V1, deviceFree) == 32 + 4 * 8, "deviceFree is field 5 of 48");
static_assert(offsetof(V1, setDevice) == 32 + 5 * 8, "setDevice is field 6 of 48");
static_assert(offsetof(V1, getDevice) == 32 + 6 * 8, "getDevice is field 7 of 48");
static_assert(offsetof(V1, getDeviceCount) == 32 + 7 * 8, "getDeviceCount is field 8 of 48");
static_assert(offsetof(V1, getVendor) == 32 + 8 * 8, "getVendor is field 9 of 48");
static_assert(offsetof(V1, hostGetDevicePointer) == 32 + 9 * 8, "hostGetDevicePointer is field 10 of 48");
static_assert(offsetof(V1, memHandleInit) == 32 + 10 * 8, "memHandleInit is field 11 of 48");
static_assert(offsetof(V1, memHandleDestroy) == 32 + 11 * 8, "memHandleDestroy is field 12 of 48");
static_assert(offsetof(V1, gdrMemAlloc) == 32 + 12 * 8, "gdrMemAlloc is field 13 of 48");
static_assert(offsetof(V1, gdrMemFree) == 32 + 13 * 8, "gdrMemFree is field 14 of 48");
static_assert(offsetof(V1, hostShareMemAlloc) == 32 + 14 * 8, "hostShareMemAlloc is field 15 of 48");
static_assert(offsetof(V1, hostShareMemFree) == 32 + 15 * 8, "hostShareMemFree is field 16 of 48");
static_assert(offsetof(V1, gdrPtrMmap) == 32 + 16 * 8, "gdrPtrMmap is field 17 of 48");
static_assert(offsetof(V1, gdrPtrMunmap) == 32 + 17 * 8, "gdrPtrMunmap is field 18 of 48");
static_assert(offsetof(V1, streamCreate) == 32 + 18 * 8, "streamCreate is field 19 of 48");
static_assert(offsetof(V1, streamDestroy) == 32 + 19 * 8, "streamDestroy is field 20 of 48");
static_assert(offsetof(V1, streamCopy) == 32 + 20 * 8, "streamCopy is field 21 of 48");
static_assert(offsetof(V1, streamFree) == 32 + 21 * 8, "streamFree is field 22 of 48");
static_assert(offsetof(V1, streamSynchronize) == 32 + 22 * 8, "streamSynchronize is field 23 of 48");
static_assert(offsetof(V1, streamQuery) == 32 + 23 * 8, "streamQuery is field 24 of 48");
static_assert(offsetof(V1, streamWaitEvent) == 32 + 24 * 8, "streamWaitEvent is field 25 of 48");
static_assert(offsetof(V1, streamWaitValue64) == 32 + 25 * 8, "streamWaitValue64 is field 26 of 48");
static_assert(offsetof(V1, streamWriteValue64) == 32 + 26 * 8, "streamWriteValue64 is field 27 of 48");
static_assert(offsetof(V1, eventCreate) == 32 + 27 * 8, "eventCreate is field 28 of 48");
static_assert(offsetof(V1, eventDestroy) == 32 + 28 * 8, "eventDestroy is field 29 of 48");
static_assert(offsetof(V1, eventRecord) == 32 + 29 * 8, "eventRecord is field 30 of 48");
static_assert(offsetof(V1, eventSynchronize) == 32 + 30 * 8, "eventSynchronize is field 31 of 48");
static_assert(offsetof(V1, eventQuery) == 32 + 31 * 8, "eventQuery is field 32 of 48");
static_assert(offsetof(V1, eventElapsedTime) == 32 + 32 * 8, "eventElapsedTime is field 33 of 48");
static_assert(offsetof(V1, ipcMemHandleCreate) == 32 + 33 * 8, "ipcMemHandleCreate is field 34 of 48");
static_assert(offsetof(V1, ipcMemHandleGet) == 32 + 34 * 8, "ipcMemHandleGet is field 35 of 48");
static_assert(offsetof(V1, ipcMemHandleOpen) == 32 + 35 * 8, "ipcMemHandleOpen is field 36 of 48");
static_assert(offsetof(V1, ipcMemHandleClose) == 32 + 36 * 8, "ipcMemHandleClose is field 37 of 48");
static_assert(offsetof(V1, ipcMemHandleFree) == 32 + 37 * 8, "ipcMemHandleFree is field 38 of 48");
static_assert(offsetof(V1, launchKernel) == 32 + 38 * 8, "launchKernel is field 39 of 48");
static_assert(offsetof(V1, copyArgsInit) == 32 + 39 * 8, "copyArgsInit is field 40 of 48");
static_assert(offsetof(V1, copyArgsFree) == 32 + 40 * 8, "copyArgsFree is field 41 of 48");
static_assert(offsetof(V1, launchDeviceFunc) == 32 + 41 * 8, "launchDeviceFunc is field 42 of 48");
static_assert(offsetof(V1, getDeviceProperties) == 32 + 42 * 8, "getDeviceProperties is field 43 of 48");
static_assert(offsetof(V1, getDevicePciBusId) == 32 + 43 * 8, "getDevicePciBusId is field 44 of 48");
static_assert(offsetof(V1, getDeviceByPciBusId) == 32 + 44 * 8, "getDeviceByPciBusId is field 45 of 48");
static_assert(offsetof(V1, launchHostFunc) == 32 + 45 * 8, "launchHostFunc is field 46 of 48");
static_assert(offsetof(V1, dmaSupport) == 32 + 46 * 8, "dmaSupport is field 47 of 48");
static_assert(offsetof(V1, getHandleForAddressRange) == 32 + 47 * 8, "getHandleForAddressRange is field 48 of 48");
static_assert(sizeof(struct flagcxDevProps) == 256 + 3 * sizeof(int), "flagcxDevProps: name[256] and three ints");

int main() { return 0; }
