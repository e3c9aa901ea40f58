/*
 * A fake libmcruntime.so (MetaX MACA runtime) with the function names and C
 * signatures MACA's callers compile against (mcr/mc_runtime.h is not
 * public: InfiniTensor/mxdrv's bindgen of it, FlagTree's metax driver.c,
 * MetaX-MACA/mcTVM, FlagCX's maca_adaptor.cc; drivers/maca/vendor.go cites
 * each), for flagshim's tests: the conformance kit's HIP-shaped fake
 * (driver/drivertest/testdata/fake_hipfamily.c, on the kit's include path)
 * under MACA's names, with MACA's conventions (see that file): MCdevice
 * handles are ordinal+1000 and the primary-context API is there;
 * mcError_t numbers and names follow the CUDA runtime's (cudaError_t), and
 * for a code the fake does not know mcGetErrorName and mcGetErrorString
 * return NULL (the fake's choice: what the real runtime answers then is not
 * known); mcDeviceGetAttribute answers 12345 for every attribute (its
 * numbers are not confirmed); mcMallocHost takes three arguments; there is
 * no mcModuleLoadDataEx, no mcMemcpyDtoHAsync, no mcDeviceTotalMem, no
 * mcDeviceGetUuid, no graphs and none of the driver core's second group
 * (memsets, device copies, queries, value waits, IPC...: their shapes are
 * not confirmed and drivers/maca binds none), and no
 * _v2 name; the version is a plain number (the encoding of
 * mcDriverGetVersion's is not known). Variables: FAKE_MACA_<NAME> or
 * FAKE_<NAME> (fake_common.h).
 */
#define FAKE_PREFIX mc
#define FAKE_ERR_PREFIX "MACA_"
#define FAKE_DEFAULT_VERSION 12345
#define FAKE_NO_DEVICE_TEXT "fake: no MACA-capable device is detected"
#define FAKE_DEVICE_HANDLES
#define FAKE_CUDART_NAMES
#define FAKE_PCI_CUDA_FORM
#define FAKE_ATTRIBUTE_UNCONFIRMED
#define FAKE_HOST_MALLOC MallocHost
#define FAKE_HOST_FREE FreeHost
#define FAKE_LACKS_TOTALMEM
#define FAKE_LACKS_UUID
#define FAKE_LACKS_LOAD_DATA_EX
#define FAKE_LACKS_DTOH_ASYNC
#define FAKE_LACKS_GRAPHS
#define FAKE_LACKS_MORE_OPS
#include "fake_hipfamily.c"
