package kunlunxin

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Type is the device type of Kunlunxin's backend. Kunlunxin's PyTorch
// builds claim "cuda" (vLLM-Kunlun's platform, FlagGems' Kunlunxin
// backend) and Intel's PyTorch claims "xpu": flagshim takes neither.
// "kunlunxin" is the vendor name FlagGems gives it.
const Type device.Type = "kunlunxin"

// The package's variables.
const (
	// EnvVar overrides the search for libxpurt.so with an absolute path.
	EnvVar = "FLAGOS_LIBXPURT_PATH"
	// VisibleDevicesEnv is XRE's visible-devices variable: comma-separated
	// ordinals (Paddle's paddle/phi/backends/xpu/xpu_info.cc
	// GetDeviceCountImpl counts its entries as the runtime's devices;
	// vLLM-Kunlun's docs and scripts set it per worker).
	VisibleDevicesEnv = "XPU_VISIBLE_DEVICES"
)

// PCIVendorKunlunxin is Kunlunxin's (Baidu's) PCI vendor id (pci.ids:
// "1d22  Baidu Technology"; the kernel driver's kl_main.c table,
// .vendor = 0x1d22).
const PCIVendorKunlunxin = 0x1d22

// AutoRank is Kunlunxin's place in FLAGOS_BACKEND=auto
// (docs/architecture.md gives the whole order).
const AutoRank = 70

// Vendor is Kunlunxin's XPU runtime, XRE (libxpurt.so, xpu_*), as data for
// the driver core, with its presence tier (XPUML, /dev/xpu*). The
// description is shared and read-only; see the package documentation for
// what is bound and what is not.
func Vendor() *driver.Vendor { return vendor }

var vendor = &driver.Vendor{
	Type: Type,
	Name: "Kunlunxin",
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_kunlunxin/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/kunlunxin_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 third_party/xpu).
	Names: device.VendorNames{FlagOS: "kunlunxin", FlagGems: "kunlunxin", FlagCX: "KUNLUN", FlagTree: "xpu"},
	Library: clib.Library{
		Name:   "libxpurt",
		EnvVar: EnvVar,
		// XRE's install_rt.sh installs so/libxpurt.so -> libxpurt.so.1 ->
		// libxpurt.so.<version>; Paddle's cmake/external/xpu.cmake links
		// "libxpurt.so".
		Sonames: []string{"libxpurt.so.1", "libxpurt.so"},
		// /usr/local/xpu/lib64: XRE's install_rt.sh (rt_install_link
		// ${XRE_INSTALL_PREFIX:-/usr/local}/xpu, libraries in lib64);
		// /usr/local/xpu/so: the unpacked package's layout FlagCX's
		// makefiles/kunlunxin.mk uses (DEVICE_HOME/so); /usr/local/xre/so:
		// sglang-kunlun's dockerfile/install.sh (XRE 5).
		Dirs: []string{"/usr/local/xpu/lib64", "/usr/local/xpu/so", "/usr/local/xre/so"},
		// The control node every XRE process needs in a container
		// (vLLM-Kunlun's quick_start.md, the XRE user guide; libxpuml
		// opens it).
		Nodes: []string{"/dev/xpuctrl"},
	},
	Symbols:     Symbols,
	Adapters:    Adapters,
	Results:     Results,
	ErrorPrefix: "XPU_",
	Attributes:  Attributes,
	Context:     driver.CurrentDevice,
	// The OpDriverVersion adapter encodes XRE's (major, minor) as
	// major*10000 + minor*100.
	VersionBase: 10000,
	VisibleEnv:  []string{LinkVisibleDevicesEnv, VisibleDevicesEnv},
	Visibility:  Visibility,
	Presence:    presenceSources,
	Container:   container,
	DeviceNodes: deviceNodes,
	Vars: []driver.Var{{Name: XPUMLEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of XPUML (libxpuml.so.1), which FLAGOS_PROBE=presence reads, to open instead of searching"},
		{Name: deviceOrderEnv, Kind: driver.VarVisible,
			Doc: "OAM_ID orders Kunlunxin's XPUs by OAM id (Paddle's recipes); the presence tier cannot reproduce that order"}},
	Auto:       AutoRank,
	PCIVendors: []uint16{PCIVendorKunlunxin},
}

// Symbols is the XRE symbol table, from xpu/runtime.h of XRE 4.33.0 (the
// vendor's header as mobius/kunlun_k200 vendors it,
// kunlun-driver/include/xpu/runtime.h): each operation's function. Every
// XRE function returns int; handles (XPUStream, XPUEvent) are void *; the
// device is its int ordinal. Most shapes differ from CUDA's: Adapters
// calls them (the prototype beside each).
var Symbols = map[driver.Op][]string{
	// XRE has no init call (its first call initializes it): OpInit counts
	// the devices, which does. int xpu_device_count(int* dev_count)
	driver.OpInit:        {"xpu_device_count"},
	driver.OpDeviceCount: {"xpu_device_count"},
	// int xpu_get_driver_version(uint32_t* major, uint32_t* minor)
	driver.OpDriverVersion: {"xpu_get_driver_version"},
	// No device handles: the device is its ordinal. OpDeviceGet's adapter
	// calls nothing; it names a function every XRE has.
	driver.OpDeviceGet: {"xpu_device_count"},
	// int xpu_device_get_attr(uint64_t* v, XPUDeviceAttr attr, int devid):
	// the attributes, and the name (from XPUATTR_MODEL) and the PCI bus id
	// (XPUATTR_PCI_ADDRESS), XRE having no functions for those.
	driver.OpDeviceAttribute: {"xpu_device_get_attr"},
	driver.OpDeviceName:      {"xpu_device_get_attr"},
	driver.OpDevicePCIBusID:  {"xpu_device_get_attr"},

	// int xpu_set_device(int devid); int xpu_current_device(int* devid)
	driver.OpSetDevice: {"xpu_set_device"},
	driver.OpGetDevice: {"xpu_current_device"},
	// int xpu_wait(XPUStream stream): NULL waits for the default stream
	// only (there is no device-wide synchronize; see the package doc).
	driver.OpSynchronize: {"xpu_wait"},

	// int xpu_malloc(void** pdevptr, uint64_t sz, XPUMemoryKind kind); int xpu_free(void* devptr)
	driver.OpMemAlloc: {"xpu_malloc"},
	driver.OpMemFree:  {"xpu_free"},
	// int xpu_memcpy(void* dst, const void* src, uint64_t sz, XPUMemcpyKind kind)
	driver.OpMemcpyHtoD: {"xpu_memcpy"},
	driver.OpMemcpyDtoH: {"xpu_memcpy"},
	// int xpu_host_alloc(void** ptr, uint64_t sz, unsigned int flags) ("flags: must be 0");
	// int xpu_host_free(void* ptr): cuMemHostAlloc's shape
	driver.OpMemHostAlloc: {"xpu_host_alloc"},
	driver.OpMemFreeHost:  {"xpu_host_free"},

	// int xpu_stream_create(XPUStream* pstream); int xpu_stream_destroy(XPUStream stream);
	// int xpu_wait(XPUStream stream); int xpu_stream_wait_event(XPUStream stream, XPUEvent event)
	driver.OpStreamCreate:      {"xpu_stream_create"},
	driver.OpStreamSynchronize: {"xpu_wait"},
	driver.OpStreamDestroy:     {"xpu_stream_destroy"},
	driver.OpStreamWaitEvent:   {"xpu_stream_wait_event"},
	// int xpu_event_create(XPUEvent *pevent); int xpu_event_record(XPUEvent event, XPUStream stream);
	// int xpu_event_wait(XPUEvent event); int xpu_event_destroy(XPUEvent event).
	// No elapsed time exists in XRE 4.
	driver.OpEventCreate:      {"xpu_event_create"},
	driver.OpEventRecord:      {"xpu_event_record"},
	driver.OpEventSynchronize: {"xpu_event_wait"},
	driver.OpEventDestroy:     {"xpu_event_destroy"},
}

// Attributes are the numbers the OpDeviceAttribute adapter takes: XRE's
// XPUDeviceAttr where one means the same, else the adapter's own.
var Attributes = driver.Attributes{
	// XPUATTR_NUM_CLUSTER: FlagTree's XPU backend (third_party/xpu/backend/
	// driver.c) gives Triton multiprocessor_count = num_cluster.
	MultiprocessorCount: attrNumCluster,
	// The Kunlun generation of XPUATTR_MODEL's board number (see
	// generation): 1 KL1, 2 KL2, 3 KL3.
	ComputeCapabilityMajor: attrGeneration,
	// No counterpart: unknown (0).
	ComputeCapabilityMinor: attrNone,
}

// New returns a Kunlunxin backend (driver.New(Vendor, opts...)). It does no
// I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
