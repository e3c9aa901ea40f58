/*
 * A fake libtopsrt.so (Enflame TOPS runtime, TopsRider) with the real
 * function names and C signatures of tops_runtime_api.h
 * (EnflameTechnology/tops-codec-headers, the TopsRider 2.3 header), for
 * flagshim's tests: the conformance kit's HIP-shaped fake
 * (driver/drivertest/testdata/fake_hipfamily.c, on the kit's include path)
 * under TOPS's names, with the TOPS runtime's own conventions (see that
 * file): topsDevice_t is the ordinal, as HIP's is; there is no
 * topsDeviceGetAttribute (topsDeviceComputeCapability answers the compute
 * capability); topsGetDeviceCount with no device returns topsErrorNoDevice
 * ("Call to topsGetDeviceCount returned 0 devices"); 1054 is topsErrorTbd,
 * the enum's end marker; there is no context API, no UUID function (the
 * header has none), no topsModuleLoadDataEx, no graphs and none of the
 * driver core's second group (memsets, device copies, queries, value
 * waits, IPC...: drivers/gcu binds none). Variables:
 * FAKE_TOPS_<NAME> or FAKE_<NAME> (fake_common.h).
 */
#define FAKE_PREFIX tops
#define FAKE_ERR_PREFIX "TOPS_"
#define FAKE_DEFAULT_VERSION 2030 /* topsDriverGetVersion: 1000 major + 10 minor, 2.3 */
#define FAKE_NO_DEVICE_TEXT "fake: no GCU is detected"
#define FAKE_COMPUTE_CAPABILITY_FN
#define FAKE_LACKS_UUID
#define FAKE_LACKS_LOAD_DATA_EX
#define FAKE_LACKS_GRAPHS
#define FAKE_LACKS_MORE_OPS
#include "fake_hipfamily.c"
