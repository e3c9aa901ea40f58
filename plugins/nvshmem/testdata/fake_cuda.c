// A fake libcuda.so.1 with just what plugins/nvshmem calls to make a
// device's primary context current: two devices, one primary context each,
// a per-thread current context, as in the real driver.
typedef int CUresult;
typedef int CUdevice;
typedef struct fake_ctx { int dev; } *CUcontext;

static struct fake_ctx primaries[2] = {{0}, {1}};
static __thread CUcontext current;
static int initialised;

CUresult cuInit(unsigned int flags) { (void)flags; initialised = 1; return 0; }

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (!initialised) return 3;            /* CUDA_ERROR_NOT_INITIALIZED */
	if (ordinal < 0 || ordinal > 1) return 101; /* CUDA_ERROR_INVALID_DEVICE */
	*d = ordinal;
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { *c = &primaries[d]; return 0; }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = current; return 0; }
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return 0; }

/* For the fake NVSHMEM: which device's context is current (-1: none). */
int fake_cuda_current_device(void) { return current ? current->dev : -1; }
