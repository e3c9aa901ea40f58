package mlu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type: torch_mlu's own name for Cambricon MLUs
// (torch.utils.rename_privateuse1_backend("mlu"), Cambricon/torch_mlu
// torch_mlu/__init__.py).
const Type device.Type = "mlu"

// EnvVar names the variable that overrides the search for libcndrv.so with
// an absolute path.
const EnvVar = "FLAGOS_LIBCNDRV_PATH"

// VisibleDevicesEnv is the variable the Cambricon runtime applies to hide
// MLUs: comma-separated ordinals, an empty value hiding every MLU
// (Cambricon/torch_mlu torch_mlu/mlu/device.py, test/mlu/test_lazy_init.py).
// The backend only reports it; the presence tier applies it to what it
// counts. (CAMBRICON_VISIBLE_DEVICES is the k8s device plugin's, read by the
// container runtime, not by a process: not reported.)
const VisibleDevicesEnv = "MLU_VISIBLE_DEVICES"

// PCIVendorCambricon is Cambricon's PCI vendor id (pci.ids: "cabc
// Cambricon Technologies Corporation Limited"; the MLU kernel driver's
// cambricon_dm_VID in plat/pcie/*/cndrv_pci.h).
const PCIVendorCambricon = 0xcabc

// AutoRank is the MLU's place in FLAGOS_BACKEND=auto: after musa (10) and
// hip (20), before cuda (100) (docs/architecture.md gives the whole order).
const AutoRank = 30

// Vendor is Cambricon's CNDrv driver API (libcndrv.so, cn*) as data for
// the driver core, with its presence tier (CNDev, /dev/cambricon_dev*).
// CNDrv is CUDA-shaped with these differences, each handled here: a
// device handle (CNdev) of 64 bits, a version in three numbers, a
// ref-counted shared context per device in place of a primary context,
// pinned host memory without flags, module calls with the output argument
// last, and a kernel launch (cnInvokeKernel) of another model, which is
// not bound. The description is shared and read-only.
func Vendor() *driver.Vendor { return vendor }

var vendor = &driver.Vendor{
	Type: Type,
	Name: "Cambricon",
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_cambricon/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/mlu_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 README.md: third_party/cambricon).
	Names: device.VendorNames{FlagOS: "cambricon", FlagGems: "cambricon", FlagCX: "MLU", FlagTree: "cambricon"},
	Library: clib.Library{
		Name:   "libcndrv",
		EnvVar: EnvVar,
		// Every public user opens the bare name: no versioned soname is
		// known (torch_mlu cmake/modules/FindCNDRV.cmake links "cndrv";
		// FlagTree third_party/cambricon/backend/driver.py; InfiniTensor/cndrv
		// build.rs).
		Sonames: []string{"libcndrv.so"},
		// Neuware's default folder (FlagTree driver.py: default_dir
		// "/usr/local/neuware/", libraries in lib64). $NEUWARE_HOME is not a
		// fixed folder, so it is not searched: point LD_LIBRARY_PATH or
		// FLAGOS_LIBCNDRV_PATH there.
		Dirs: []string{"/usr/local/neuware/lib64"},
	},
	Symbols:     Symbols,
	Adapters:    Adapters,
	Results:     Results,
	ErrorPrefix: "CN_",
	ErrorText:   driver.ErrorTextOut, // cnGetErrorName(CNresult, const char **): cn_api.h
	Attributes:  Attributes,
	Context:     driver.PrimaryContext,
	// JIT is zero: CNDrv has no JIT options (no cnModuleLoadDataEx).
	VersionBase: versionBase, // 215005 is 2.15
	// torch_mlu and the k8s device plugin write MLU UUIDs as "MLU-" + the
	// UUID (Cambricon/cambricon-k8s-device-plugin pkg/cndev/bindings.go).
	UUIDPrefix:  "MLU-",
	VisibleEnv:  []string{CNVisibleDevicesEnv, VisibleDevicesEnv},
	Visibility:  Visibility,
	Presence:    presenceSources,
	Container:   container,
	DeviceNodes: deviceNodes,
	Vars: []driver.Var{{Name: CNDevEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of CNDev (libcndev.so), which FLAGOS_PROBE=presence reads, to open instead of searching"},
		{Name: cudaVisibleDevicesEnv, Kind: driver.VarVisible,
			Doc: "read by torch_mlu (r2.4) after CN_VISIBLE_DEVICES and MLU_VISIBLE_DEVICES, as the CNRT it follows; where it alone is set the presence tier cannot decide"}},
	Auto:       AutoRank,
	PCIVendors: []uint16{PCIVendorCambricon},
}

// versionBase decodes the number the OpDriverVersion adapter composes with
// cn_api.h's own formula, CN_VERSION = major*100000 + minor*1000 + patch
// (DecodeVersion: major = v/100000, minor = v%100000/1000).
const versionBase = 100000

// Attributes are CNdevice_attribute's numbers (cn_api.h, CNDrv 2.15.5; the
// same values in the MLU kernel driver's core/cndrv_ioctl.h). A CUDA
// "multiprocessor" is taken to be an MLU cluster (a group of MLU cores that
// shares a cluster's SRAM, as an SM's threads share its shared memory);
// torch_mlu's multi_processor_count is clusters x cores per cluster
// instead (torch_mlu/csrc/framework/core/device.cpp).
var Attributes = driver.Attributes{
	MultiprocessorCount:    0x205, // CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT: "The number of clusters on device"
	ComputeCapabilityMajor: 0x01,  // CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	ComputeCapabilityMinor: 0x02,  // CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
}

// Symbols is the CNDrv symbol table. Every prototype is cn_api.h's (CNDrv
// 2.15.5, CN_MAJOR_VERSION 2 / CN_MINOR_VERSION 15 / CN_PATCH_VERSION 5);
// those whose shape differs from CUDA's go through Adapters (adapters.go).
//
// Not bound, and why:
//   - OpLaunchKernel: cnInvokeKernel(CNkernel, dimx, dimy, dimz, KernelClass,
//     reserve, CNqueue, void **params, void **extra) takes one task grid and
//     the kernel's task type (BLOCK, UNION1..UNION16), with no block
//     dimensions and no dynamic shared memory. No public code maps CUDA's
//     grid and block onto it in general: each caller picks the KernelClass
//     for its own programs (FlagTree from Triton's num_warps, torch_mlu's
//     Inductor the same way, the SYCL plugin from the work-group size,
//     InfiniTensor/cndrv always BLOCK), and a wrong one runs the kernel on
//     the wrong cores. Launch reports device.ErrNotSupported.
//   - OpModuleLoadDataEx: CNDrv has no JIT options; cnModuleLoadFatBinary
//     serves LoadModule (images are Cambricon BANG fat binaries).
//   - OpFuncGetParamInfo: no CNDrv function tells a kernel's parameters.
var Symbols = map[driver.Op][]string{
	driver.OpInit:            {"cnInit"},             // CNresult cnInit(unsigned int flags)
	driver.OpDriverVersion:   {"cnDriverGetVersion"}, // CNresult cnDriverGetVersion(int *major, int *minor, int *patch): adapter
	driver.OpDeviceCount:     {"cnDeviceGetCount"},   // CNresult cnDeviceGetCount(int *pcount)
	driver.OpDeviceGet:       {"cnDeviceGet"},        // CNresult cnDeviceGet(CNdev *pdev, int ordinal): CNdev is cn_uint64_t
	driver.OpDeviceName:      {"cnDeviceGetName"},    // CNresult cnDeviceGetName(char *name, unsigned int len, CNdev dev)
	driver.OpDeviceTotalMem:  {"cnDeviceTotalMem"},   // CNresult cnDeviceTotalMem(cn_uint64_t *pbytes, CNdev dev)
	driver.OpDeviceAttribute: {"cnDeviceGetAttribute"},
	// CNresult cnDeviceGetAttribute(int *pi, CNdevice_attribute attrib, CNdev dev)
	// CNresult cnDeviceGetUuidStr(char *uuid_str, int len, CNdev dev), else
	// CNresult cnDeviceGetUuid(CNuuid *uuid, CNdev dev) (CNuuid is char
	// uuid[16]): adapter.
	driver.OpDeviceUUID:     {"cnDeviceGetUuidStr", "cnDeviceGetUuid"},
	driver.OpDevicePCIBusID: {"cnDeviceGetPCIBusId"}, // CNresult cnDeviceGetPCIBusId(char *pciBusId, int len, CNdev dev)
	driver.OpErrorName:      {"cnGetErrorName"},      // CNresult cnGetErrorName(CNresult error, const char **pStr): adapter
	driver.OpErrorString:    {"cnGetErrorString"},    // CNresult cnGetErrorString(CNresult error, const char **pStr)

	// No primary context: a per-device shared context, ref-counted
	// ("Increases shared context reference count and returns shared context
	// handle"), which torch_mlu (MLUStream.cpp) and FlagTree (driver.c:
	// "CNDRV doesn't support legacy default context, we need init CNcontext
	// for each thread") make current on each thread with cnCtxSetCurrent.
	driver.OpPrimaryCtxRetain: {"cnSharedContextAcquire"}, // CNresult cnSharedContextAcquire(CNcontext *pctx, CNdev dev)
	driver.OpCtxSetCurrent:    {"cnCtxSetCurrent"},        // CNresult cnCtxSetCurrent(CNcontext context)
	driver.OpCtxGetCurrent:    {"cnCtxGetCurrent"},        // CNresult cnCtxGetCurrent(CNcontext *pcontext)
	driver.OpSynchronize:      {"cnCtxSync"},              // CNresult cnCtxSync(void)

	driver.OpMemGetInfo:   {"cnMemGetInfo"}, // CNresult cnMemGetInfo(cn_uint64_t *pfreeBytes, cn_uint64_t *ptotalBytes)
	driver.OpMemAlloc:     {"cnMalloc"},     // CNresult cnMalloc(CNaddr *pmluAddr, cn_uint64_t bytes)
	driver.OpMemFree:      {"cnFree"},       // CNresult cnFree(CNaddr mluAddr)
	driver.OpMemcpyHtoD:   {"cnMemcpyHtoD"}, // CNresult cnMemcpyHtoD(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes)
	driver.OpMemcpyDtoH:   {"cnMemcpyDtoH"}, // CNresult cnMemcpyDtoH(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes)
	driver.OpMemHostAlloc: {"cnMallocHost"}, // CNresult cnMallocHost(void **paddr, cn_uint64_t bytes): no flags, adapter
	driver.OpMemFreeHost:  {"cnFreeHost"},   // CNresult cnFreeHost(void *addr)

	driver.OpModuleLoadData:    {"cnModuleLoadFatBinary"}, // CNresult cnModuleLoadFatBinary(const void *fatBin, CNmodule *phmod): adapter
	driver.OpModuleUnload:      {"cnModuleUnload"},        // CNresult cnModuleUnload(CNmodule hmod)
	driver.OpModuleGetFunction: {"cnModuleGetKernel"},     // CNresult cnModuleGetKernel(CNmodule hmod, const char *name, CNkernel *phkernel): adapter
	driver.OpModuleGetGlobal:   {"cnModuleGetSymbol"},
	// CNresult cnModuleGetSymbol(CNmodule hmod, const char *name, CNaddr *pdptr, cn_uint64_t *pbytes): adapter

	// Queues are streams, notifiers are events.
	driver.OpStreamCreate:      {"cnCreateQueue"},  // CNresult cnCreateQueue(CNqueue *phqueue, unsigned int flags): flags reserved, 0
	driver.OpStreamSynchronize: {"cnQueueSync"},    // CNresult cnQueueSync(CNqueue hqueue)
	driver.OpStreamDestroy:     {"cnDestroyQueue"}, // CNresult cnDestroyQueue(CNqueue hqueue)
	// CNresult cnQueueWaitNotifierWithFlags(CNqueue hqueue, CNnotifier hnotifier, unsigned int flags);
	// older libraries: CNresult cnQueueWaitNotifier(CNqueue hqueue, CNnotifier hnotifier) (adapter)
	driver.OpStreamWaitEvent: {"cnQueueWaitNotifierWithFlags", "cnQueueWaitNotifier"},
	// CNresult cnMemcpyHtoDAsync_V2(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes, CNqueue hqueue)
	// (cnMemcpyHtoDAsync: the same arguments; both "will be deprecated" for cnMemcpyAsync_V3)
	driver.OpMemcpyHtoDAsync: {"cnMemcpyHtoDAsync_V2", "cnMemcpyHtoDAsync"},
	// CNresult cnMemcpyDtoHAsync_V2(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes, CNqueue hqueue)
	driver.OpMemcpyDtoHAsync: {"cnMemcpyDtoHAsync_V2", "cnMemcpyDtoHAsync"},
	// CNresult cnCreateNotifier(CNnotifier *phnotifier, unsigned int flags): the core passes 0,
	// CN_NOTIFIER_DEFAULT ("will record timing data"), as CUDA's 0
	driver.OpEventCreate:      {"cnCreateNotifier"},
	driver.OpEventRecord:      {"cnPlaceNotifier"},       // CNresult cnPlaceNotifier(CNnotifier hnotifier, CNqueue hqueue)
	driver.OpEventSynchronize: {"cnWaitNotifier"},        // CNresult cnWaitNotifier(CNnotifier hnotifier)
	driver.OpEventElapsedTime: {"cnNotifierElapsedTime"}, // CNresult cnNotifierElapsedTime(float *pMilliseconds, CNnotifier hstart, CNnotifier hend)
	driver.OpEventDestroy:     {"cnDestroyNotifier"},     // CNresult cnDestroyNotifier(CNnotifier hnotifier)
}

// New returns a Cambricon MLU backend (driver.New(Vendor, opts...)). It
// does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
