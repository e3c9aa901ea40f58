/*
 * A fake libcuda.so.1 with the real CUDA driver API names and C signatures
 * (cuda.h), for flagshim's tests. Behaviour: see fake_common.h.
 * Build variants:
 *   -DFAKE_NO_TOTALMEM_V2      lacks cuDeviceTotalMem_v2 (old drivers: only the 32-bit cuDeviceTotalMem)
 *   -DFAKE_NO_PCI_BUS_ID       lacks the optional cuDeviceGetPCIBusId
 *   -DFAKE_NO_CTX_SYNCHRONIZE  lacks the required cuCtxSynchronize
 *   -DFAKE_NO_MODULES          lacks every optional module, launch and memory symbol
 *   -DFAKE_NO_LOAD_DATA_EX     lacks cuModuleLoadDataEx (only cuModuleLoadData)
 */
#define FAKE_ERR_PREFIX "CUDA_"
#define FAKE_DEFAULT_VERSION 13000
#include "fake_common.h"

typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
typedef int CUdevice_attribute;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef enum CUjit_option_enum { CUDA_JIT_OPTION_PLACEHOLDER = 0 } CUjit_option;

#define EXPORT __attribute__((visibility("default")))

EXPORT CUresult cuInit(unsigned int Flags) { return fake_init(Flags); }
EXPORT CUresult cuDriverGetVersion(int *driverVersion) { return fake_driver_get_version(driverVersion); }
EXPORT CUresult cuDeviceGetCount(int *count) { return fake_device_get_count(count); }
EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) { return fake_device_get(device, ordinal); }
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev) { return fake_device_get_name(name, len, dev); }
#ifndef FAKE_NO_TOTALMEM_V2
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
	unsigned long long b = 0;
	CUresult r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = (size_t)b;
	return r;
}
#endif
EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev) {
	unsigned long long b = 0;
	CUresult r = fake_device_total_mem(&b, dev);
	if (r == 0) *bytes = b > 0xffffffffULL ? 0xffffffffU : (unsigned int)b;
	return r;
}
EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) { return fake_device_get_attribute(pi, attrib, dev); }
EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return fake_device_get_uuid((unsigned char *)uuid->bytes, dev); }
#ifndef FAKE_NO_PCI_BUS_ID
EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) { return fake_device_get_pci_bus_id(pciBusId, len, dev); }
#endif
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) { return fake_primary_ctx_retain((void **)pctx, dev); }
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return fake_primary_ctx_release(dev); }
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) { return fake_ctx_set_current(ctx); }
EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) { return fake_ctx_get_current((void **)pctx); }
#ifndef FAKE_NO_CTX_SYNCHRONIZE
EXPORT CUresult cuCtxSynchronize(void) { return fake_ctx_synchronize(); }
#endif
EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
	unsigned long long f = 0, t = 0;
	CUresult r = fake_mem_get_info(&f, &t);
	if (r == 0) { *free = (size_t)f; *total = (size_t)t; }
	return r;
}
EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr) { return fake_error_name(error, pStr); }
EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr) { return fake_error_string(error, pStr); }

#ifndef FAKE_NO_MODULES
#ifndef FAKE_NO_LOAD_DATA_EX
EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues) {
	return fake_module_load_data_ex((void **)module, image, numOptions, (const int *)options, optionValues);
}
#endif
EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) { return fake_module_load((void **)module, image, NULL, 0); }
EXPORT CUresult cuModuleUnload(CUmodule hmod) { return fake_module_unload(hmod); }
EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) { return fake_module_get_function((void **)hfunc, hmod, name); }
EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name) { return fake_module_get_global(dptr, bytes, hmod, name); }
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
		unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
		CUstream hStream, void **kernelParams, void **extra) {
	return fake_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) { return fake_mem_alloc(dptr, bytesize); }
EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) { return fake_mem_free(dptr); }
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount) { return fake_memcpy_htod(dstDevice, srcHost, ByteCount); }
EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount) { return fake_memcpy_dtoh(dstHost, srcDevice, ByteCount); }
#endif
