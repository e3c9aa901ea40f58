// The two-PE ring (TestGPUTwoPE, scripts/two_pe_check.py): built like
// pe_kernel.cu, with -rdc=true and device-linked against libnvshmem_device.a
// by scripts/nvshmem-build.sh into ring.cubin, so the module holds
// nvshmemi_device_lib_version_d and nvshmemi_device_state_d and needs
// nvshmemx_cumodule_init before its first launch.
//
// The host runs, on every PE: sym = nvshmem_malloc(4) (collective), *sym = -1,
// nvshmem_barrier_all(), ring_put(sym), synchronize, nvshmem_barrier_all(),
// ring_read(sym, out). Then out[0] is what the left neighbour put,
// (my_pe - 1 + n_pes) % n_pes, and out[1], out[2] are my_pe and n_pes as the
// device sees them. This is the shape of NVSHMEM's own "simple shift"
// example: the put in a kernel, the barrier on the host.
#include <nvshmem.h>

// ring_put puts this PE's number into sym on the next PE and waits for the
// put to complete (nvshmem_quiet).
extern "C" __global__ void ring_put(int *sym) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int me = nvshmem_my_pe();
        const int n = nvshmem_n_pes();
        nvshmem_int_p(sym, me, (me + 1) % n);
        nvshmem_quiet();
    }
}

// ring_read copies what arrived in this PE's sym, and the PE's identity, to
// out (ordinary device memory the host reads back).
extern "C" __global__ void ring_read(const int *sym, int *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = *(volatile const int *)sym;
        out[1] = nvshmem_my_pe();
        out[2] = nvshmem_n_pes();
    }
}
