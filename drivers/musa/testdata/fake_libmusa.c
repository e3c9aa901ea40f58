/*
 * The fake libmusa.so.1 of drivers/musa's tests: the conformance kit's
 * CUDA-shaped fake driver (driver/drivertest/testdata/fake_cufamily.c, on
 * the kit's include path) under MUSA's names (musa.h mirrors cuda.h with the
 * mu prefix and MUSA_ result names). Its behaviour follows the kit's knobs,
 * FAKE_MUSA_<NAME> or FAKE_<NAME> (fake_common.h).
 */
#define FAKE_MU
#include "fake_cufamily.c"
