/*
 * A fake libamdhip64.so.6 (AMD ROCm / Hygon DTK HIP runtime) with the real
 * function names and C signatures of hip_runtime_api.h (ROCm 6.2), for
 * flagshim's tests: the conformance kit's HIP-shaped fake
 * (driver/drivertest/testdata/fake_hipfamily.c, on the kit's include path)
 * under HIP's names, with HIP's own conventions (see that file): hipDevice_t
 * is the ordinal, as CLR's hipDeviceGet returns it; hipDeviceGetAttribute
 * answers HIP's numbers only; hipGetDeviceCount with no device returns
 * hipErrorNoDevice; hipGetErrorName and hipGetErrorString return const
 * char *; hipDeviceGetPCIBusId writes CLR's "0000:18:00.0"; hipDeviceGetUuid
 * writes the 16 hex digits of the UUID's body as characters, as CLR does;
 * hipModuleLoadDataEx ignores its JIT options, as CLR does; the deprecated
 * context API (hipCtx*, hipDevicePrimaryCtx*) is absent. Variables:
 * FAKE_HIP_<NAME> or FAKE_<NAME> (fake_common.h).
 */
#define FAKE_PREFIX hip
#define FAKE_ERR_PREFIX "HIP_"
#define FAKE_DEFAULT_VERSION 60240092 /* HIP_VERSION of 6.2: 6*10000000 + 2*100000 + 40092 */
#define FAKE_NO_DEVICE_TEXT "fake: no ROCm-capable device is detected"
#define FAKE_UUID_TEXT /* hipDeviceGetUuid: ROCr's 16 hex digits as characters (driver.UUIDHexText) */
#include "fake_hipfamily.c"
