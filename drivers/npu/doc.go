// Package npu is Huawei's Ascend NPUs for flagshim: AscendCL, the runtime
// API of CANN (libascendcl.so, acl*/aclrt*), as a driver.Vendor of device
// type "npu" (torch_npu's name), with its presence tier (DCMI, libdcmi.so,
// then the /dev/davinci<N> nodes). vendor.go lists the sources every fact
// here comes from; it was proven on fakes only (testdata/), no Ascend
// hardware was available.
//
// # The library and the variables
//
// libascendcl.so (then libacl_rt.so, CANN 8.5's split runtime) is searched
// through the dynamic loader, then in /usr/local/Ascend/ascend-toolkit/
// latest/lib64, /usr/local/Ascend/cann/lib64 and /usr/local/Ascend/latest/
// lib64; it needs the driver's libraries (/usr/local/Ascend/driver/lib64/
// driver) on LD_LIBRARY_PATH, as CANN's set_env.sh puts them. A searched
// library is not loaded where /dev/davinci_manager is missing (the runtime
// could only find no NPU). FLAGOS_LIBASCENDCL_PATH overrides the search,
// FLAGOS_LIBDCMI_PATH DCMI's. ASCEND_RT_VISIBLE_DEVICES is applied by the
// runtime (its dialect, decimal logical ids in ascending order with no
// repeat, else no device at all, is Visibility);
// ASCEND_VISIBLE_DEVICES, Huawei's container runtime's choice of
// /dev/davinci nodes, is reported only. FLAGOS_BACKEND=auto tries npu at
// rank 40.
//
// # The context model
//
// aclrtSetDevice(id) takes a reference on the device's default context
// each time it is called, on any thread, whatever that thread had selected
// already (ApiImpl::SetDevice calls Runtime::PrimaryContextRetain, whose
// RefObject::IncRef runs per call: hicann/runtime
// src/runtime/api/impl/api_impl.cc, src/runtime/core/src/runtime.cc), and
// the context is freed only when aclrtResetDevice has been called as many
// times. Selecting the device before every call, as the core's
// CurrentDevice model does for HIP, would thus grow the count without
// bound and keep a user's aclrtResetDevice from ever releasing the device;
// it also updates the platform information on each call. torch_npu avoids
// both: it calls aclrtSetDevice only when the thread's cached device
// changes, records each device's context with aclrtGetCurrentContext
// (torch_npu/csrc/core/npu/NPUFunctions.cpp SetDevice) and binds that
// context on other threads with aclrtSetCurrentContext
// (NPUCachingAllocator.cpp). This vendor does the same through
// driver.DeviceContext: aclrtSetDevice once per device in the process,
// aclrtGetCurrentContext to read the context that made current, and
// aclrtSetCurrentContext(ctx), which only sets the thread's context and
// counts nothing (ApiImpl::ContextSetCurrent), before each call. The context is the device's default one, shared with every
// thread of the process that selects the device (torch_npu's included).
// flagshim holds its one reference for the life of the process;
// aclrtResetDeviceForce by other code destroys it, and the calls then fail
// with the runtime's error instead of crashing. A thread with no context
// answers aclrtGetCurrentContext with ACL_ERROR_RT_CONTEXT_NULL (107002),
// which the adapter answers as CUDA does: success and NULL. WithContext
// restores a thread's previous context where it had one; a thread that had
// none keeps the device's context afterwards (aclrtSetCurrentContext
// rejects NULL, so no context can be unbound).
//
// # What is bound
//
// Init (aclInit(NULL); a repeated init, ACL_ERROR_REPEAT_INITIALIZE, is
// success), the device count, the name (aclrtGetSocName: the process's SoC
// name, the same for every device), total memory and the AI Core count as
// the multiprocessor count (aclrtGetDeviceInfo), the UUID
// (aclrtDeviceGetUuid; a chip that cannot tell leaves it empty), the PCI
// bus id (aclrtDeviceGetPCIBusId, CANN 9.2+: optional), synchronize,
// memory info (aclrtGetMemInfo of HBM), device memory (aclrtMalloc,
// aclrtFree, aclrtMemcpy), pinned host memory, streams, events and
// asynchronous copies. aclrtGetDeviceInfo, aclrtDeviceGetUuid and
// aclsysGetVersionNum first shipped in CANN 8.5 as far as the headers read
// tell (8.1.RC1 lacks them; 8.2 and 8.3 were not checked): an older
// libascendcl lacks aclrtGetDeviceInfo, the one call that tells a
// device's memory without selecting it, and is reported not available,
// naming it (the presence tier still answers from DCMI). The version is
// aclsysGetVersionNum("runtime"): the CANN runtime package's version
// (8.5.0 is "8.5"), unknown where its version.info cannot be read (for
// example without ASCEND_HOME_PATH) or has the old "8.1.RC1" form. Ascend
// NPUs have no compute capability: Properties reports 0.0.
//
// # What is not, and why
//
// Error names come from flagshim's table of the codes in acl_base_rt.h and
// rt_error_codes.h (results.go): AscendCL has no function that names or
// describes a code. aclGetRecentErrMsg is not bound as the message: it
// returns and clears the calling thread's accumulated log (and fetches the
// device's messages), which is not the message of the code at hand, and it
// would consume what the program's own error handling reads.
//
// Modules and launches are not bound (device.ErrNotSupported): AscendCL
// loads Ascend C device objects (ELF for AI Core, Vector or Cube cores,
// aclrtBinaryLoadFromData since CANN 8.5), never PTX or cubin, so no CUDA
// image can load; its launch (aclrtLaunchKernel(func, blockDim, argsData,
// argsSize, stream)) is one-dimensional, counts AI Cores rather than
// blocks of threads, has no shared-memory size and takes the packed
// arguments in device memory on the launching device, so CUDA's grid,
// block and shared-memory arguments have no sound mapping onto it; and a
// module's globals (aclrtBinaryGetGlobal) exist only from CANN 9.1. Module
// hooks therefore never run for this backend. Stream capture (aclmdlRI*)
// is not bound either: flagshim has no graph operation.
//
// # The presence tier
//
// DCMI (the library of npu-smi): dcmi_init, the card list, each card's
// NPU count and their logic ids, each NPU's chip name, memory (HBM, else
// DDR), PCI address and the driver version, with ASCEND_RT_VISIBLE_DEVICES
// applied to the NPUs in logic-id order. DCMI has no shutdown function (none
// in dcmi_interface_api.h), so nothing is released, and no UUID getter, so
// presence devices carry no UUID. Where DCMI is missing or does not answer
// (some containers), the /dev/davinci<N> nodes give the count alone. Every
// count DCMI answers (cards, NPUs per card, their sum) is refused above
// 4096 before anything is allocated for it.
package npu
