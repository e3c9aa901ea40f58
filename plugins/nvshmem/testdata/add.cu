// A plain kernel with no NVSHMEM code: the module NVSHMEM's hook must leave
// alone. Built to PTX by scripts/nvshmem-build.sh.
extern "C" __global__ void add(const float *a, const float *b, float *c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
