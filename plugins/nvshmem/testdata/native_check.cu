// A C++ cross-check of what plugins/nvshmem does through purego: it prints
// the layouts and initializer bytes of the init attribute and the unique ID
// as this NVSHMEM's headers define them, then runs the same one-PE scenario
// (unique-id bootstrap through nvshmemx_hostlib_init_attr, a plain module
// whose nvshmemx_cumodule_init returns 7, the NVSHMEM module whose kernel
// writes my_pe and n_pes). Built and run by scripts/nvshmem-build.sh when
// asked to (NATIVE=1); the Go tests do not need it.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorName(r_, &s_); \
    printf("FAIL %s = %d %s\n", #x, (int)r_, s_); return 1; } } while (0)

static void dump(const char *name, const void *p, size_t n) {
    printf("%s (%zu bytes):", name, n);
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) printf("%s%02x", i % 16 ? " " : "\n  ", b[i]);
    printf("\n");
}

static std::vector<char> slurp(const char *path) {
    std::vector<char> v;
    FILE *f = fopen(path, "rb");
    if (!f) return v;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
    fclose(f);
    v.push_back(0);
    return v;
}

int main(int argc, char **argv) {
    if (argc < 3) { printf("usage: native_check add.ptx pe.cubin\n"); return 2; }
    printf("sizeof nvshmemx_uniqueid_t %zu, nvshmemx_uniqueid_args_t %zu, nvshmemx_init_args_t %zu, nvshmemx_init_attr_t %zu\n",
           sizeof(nvshmemx_uniqueid_t), sizeof(nvshmemx_uniqueid_args_t), sizeof(nvshmemx_init_args_t), sizeof(nvshmemx_init_attr_t));
    printf("offsetof attr.version %zu mpi_comm %zu args %zu args.version %zu args.uid_args %zu uid_args.id %zu myrank %zu nranks %zu\n",
           offsetof(nvshmemx_init_attr_t, version), offsetof(nvshmemx_init_attr_t, mpi_comm), offsetof(nvshmemx_init_attr_t, args),
           offsetof(nvshmemx_init_attr_t, args.version), offsetof(nvshmemx_init_attr_t, args.uid_args),
           offsetof(nvshmemx_init_attr_t, args.uid_args.id), offsetof(nvshmemx_init_attr_t, args.uid_args.myrank),
           offsetof(nvshmemx_init_attr_t, args.uid_args.nranks));
    printf("NVSHMEMX_INIT_WITH_UNIQUEID %d NVSHMEM_STATUS_IS_INITIALIZED %d NVSHMEM_STATUS_IS_BOOTSTRAPPED %d NVSHMEM_STATUS_NOT_INITIALIZED %d\n",
           (int)NVSHMEMX_INIT_WITH_UNIQUEID, (int)NVSHMEM_STATUS_IS_INITIALIZED, (int)NVSHMEM_STATUS_IS_BOOTSTRAPPED, (int)NVSHMEM_STATUS_NOT_INITIALIZED);
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    dump("uniqueid initializer", &id, sizeof id);
    dump("init_attr initializer", &attr, sizeof attr);
    printf("init_status before: %d\n", nvshmemx_init_status());
    int rc = nvshmemx_get_uniqueid(&id);
    printf("get_uniqueid: %d\n", rc);
    dump("uniqueid", &id, 16);
    rc = nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr);
    printf("set_attr_uniqueid_args: %d\n", rc);
    dump("init_attr after set", &attr, 64);
    rc = nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    printf("hostlib_init_attr: %d; init_status %d; my_pe %d n_pes %d\n", rc, nvshmemx_init_status(), nvshmem_my_pe(), nvshmem_n_pes());
    if (rc) return 1;

    CK(cuInit(0));
    CUcontext cur = 0;
    CK(cuCtxGetCurrent(&cur));
    printf("current context after init: %p\n", (void *)cur);
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    printf("primary context: %p (same: %d)\n", (void *)ctx, ctx == cur);
    CK(cuCtxSetCurrent(ctx));

    std::vector<char> ptx = slurp(argv[1]), cubin = slurp(argv[2]);
    CUmodule plain;
    CK(cuModuleLoadData(&plain, ptx.data()));
    fflush(stdout);
    rc = nvshmemx_cumodule_init(plain);
    fflush(stderr);
    printf("control: cumodule_init(plain) = %d\n", rc);
    CK(cuModuleUnload(plain));

    for (int round = 0; round < 3; round++) {
        CUmodule m;
        CK(cuModuleLoadData(&m, cubin.data()));
        CUdeviceptr a; size_t n;
        CUresult r1 = cuModuleGetGlobal(&a, &n, m, "nvshmemi_device_lib_version_d");
        CUresult r2 = cuModuleGetGlobal(&a, &n, m, "nvshmemi_device_state_d");
        printf("round %d globals: version %d state %d (size %zu)\n", round, (int)r1, (int)r2, n);
        rc = nvshmemx_cumodule_init(m);
        printf("round %d cumodule_init = %d\n", round, rc);
        CUfunction f;
        CK(cuModuleGetFunction(&f, m, "write_pe"));
        CUdeviceptr out;
        CK(cuMemAlloc(&out, 8));
        int init[2] = {-7, -7};
        CK(cuMemcpyHtoD(out, init, 8));
        void *args[] = {&out};
        CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
        CK(cuCtxSynchronize());
        int got[2];
        CK(cuMemcpyDtoH(got, out, 8));
        printf("round %d kernel wrote my_pe=%d n_pes=%d\n", round, got[0], got[1]);
        CK(cuMemFree(out));
        rc = nvshmemx_cumodule_finalize(m);
        printf("round %d cumodule_finalize = %d\n", round, rc);
        CK(cuModuleUnload(m));
    }
    nvshmemx_hostlib_finalize();
    printf("init_status after finalize: %d\n", nvshmemx_init_status());
    printf("NATIVE OK\n");
    return 0;
}
