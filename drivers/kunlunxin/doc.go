// Package kunlunxin is Kunlunxin's (Baidu Kunlun's) XPU runtime, XRE
// (libxpurt.so, xpu_*), described as data for flagshim's driver core
// (package driver): its library, its symbol table and the adapters its
// shapes need, its XPUError_t codes and the sentinels each matches, its
// attribute numbers and context model, and its presence tier (XPUML,
// Kunlunxin's management library, then /dev/xpu<N>).
//
// The device type is "kunlunxin": Kunlunxin's PyTorch builds claim "cuda"
// (NVIDIA's name) and Intel's PyTorch "xpu"; flagshim takes neither.
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (kunlunxin.New) and registers it and
// its probe. The library is looked for on first use: $FLAGOS_LIBXPURT_PATH
// (an absolute path, no fallback), then libxpurt.so.1 and libxpurt.so as
// the dynamic loader would resolve them, then /usr/local/xpu/lib64 (XRE's
// installer), /usr/local/xpu/so and /usr/local/xre/so (the unpacked
// package). XRE_PATH and the like are build-time conventions of Paddle and
// FlagCX, not read. Where /dev/xpuctrl, the control node, is not a
// character device, a searched library is found and checked but not loaded
// (Library.Nodes); the override always loads.
//
// The API bound is XRE 4's public xpu/runtime.h and xpu/defs.h (XRE
// 4.33.0, the vendor's headers as mobius/kunlun_k200 vendors them).
// Paddle and FlagTree compile the same xpu_* names against XRE 5, whose
// enum values were not seen. How it differs from CUDA, and what the
// description does about it (Adapters cites each prototype):
//   - Every function returns int; handles (XPUStream, XPUEvent) are void *.
//     There are no device handles: the device is its ordinal, and the
//     current device is per thread (driver.CurrentDevice: xpu_set_device,
//     xpu_current_device).
//   - There is no init call: the first call initializes the runtime, so
//     OpInit is xpu_device_count (an adapter that drops the count).
//   - xpu_get_driver_version writes two unsigned ints; the adapter encodes
//     them as major*10000 + minor*100 (VersionBase 10000).
//   - xpu_device_get_attr writes a uint64 and takes the attribute before the
//     device; the adapter reads it into CUDA's int. The multiprocessor count
//     is XPUATTR_NUM_CLUSTER (as FlagTree's XPU backend gives Triton); the
//     compute capability's major is the Kunlun generation of XPUATTR_MODEL's
//     board (1 KL1, 2 KL2, 3 KL3, by defs.h's ranges), its minor unknown
//     (0). XRE has no name or PCI bus id function: the name is
//     xpu_device_model_str's for XPUATTR_MODEL (a static inline of defs.h,
//     carried here as data: "R300"), the bus id XPUATTR_PCI_ADDRESS written
//     as XPUML writes bus ids ("00000000:4F:00.0"). (The header's comment
//     says the attributes are the current device's while the call takes a
//     device id; one third party reports an XRE build that reads the
//     current device: the binding passes the id, as Paddle does.)
//   - xpu_malloc takes a memory kind (C++'s default argument, which C callers
//     pass: XPU_MEM_MAIN 0); xpu_memcpy takes a direction whose numbers are
//     not CUDA's (XPU_DEVICE_TO_HOST 0, XPU_HOST_TO_DEVICE 1): adapters.
//   - xpu_stream_create, xpu_event_create and xpu_stream_wait_event take no
//     flags: adapters (the core's flags are always 0; others are refused).
//     xpu_host_alloc is cuMemHostAlloc's shape ("flags must be 0").
//   - The error codes are XPUError_t (701..720, 800..817), read under both
//     signs: XRE's API reference says failures are negative, Paddle compares
//     positive constants, and which libxpurt returns is not confirmed. Their
//     names are data (results.go): xpu_strerror is static inline, and there
//     is no error-name function, so errors carry no message.
//
// What is not bound, and why (each feature's call answers an error
// matching device.ErrNotSupported that names it, or the value is unknown):
//   - A device-wide synchronize: XRE has none (xpu_wait waits for one
//     stream). Synchronize is xpu_wait(NULL), which waits for the default
//     stream only: work queued on streams the caller created (NewStream) is
//     waited for with the stream's own Synchronize.
//   - Modules and launches: XRE 4 has no public module loader (kernels are
//     linked into the program by Kunlunxin's compiler; xpu_launch_async's
//     configuration is implicit state), and XRE 5's loader is internal.
//   - Memory information and the total memory: XRE has no mem-get-info, and
//     the unit of XPUATTR_MEM_MAIN_CAPACITY is not confirmed; Properties'
//     TotalMemory is 0 (unknown). XPUML gives both in the presence tier.
//   - Asynchronous copies: xpu_memcpy_async is declared in xpu/runtime_ex.h,
//     which is not public.
//   - Event timing: XRE 4 has no elapsed time (events record, wait and
//     synchronize).
//   - UUIDs: neither XRE nor XPUML has one.
//
// XPU_VISIBLE_DEVICES (comma-separated ordinals) is the variable
// Kunlunxin's stacks select devices with: Paddle's xpu_info.cc counts its
// entries as the devices the runtime shows, vLLM-Kunlun sets it per worker;
// that XRE itself applies it is inferred from that use, not read in a
// source. It is reported, and the presence tier applies it to what XPUML
// lists (CUDA's rules for ordinal lists; a UUID list cannot be resolved). Kunlun's
// CUDA-compatible layer of XRE 5 (libcudart.so, libxpucuda.so, often linked
// as libcuda.so.1) is not this package's: it may answer drivers/cuda's
// search.
//
// The presence tier: XPUML (libxpuml.so.1, FLAGOS_LIBXPUML_PATH overrides
// the search), an NVML clone whose public header (go-xpuml, 2022) gives
// names (xpumlDeviceGetName where the library has it, else the attributes'
// model), memory, PCI bus ids, the generation and the driver version;
// without it the /dev/xpu<N> nodes and /dev/xpuctrl. Neither loads XRE.
//
// No Kunlunxin hardware exists where flagshim is developed: the package is
// proven only against a fake libxpurt.so.1 and a fake libxpuml.so.1 with the
// names, C signatures and numbers above (testdata/), which the tests build
// from C.
package kunlunxin
