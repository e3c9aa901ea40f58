// Package presence answers "which GPUs of vendor X are here?" without
// initializing any driver in the calling process. It is flagshim's
// "presence" probe tier (FLAGOS_PROBE=presence).
//
// Why: a process that has initialized CUDA (cuInit) and then forks leaves a
// child in which CUDA is broken; the same holds for MUSA and HIP. That is
// why PyTorch counts devices through NVML when PYTORCH_NVML_BASED_CUDA_CHECK
// is set, and Triton when TRITON_NVML_BASED_CUDA_CHECK is. This package asks
// only the vendors' management libraries and facts that need no init. It
// never calls cuInit, muInit or hipInit, and never falls back to them: when
// a source cannot answer, its Report says why, and the caller chooses
// another tier (FLAGOS_PROBE=isolated asks a child process).
//
// # Sources
//
//   - NVML: libnvidia-ml.so.1, NVIDIA's management library (what
//     nvidia-smi uses). nvmlInit_v2, the devices' names, UUIDs ("GPU-..."),
//     memory, compute capability and PCI bus IDs, the driver version and the
//     CUDA driver API version, then nvmlShutdown.
//   - MTML: libmtml.so, Moore Threads' management library (what
//     mthreads-gmi uses). mtmlLibraryInit, names, UUIDs, memory, PCI bus IDs
//     and the driver version, then mtmlLibraryShutDown.
//   - KFD: the AMD/Hygon kernel driver's topology in
//     /sys/class/kfd/kfd/topology: GPU nodes, their gfx version, VRAM, PCI
//     location and unique_id (ROCR's UUID); /dev/kfd must exist. No library
//     is loaded.
//   - Device nodes: /dev/nvidiaN, /dev/mtgpu.N, /dev/kfd and the amdgpu
//     /dev/dri/renderDN. The fallback where no management library is
//     installed: a node says a GPU is attached, not that its runtime works.
//
// Each call opens, asks and shuts down: nothing is kept between calls (the
// dynamic loader keeps an opened library mapped, as it always does), calls
// are safe for concurrent use, and none panics. A missing library is a
// Report whose Err wraps ErrNoLibrary and whose Reason says what was tried
// and which variable to set.
//
// # Visibility
//
// The management libraries and sysfs list every device whatever the
// visibility variables say, so each source applies them itself, the way the
// runtime will: a Report's Devices are the visible ones and each Index is
// the ordinal the runtime will give the device. One parser reads every
// variable, in the dialect of the runtime that reads it (see Visible and
// VisibleHIP for the rules and where they come from).
//
// # Variables
//
//	source        library override      visibility
//	NVML          FLAGOS_LIBNVML_PATH   CUDA_VISIBLE_DEVICES
//	MTML          FLAGOS_LIBMTML_PATH   MUSA_VISIBLE_DEVICES
//	KFD           (none)                ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES
//	                                    (CUDA_VISIBLE_DEVICES when HIP's is unset or empty)
//	device nodes  (none)                as the vendor's source above, ordinals only
//
// The overrides take an absolute path (a relative one is refused); libraries
// are opened only after the loader has checked that nobody else can write
// them. Options replace the environment (WithLookupEnv) and the filesystem
// root for /dev and /sys (WithRoot), for tests.
package presence
