package npu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The sources cited in this package (the short names of its comments):
//
//	RT85   hicann/runtime tag v8.5.0 (c741ed4), include/external/acl/*.h: ACL API 1.16.0, CANN 8.5.0
//	RTSRC  hicann/runtime master 681ef76: src/acl, src/runtime, docs/zh/api_ref
//	C81    leideng/CANN-8.1.RC1 (551ed27), an installed CANN 8.1.RC1's include/acl/*.h
//	DRV    hicann/driver master ef377e9: src/custom/include/dcmi_interface_api.h and the DCMI sources
//	MC     Ascend/mind-cluster master 22bb3d9: the container runtime and the DCMI Go wrapper
//	TNPU   Ascend/pytorch (torch_npu) master 9e73e70
//	FCX    flagos-ai/FlagCX 0c72129: makefiles/ascend.mk

// Type is the device type: torch_npu's own name ("npu",
// torch.utils.rename_privateuse1_backend("npu") in TNPU
// torch_npu/_init/registry/backend.py).
const Type device.Type = "npu"

// The variables.
const (
	// EnvVar overrides the search for libascendcl.so with an absolute path.
	EnvVar = "FLAGOS_LIBASCENDCL_PATH"
	// DCMIEnvVar overrides the search for libdcmi.so (the presence tier).
	DCMIEnvVar = "FLAGOS_LIBDCMI_PATH"
	// VisibleDevicesEnv is applied by the runtime itself (libascendcl's
	// Runtime::GetVisibleDevices, RTSRC src/runtime/core/src/runtime.cc):
	// decimal logical ids, ascending and unique (Visibility).
	VisibleDevicesEnv = "ASCEND_RT_VISIBLE_DEVICES"
	// ContainerVisibleEnv is Huawei's container runtime's: which
	// /dev/davinci<N> nodes (physical ids, ranges, "Ascend910-N" names) a
	// container gets (MC component/ascend-docker-runtime/runtime/process/
	// process.go). Inside the container the runtime sees only those;
	// flagshim reports the variable and never applies it.
	ContainerVisibleEnv = "ASCEND_VISIBLE_DEVICES"
)

// Huawei's PCI vendor id and the OEM vendor ids the Ascend host driver also
// binds (DRV src/sdk_driver/comm/pcie/host/devdrv_pci.h: PCI_VENDOR_ID_HUAWEI
// 0x19e5, DEVDRV_PCI_SUBSYS_PRIVATE_VENDOR_HK/KL/CJ 0x20C6/0x203F/0x20E9;
// src/sdk_driver/comm/pcie/dc/host/devdrv_adapt.c g_devdrv_tbl matches them
// with the NPU device ids 0xd500 and 0xd802). pci.ids: "19e5  Huawei
// Technologies Co., Ltd."; the OEM ids are not in pci.ids. 0x19e5 alone
// does not mean an NPU: Kunpeng servers carry Huawei NICs, SSDs and
// management chips under it; the NPUs are its device ids 0xd100-0xd8ff
// listed in devdrv_pci.h (0xd801 Ascend 910, 0xd500/0xd501 310, 0xd802,
// 0xd803, 0xd804, 0xd805, 0xd105, 0xd806, 0xd807, 0xd808).
const (
	PCIVendorHuawei = 0x19e5
	PCIVendorOEMHK  = 0x20c6
	PCIVendorOEMKL  = 0x203f
	PCIVendorOEMCJ  = 0x20e9
)

// AutoRank is the NPU's place in FLAGOS_BACKEND=auto (docs/architecture.md
// gives the whole order).
const AutoRank = 40

// Vendor is AscendCL (libascendcl.so, acl*/aclrt*) as data for the driver
// core, with its presence tier (DCMI, /dev/davinci*). The description is
// shared and read-only. doc.go says what is bound and why.
func Vendor() *driver.Vendor { return vendor }

var vendor = &driver.Vendor{
	Type: Type,
	Name: "Huawei",
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_ascend/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/cann_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 README.md: third_party/ascend on its triton_v3.2.x branch).
	Names: device.VendorNames{FlagOS: "ascend", FlagGems: "ascend", FlagCX: "CANN", FlagTree: "ascend"},
	Library: clib.Library{
		Name:   "libascendcl",
		EnvVar: EnvVar,
		// libascendcl.so has no versioned name (TNPU
		// torch_npu/csrc/core/npu/register/FunctionLoader.cpp dlopens
		// "libascendcl.so"); CANN 8.5's open-source runtime also builds
		// libacl_rt.so with the same acl*/aclrt* exports (RTSRC
		// src/acl/aclrt/CMakeLists.txt, stub/CMakeLists.txt).
		Sonames: []string{"libascendcl.so", "libacl_rt.so"},
		Dirs: []string{
			"/usr/local/Ascend/ascend-toolkit/latest/lib64", // CANN <= 8.x (C81 set_env.sh ASCEND_TOOLKIT_HOME; FCX ascend.mk)
			"/usr/local/Ascend/cann/lib64",                  // CANN 8.5+ (RTSRC README.md: source /usr/local/Ascend/cann/set_env.sh)
			"/usr/local/Ascend/latest/lib64",                // RTSRC src/tsd/basic_component/package_manager/src/package_env_info.cpp
		},
		// The driver's own health check needs /dev/davinci_manager on
		// every form (DRV src/custom/dev_prod/user/dsmi_product_ext/
		// dsmi_product_ext.c, dsmi_get_driver_health); 310B containers get
		// it as davinci_manager_docker (MC process.go,
		// addAscend310BManagerDevice). Without either the runtime finds
		// no NPU, so a searched library is not loaded.
		Nodes: []string{"/dev/davinci_manager", "/dev/davinci_manager_docker"},
	},
	Symbols:     Symbols,
	Adapters:    Adapters,
	Results:     Results,
	ErrorPrefix: "ACL_",
	ErrorText:   driver.ErrorTextOut, // no error-text function is bound: names come from Results
	Attributes:  Attributes,
	Context:     driver.DeviceContext,
	// aclsysGetVersionNum's encoding (RTSRC src/acl/aclrt_impl/acl.cpp:
	// kWeightMajor 10000000, kWeightMinor 100000, kWeightPatch 1000):
	// 80500000 is 8.5.0.
	VersionBase: 10000000,
	// No Ascend tool writes a UUID with a prefix; the 16 bytes of
	// aclrtUuid are shown as 8-4-4-4-12 hex digits.
	UUIDPrefix:  "",
	VisibleEnv:  []string{VisibleDevicesEnv},
	Visibility:  Visibility,
	Presence:    presenceSources,
	Container:   container,
	DeviceNodes: presence.NodeSpec{What: nodesWhat, Dir: nodeDir, Prefixes: []string{nodePrefix}},
	Vars: []driver.Var{
		{Name: DCMIEnvVar, Kind: driver.VarLibraryPath,
			Doc: "the absolute path of DCMI (libdcmi.so), which FLAGOS_PROBE=presence reads, to open instead of searching"},
		{Name: ContainerVisibleEnv, Kind: driver.VarVisible,
			Doc: "Huawei's container runtime mounts only these /dev/davinci nodes into a container; reported, never applied"},
	},
	Auto:       AutoRank,
	PCIVendors: []uint16{PCIVendorHuawei, PCIVendorOEMHK, PCIVendorOEMKL, PCIVendorOEMCJ},
}

// aclrtDevAttr numbers (RT85 acl_rt.h:499-522 typedef enum aclrtDevAttr).
const (
	aclDevAttrAICoreCoreNum      = 101 // ACL_DEV_ATTR_AICORE_CORE_NUM: number of AI Cores
	aclDevAttrTotalGlobalMemSize = 301 // ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: bytes
	noComputeCapability          = -1  // Ascend has none (driver.Attributes: negative is "none")
)

// Attributes: the AI Core count is the closest to CUDA's multiprocessor
// count (each AI Core runs one block of a launch: aclrtLaunchKernel's
// blockDim counts cores, RT85 acl_rt.h:2728); Ascend NPUs have no compute
// capability (the SoC name, aclrtGetSocName, names the architecture), so
// Properties reports 0.0.
var Attributes = driver.Attributes{
	MultiprocessorCount:    aclDevAttrAICoreCoreNum,
	ComputeCapabilityMajor: noComputeCapability,
	ComputeCapabilityMinor: noComputeCapability,
}

// Symbols is the AscendCL symbol table. Every prototype is RT85's
// acl_rt.h (line numbers below) unless noted; the ones marked 8.5 are
// absent from C81 (CANN 8.1.RC1). Operations whose C shape differs from
// CUDA's go through Adapters (adapters.go). OpDeviceGet has no function
// (AscendCL's devices are their ordinals; its adapter answers). Not bound:
// error names and strings (AscendCL has no code-to-text function), modules
// and launches (doc.go says why).
var Symbols = map[driver.Op][]string{
	driver.OpInit:            {"aclInit"},             // 794  aclError aclInit(const char *configPath)
	driver.OpDriverVersion:   {"aclsysGetVersionNum"}, // 865  aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)  8.5
	driver.OpDeviceCount:     {"aclrtGetDeviceCount"}, // 1325 aclError aclrtGetDeviceCount(uint32_t *count)
	driver.OpDeviceName:      {"aclrtGetSocName"},     // acl_base_rt.h:363 const char *aclrtGetSocName()
	driver.OpDeviceTotalMem:  {"aclrtGetDeviceInfo"},  // 3272 aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)  8.5
	driver.OpDeviceAttribute: {"aclrtGetDeviceInfo"},  // 3272 (the same)
	driver.OpDeviceUUID:      {"aclrtDeviceGetUuid"},  // 3305 aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)  8.5
	// RTHEAD (master 681ef76) acl_rt.h:4018: aclError
	// aclrtDeviceGetPCIBusId(int32_t deviceId, char *pciBusId, int32_t len),
	// "domain:bus:device.function"; in 9.2.0-beta.2 and later, not in
	// v9.1.0 or v8.5.0: optional.
	driver.OpDevicePCIBusID: {"aclrtDeviceGetPCIBusId"},

	driver.OpSetDevice:     {"aclrtSetDevice"},         // 1182 aclError aclrtSetDevice(int32_t deviceId)
	driver.OpCtxGetCurrent: {"aclrtGetCurrentContext"}, // 1110 aclError aclrtGetCurrentContext(aclrtContext *context)
	driver.OpCtxSetCurrent: {"aclrtSetCurrentContext"}, // 1092 aclError aclrtSetCurrentContext(aclrtContext context)
	driver.OpSynchronize:   {"aclrtSynchronizeDevice"}, // 1283 aclError aclrtSynchronizeDevice(void)

	driver.OpMemGetInfo:   {"aclrtGetMemInfo"}, // 2454 aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
	driver.OpMemAlloc:     {"aclrtMalloc"},     // 1524 aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
	driver.OpMemFree:      {"aclrtFree"},       // 1756 aclError aclrtFree(void *devPtr)
	driver.OpMemcpyHtoD:   {"aclrtMemcpy"},     // 1839 aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
	driver.OpMemcpyDtoH:   {"aclrtMemcpy"},     // 1839 (the same)
	driver.OpMemHostAlloc: {"aclrtMallocHost"}, // 1776 aclError aclrtMallocHost(void **hostPtr, size_t size)
	driver.OpMemFreeHost:  {"aclrtFreeHost"},   // 1792 aclError aclrtFreeHost(void *hostPtr)

	driver.OpStreamCreate:      {"aclrtCreateStream"},      // 2150 aclError aclrtCreateStream(aclrtStream *stream)
	driver.OpStreamSynchronize: {"aclrtSynchronizeStream"}, // 2226 aclError aclrtSynchronizeStream(aclrtStream stream)
	driver.OpStreamDestroy:     {"aclrtDestroyStream"},     // 2198 aclError aclrtDestroyStream(aclrtStream stream)
	driver.OpStreamWaitEvent:   {"aclrtStreamWaitEvent"},   // 2290 aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
	driver.OpMemcpyHtoDAsync:   {"aclrtMemcpyAsync"},       // 1889 aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream)
	driver.OpMemcpyDtoHAsync:   {"aclrtMemcpyAsync"},       // 1889 (the same)
	driver.OpEventCreate:       {"aclrtCreateEvent"},       // 1336 aclError aclrtCreateEvent(aclrtEvent *event)
	driver.OpEventRecord:       {"aclrtRecordEvent"},       // 1392 aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
	driver.OpEventSynchronize:  {"aclrtSynchronizeEvent"},  // 1456 aclError aclrtSynchronizeEvent(aclrtEvent event)
	driver.OpEventElapsedTime:  {"aclrtEventElapsedTime"},  // 1484 aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
	driver.OpEventDestroy:      {"aclrtDestroyEvent"},      // 1380 aclError aclrtDestroyEvent(aclrtEvent event)
}

// New returns an NPU backend (driver.New(Vendor, opts...)). It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
