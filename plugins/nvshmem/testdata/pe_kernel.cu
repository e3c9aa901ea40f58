// A kernel using NVSHMEM device code: built with -rdc=true and device-linked
// against libnvshmem_device.a by scripts/nvshmem-build.sh, so the module
// holds nvshmemi_device_lib_version_d and nvshmemi_device_state_d and needs
// nvshmemx_cumodule_init before its first launch.
#include <nvshmem.h>

#ifndef VARIANT
#define VARIANT 1
#endif

#if VARIANT == 1
extern "C" __global__ void write_pe(int *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = nvshmem_my_pe();
        out[1] = nvshmem_n_pes();
    }
}
#else
// A second module for the "load another after reloads" check: another
// kernel name, values offset by 100.
extern "C" __global__ void write_pe2(int *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = 100 + nvshmem_my_pe();
        out[1] = 100 + nvshmem_n_pes();
    }
}
#endif
