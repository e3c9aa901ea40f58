/*
 * A fake libacme.so.1 for Acme's tests: the conformance kit's CUDA-shaped
 * fake driver (driver/drivertest/testdata, given with -I) under Acme's
 * names, acme* functions and ACME_ result names. Its behaviour follows the
 * kit's knobs, read as FAKE_ACME_<NAME> or FAKE_<NAME>: FAKE_ACME_DEVICE_COUNT,
 * FAKE_ACME_INIT_RESULT, ... (fake_common.h).
 */
#define FAKE_PREFIX acme
#define FAKE_ERR_PREFIX "ACME_"
#define FAKE_DEFAULT_VERSION 1000
#include "fake_cufamily.c"
