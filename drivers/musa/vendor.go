package musa

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
)

// Type is the device type this package serves: device.MUSA, the model's
// constant for Moore Threads GPUs (torch_musa's device name).
// (Every vendor package exports its device type as Type.)
const Type = device.MUSA

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBMUSA_PATH"

// VisibleDevicesEnv is applied by the driver itself; the backend only
// reports it (Describe().Extra).
const VisibleDevicesEnv = "MUSA_VISIBLE_DEVICES"

// Vendor is the MUSA driver API (libmusa.so.1, mu*) as data for the driver
// core, with its presence tier (MTML, /dev/mtgpu.*). It mirrors CUDA's: the
// same functions with the mu prefix, the same result numbers with MUSA_,
// the same attribute and JIT option numbers; its version encodes
// major*10000 + minor*100. The description is shared and read-only.
func Vendor() *driver.Vendor { return vendor }

// PCIVendorMooreThreads is Moore Threads' PCI vendor id (pci.ids: "1ed5
// Moore Threads Technology Co.,Ltd").
const PCIVendorMooreThreads = 0x1ed5

// AutoRank is MUSA's place in FLAGOS_BACKEND=auto: first, the family
// flagos was written for (docs/architecture.md gives the whole order).
const AutoRank = 10

var vendor = func() *driver.Vendor {
	v := cuda.Family("mu", "MUSA_")
	v.Type, v.Name = Type, "Moore Threads"
	// Names: FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
	// src/flag_gems/runtime/backend/_mthreads/__init__.py), FlagCX's device
	// adaptor name (flagos-ai/FlagCX @0c721293 flagcx/adaptor/device/musa_adaptor.cc, the
	// first field of its struct flagcxDeviceAdaptor), FlagTree's backend
	// (FLAGTREE_BACKEND, flagos-ai/FlagTree @0bb47ea4 third_party/mthreads).
	v.Names = device.VendorNames{FlagOS: "mthreads", FlagGems: "mthreads", FlagCX: "MUSA", FlagTree: "mthreads"}
	v.Library = clib.Library{
		Name:    "libmusa",
		EnvVar:  EnvVar,
		Sonames: []string{"libmusa.so.1", "libmusa.so"},
		Dirs:    []string{"/usr/local/musa/lib", "/usr/local/musa/lib64", "/opt/musa/lib*"},
	}
	// No public musa.h confirms a muFuncGetParamInfo (nor its shape): not
	// bound, so a launch's argument count is not checked on MUSA.
	delete(v.Symbols, driver.OpFuncGetParamInfo)
	v.VersionBase = 10000 // 30100 is 3.1
	v.VisibleEnv = []string{VisibleDevicesEnv}
	v.Visibility = Visibility
	v.Presence = presenceSources
	v.DeviceNodes = deviceNodes
	v.Container = container
	v.Vars = []driver.Var{{Name: MTMLEnvVar, Kind: driver.VarLibraryPath,
		Doc: "the absolute path of MTML (libmtml.so), which FLAGOS_PROBE=presence reads, to open instead of searching"}}
	v.Auto = AutoRank
	v.PCIVendors = []uint16{PCIVendorMooreThreads}
	// Graphs. No public musa.h states MUSA's graph exports; public code
	// that builds against it (FlagFFT's MUSA adaptor, a MUSA port of XLA,
	// torch_musa) calls muStreamBeginCapture(stream, mode) with two
	// arguments, muStreamEndCapture, muGraphInstantiateWithFlags(exec, graph,
	// flags) with three, muGraphLaunch, muGraphExecDestroy and
	// muGraphDestroy, and the XLA port looks the capture up as
	// muStreamBeginCapture_v2, then muStreamBeginCapture. So: the mirror of
	// CUDA's names (cuda.Symbols("mu")) with that fallback for the capture.
	// UNCONFIRMED until read in musa.h or `nm -D libmusa.so` on a MUSA
	// machine: the exact export names, the capture-mode numbers (assumed
	// CUDA's, RELAXED = 2), the flags' width; bare muGraphInstantiate is
	// never bound (public code calls it with 3 arguments and with 5).
	v.Symbols[driver.OpStreamBeginCapture] = []string{"muStreamBeginCapture_v2", "muStreamBeginCapture"}
	// More memory and stream operations: the mirror of CUDA's names
	// (cuda.Symbols("mu"), each with its _v2 first where CUDA has one). No
	// public musa.h states them; public code that calls MUSA's driver API
	// does, with CUDA's arguments: OpenXLA's MUSA port (zml/xla,
	// xla/stream_executor/musa/: muMemsetD8Async, muMemsetD32Async,
	// muMemcpyDtoDAsync, muStreamQuery, muLaunchHostFunc), zpc's MUSA
	// backend (zenustech/zpc: muLaunchHostFunc(stream, fn, data),
	// muMemFreeAsync), MUSA ports of TransformerEngine
	// (muStreamWaitValue64, muStreamWriteValue64 on an MUdeviceptr), a MUSA
	// driver hook library (MUresult muDeviceGetByPCIBusId(MUdevice *, const
	// char *)) and MUSA driver-internals notes naming muMemsetD8/D16/D32
	// (_v2), muMemAllocManaged, muMemAllocAsync, muMemHostGetDevicePointer
	// (_v2), muIpcGetMemHandle, muIpcOpenMemHandle (_v2), muIpcCloseMemHandle
	// and muEventQuery. Moore Threads' own MUTLASS calls the three memsets
	// in CUDA's shape, muMemsetD{32,16,8}Async(MUdeviceptr, value, count,
	// MUstream) (include/mutlass/workspace.h, fill_workspace; read in the
	// mirror zhe-pang/mutlass @3239e5ad). UNCONFIRMED until read in musa.h or `nm -D
	// libmusa.so` on a MUSA machine. Not bound: no public code names a
	// muMemGetHandleForAddressRange nor MUdevice_attribute's dma-buf number,
	// so DMA-buf is not supported on MUSA.
	delete(v.Symbols, driver.OpMemGetHandleForRange)
	v.Attributes.DMABufSupported = 0
	return v
}()

// New returns a MUSA backend (driver.New(Vendor, opts...)). It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }
