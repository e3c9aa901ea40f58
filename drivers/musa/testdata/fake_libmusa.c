/*
 * A fake libmusa.so.1 with the real MUSA driver API names and C signatures
 * (musa.h), for flagshim's tests. Behaviour: see fake_common.h.
 * Build variants:
 *   -DFAKE_NO_TOTALMEM_V2      lacks muDeviceTotalMem_v2 (old drivers: only the 32-bit muDeviceTotalMem)
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional muDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required muCtxSynchronize
 *   -DFAKE_NO_MODULES          lacks every optional module, launch and memory symbol
 *   -DFAKE_NO_LOAD_DATA_EX     lacks muModuleLoadDataEx (only muModuleLoadData)
 */
#define FAKE_ERR_PREFIX "MUSA_"
#define FAKE_DEFAULT_VERSION 30100
#include "fake_common.h"

typedef enum musaError_enum { MUSA_SUCCESS = 0 } MUresult;
typedef int MUdevice;
typedef struct MUctx_st *MUcontext;
typedef struct MUuuid_st { char bytes[16]; } MUuuid;
typedef int MUdevice_attribute;
typedef struct MUmod_st *MUmodule;
typedef struct MUfunc_st *MUfunction;
typedef struct MUstream_st *MUstream;
typedef unsigned long long MUdeviceptr;
typedef enum MUjit_option_enum { MUSA_JIT_OPTION_PLACEHOLDER = 0 } MUjit_option;

#define EXPORT __attribute__((visibility("default")))

EXPORT MUresult muInit(unsigned int Flags) { return fake_init(Flags); }
EXPORT MUresult muDriverGetVersion(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT MUresult muDeviceGetCount(int *count) { return fake_device_get_count(count); }
EXPORT MUresult muDeviceGet(MUdevice *device, int ordinal) { return fake_device_get(device, ordinal); }
EXPORT MUresult muDeviceGetName(char *name, int len, MUdevice dev) { return fake_device_get_name(name, len, dev); }
#ifndef FAKE_NO_TOTALMEM_V2
EXPORT MUresult muDeviceTotalMem_v2(size_t *bytes, MUdevice dev) {
	unsigned long long b = 0;
	MUresult r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = (size_t)b;
	return r;
}
#endif
EXPORT MUresult muDeviceTotalMem(unsigned int *bytes, MUdevice dev) {
	unsigned long long b = 0;
	MUresult r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = b > 0xffffffffULL ? 0xffffffffU : (unsigned int)b;
	return r;
}
EXPORT MUresult muDeviceGetAttribute(int *pi, MUdevice_attribute attrib, MUdevice dev) { return fake_device_get_attribute(pi, attrib, dev); }
EXPORT MUresult muDeviceGetUuid(MUuuid *uuid, MUdevice dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
EXPORT MUresult muDeviceGetUuid_v2(MUuuid *uuid, MUdevice dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT MUresult muDeviceGetPCIBusId(char *pciBusId, int len, MUdevice dev) { return fake_device_get_pci_bus_id(pciBusId, len, dev); }
#endif
EXPORT MUresult muDevicePrimaryCtxRetain(MUcontext *pctx, MUdevice dev) { return fake_primary_ctx_retain((void **)pctx, dev); }
EXPORT MUresult muDevicePrimaryCtxRelease_v2(MUdevice dev) { return fake_primary_ctx_release(dev); }
EXPORT MUresult muCtxSetCurrent(MUcontext ctx) { return fake_ctx_set_current(ctx); }
EXPORT MUresult muCtxGetCurrent(MUcontext *pctx) { return fake_ctx_get_current((void **)pctx); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT MUresult muCtxSynchronize(void) { return fake_ctx_synchronize(); }
#endif
EXPORT MUresult muMemGetInfo_v2(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	MUresult r = fake_mem_get_info(&f, &t);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT MUresult muGetErrorName(MUresult error, const char **pStr) { return fake_error_name(error, pStr); }
EXPORT MUresult muGetErrorString(MUresult error, const char **pStr) { return fake_error_string(error, pStr); }

#ifndef FAKE_NO_MODULES
#ifndef FAKE_NO_LOAD_DATA_EX
EXPORT MUresult muModuleLoadDataEx(MUmodule *module, const void *image, unsigned int numOptions, MUjit_option *options, void **optionValues) {
	return fake_module_load_data_ex((void **)module, image, numOptions, (const int *)options, optionValues);
}
#endif
EXPORT MUresult muModuleLoadData(MUmodule *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT MUresult muModuleUnload(MUmodule hmod) { return fake_module_unload(hmod); }
EXPORT MUresult muModuleGetFunction(MUfunction *hfunc, MUmodule hmod, const char *name) { return fake_module_get_function((void **)hfunc, hmod, name); }
EXPORT MUresult muModuleGetGlobal_v2(MUdeviceptr *dptr, size_t *bytes, MUmodule hmod, const char *name) { return fake_module_get_global(dptr, bytes, hmod, name); }
EXPORT MUresult muLaunchKernel(MUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		MUstream hStream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}
EXPORT MUresult muMemAlloc_v2(MUdeviceptr *dptr, size_t bytesize) { return fake_mem_alloc(dptr, bytesize); }
EXPORT MUresult muMemFree_v2(MUdeviceptr dptr) { return fake_mem_free(dptr); }
EXPORT MUresult muMemcpyHtoD_v2(MUdeviceptr dstDevice, const void *srcHost, size_t ByteCount) { return fake_memcpy_htod(dstDevice, srcHost, ByteCount); }
EXPORT MUresult muMemcpyDtoH_v2(void *dstHost, MUdeviceptr srcDevice, size_t ByteCount) { return fake_memcpy_dtoh(dstHost, srcDevice, ByteCount); }
#endif
