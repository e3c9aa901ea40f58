/*
 * The fake libcuda.so.1 of drivers/cuda's tests: the conformance kit's
 * CUDA-shaped fake driver (driver/drivertest/testdata/fake_cufamily.c, on
 * the kit's include path) under CUDA's own names, cu* functions and CUDA_
 * result names. Its behaviour follows the kit's knobs, FAKE_CUDA_<NAME> or
 * FAKE_<NAME> (fake_common.h).
 */
#include "fake_cufamily.c"
