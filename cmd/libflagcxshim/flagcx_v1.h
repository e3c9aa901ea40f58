/*
 * FlagCX's device adaptor plugin ABI, version 1, declared here from its
 * public description (FlagCX, github.com/flagos-ai/FlagCX at 0c721293:
 * flagcx/adaptor/include/flagcx_device_adaptor.h:30-116 for the struct,
 * flagcx/include/flagcx.h for the enums and flagcxResult_t,
 * flagcx_device_adaptor.h:15-20 for flagcxDevProps). These are flagshim's
 * own declarations of that layout, checked below with static assertions:
 * 32 bytes of name, then 48 function pointers, 416 bytes on LP64.
 */
#ifndef FLAGCXSHIM_FLAGCX_V1_H
#define FLAGCXSHIM_FLAGCX_V1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	flagcxSuccess = 0,
	flagcxUnhandledDeviceError = 1,
	flagcxSystemError = 2,
	flagcxInternalError = 3,
	flagcxInvalidArgument = 4,
	flagcxInvalidUsage = 5,
	flagcxRemoteError = 6,
	flagcxInProgress = 7,
	flagcxUnhandledCCLError = 8,
	flagcxNotSupported = 9,
} flagcxResult_t;

typedef enum { flagcxMemcpyHostToDevice = 0, flagcxMemcpyDeviceToHost = 1, flagcxMemcpyDeviceToDevice = 2 } flagcxMemcpyType_t;
typedef enum { flagcxMemHost = 0, flagcxMemDevice = 1, flagcxMemManaged = 2 } flagcxMemType_t;
typedef enum { flagcxEventDefault = 0, flagcxEventDisableTiming = 1 } flagcxEventType_t;

/* Opaque to FlagCX's core; a stream's first word is the native handle
 * (FlagCX's NCCL adaptor reads it), an event's too (only the device adaptor
 * reads it); an IPC handle is flat bytes, at most 64. */
typedef struct flagcxStream *flagcxStream_t;
typedef struct flagcxEvent *flagcxEvent_t;
typedef struct flagcxIpcMemHandle *flagcxIpcMemHandle_t;
typedef void (*flagcxLaunchFunc_t)(flagcxStream_t, void *);

#define FLAGCX_IPC_HANDLE_SIZE 64
#define FLAGCX_MAX_VENDOR_LEN 128

struct flagcxDevProps {
	char name[256];
	int pciBusId;
	int pciDeviceId;
	int pciDomainId;
};

struct flagcxDeviceAdaptor_v1 {
	char name[32];
	flagcxResult_t (*deviceSynchronize)(void);
	flagcxResult_t (*deviceMemcpy)(void *dst, void *src, size_t size, flagcxMemcpyType_t type, flagcxStream_t stream, void *args);
	flagcxResult_t (*deviceMemset)(void *ptr, int value, size_t size, flagcxMemType_t type, flagcxStream_t stream);
	flagcxResult_t (*deviceMalloc)(void **ptr, size_t size, flagcxMemType_t type, flagcxStream_t stream);
	flagcxResult_t (*deviceFree)(void *ptr, flagcxMemType_t type, flagcxStream_t stream);
	flagcxResult_t (*setDevice)(int dev);
	flagcxResult_t (*getDevice)(int *dev);
	flagcxResult_t (*getDeviceCount)(int *count);
	flagcxResult_t (*getVendor)(char *vendor);
	flagcxResult_t (*hostGetDevicePointer)(void **pDevice, void *pHost);
	flagcxResult_t (*memHandleInit)(int dev_id, void **memHandle);
	flagcxResult_t (*memHandleDestroy)(int dev, void *memHandle);
	flagcxResult_t (*gdrMemAlloc)(void **ptr, size_t size, void *memHandle);
	flagcxResult_t (*gdrMemFree)(void *ptr, void *memHandle);
	flagcxResult_t (*hostShareMemAlloc)(void **ptr, size_t size, void *memHandle);
	flagcxResult_t (*hostShareMemFree)(void *ptr, void *memHandle);
	flagcxResult_t (*gdrPtrMmap)(void **pcpuptr, void *devptr, size_t sz);
	flagcxResult_t (*gdrPtrMunmap)(void *cpuptr, size_t sz);
	flagcxResult_t (*streamCreate)(flagcxStream_t *stream);
	flagcxResult_t (*streamDestroy)(flagcxStream_t stream);
	flagcxResult_t (*streamCopy)(flagcxStream_t *newStream, void *oldStream);
	flagcxResult_t (*streamFree)(flagcxStream_t stream);
	flagcxResult_t (*streamSynchronize)(flagcxStream_t stream);
	flagcxResult_t (*streamQuery)(flagcxStream_t stream);
	flagcxResult_t (*streamWaitEvent)(flagcxStream_t stream, flagcxEvent_t event);
	flagcxResult_t (*streamWaitValue64)(flagcxStream_t stream, void *addr, uint64_t value, int flags);
	flagcxResult_t (*streamWriteValue64)(flagcxStream_t stream, void *addr, uint64_t value, int flags);
	flagcxResult_t (*eventCreate)(flagcxEvent_t *event, flagcxEventType_t eventType);
	flagcxResult_t (*eventDestroy)(flagcxEvent_t event);
	flagcxResult_t (*eventRecord)(flagcxEvent_t event, flagcxStream_t stream);
	flagcxResult_t (*eventSynchronize)(flagcxEvent_t event);
	flagcxResult_t (*eventQuery)(flagcxEvent_t event);
	flagcxResult_t (*eventElapsedTime)(float *ms, flagcxEvent_t start, flagcxEvent_t end);
	flagcxResult_t (*ipcMemHandleCreate)(flagcxIpcMemHandle_t *handle, size_t *size);
	flagcxResult_t (*ipcMemHandleGet)(flagcxIpcMemHandle_t handle, void *devPtr);
	flagcxResult_t (*ipcMemHandleOpen)(flagcxIpcMemHandle_t handle, void **devPtr);
	flagcxResult_t (*ipcMemHandleClose)(void *devPtr);
	flagcxResult_t (*ipcMemHandleFree)(flagcxIpcMemHandle_t handle);
	flagcxResult_t (*launchKernel)(void *func, unsigned int block_x, unsigned int block_y, unsigned int block_z,
		unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, void **args, size_t share_mem, void *stream,
		void *memHandle);
	flagcxResult_t (*copyArgsInit)(void **args);
	flagcxResult_t (*copyArgsFree)(void *args);
	flagcxResult_t (*launchDeviceFunc)(flagcxStream_t stream, flagcxLaunchFunc_t fn, void *args);
	flagcxResult_t (*getDeviceProperties)(struct flagcxDevProps *props, int dev);
	flagcxResult_t (*getDevicePciBusId)(char *pciBusId, int len, int dev);
	flagcxResult_t (*getDeviceByPciBusId)(int *dev, const char *pciBusId);
	flagcxResult_t (*launchHostFunc)(flagcxStream_t stream, void (*fn)(void *), void *args);
	flagcxResult_t (*dmaSupport)(bool *dmaBufferSupport);
	flagcxResult_t (*getHandleForAddressRange)(void *handleOut, void *buffer, size_t size, unsigned long long flags);
};

_Static_assert(sizeof(struct flagcxDeviceAdaptor_v1) == 416, "FlagCX's v1 struct is 416 bytes on LP64");
_Static_assert(offsetof(struct flagcxDeviceAdaptor_v1, deviceSynchronize) == 32, "48 pointers follow the 32-byte name");
_Static_assert(offsetof(struct flagcxDeviceAdaptor_v1, getHandleForAddressRange) == 32 + 47 * 8, "the 48th pointer is last");

#endif
