package cuda

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// What the FlagOS projects call each maker (device records carry it):
// FlagGems's vendor_name (flagos-ai/FlagGems @ed2508bc
// src/flag_gems/runtime/backend/_<name>/__init__.py, its VendorInfoBase),
// FlagCX's device adaptor name (flagos-ai/FlagCX @0c721293
// flagcx/adaptor/device/<x>_adaptor.cc, the first field of its struct
// flagcxDeviceAdaptor: cuda "CUDA", ixcuda "IXCUDA", ppu_cuda "PPU_CUDA",
// maca "MACA", kunlunxin "KUNLUN"), FlagTree's backend (FLAGTREE_BACKEND,
// flagos-ai/FlagTree @0bb47ea4 third_party/nvidia, iluvatar, metax, xpu;
// FlagTree has no T-Head backend).
var (
	namesNVIDIA    = device.VendorNames{FlagOS: "nvidia", FlagGems: "nvidia", FlagCX: "CUDA", FlagTree: "nvidia"}
	namesIluvatar  = device.VendorNames{FlagOS: "iluvatar", FlagGems: "iluvatar", FlagCX: "IXCUDA", FlagTree: "iluvatar"}
	namesTHead     = device.VendorNames{FlagOS: "thead", FlagGems: "thead", FlagCX: "PPU_CUDA"}
	namesMetaX     = device.VendorNames{FlagOS: "metax", FlagGems: "metax", FlagCX: "MACA", FlagTree: "metax"}
	namesKunlunxin = device.VendorNames{FlagOS: "kunlunxin", FlagGems: "kunlunxin", FlagCX: "KUNLUN", FlagTree: "xpu"}
)

// runtimes are the makers whose runtimes answer CUDA's driver API behind a
// libcuda.so.1, with the facts that recognize each (driver.Runtime). CUDA's
// API is shared (driver.Vendor.Shared): a libcuda.so.1 says nothing of the
// silicon, so the backend names a maker from these facts only, and says
// "unknown" when none holds. Only facts with a public source are here;
// what could not be confirmed is left out (see each comment).
var runtimes = []driver.Runtime{
	{
		Name:  "NVIDIA",
		Names: namesNVIDIA,
		// pci.ids (pciutils/pciids @ c1c12547, line 10234): "10de  NVIDIA Corporation".
		PCIVendors: []uint16{PCIVendorNVIDIA},
		// NVIDIA's device names start "NVIDIA " ("NVIDIA H200"); FlagGems
		// tells NVIDIA by 'NVIDIA' in the device name
		// (flagos-ai/FlagGems src/flag_gems/runtime/backend/device_finder.py).
		DeviceNames: []string{"NVIDIA "},
	},
	{
		Name:  "Iluvatar CoreX",
		Names: namesIluvatar,
		// pci.ids line 28906: "1e3e  Shanghai Iluvatar CoreX Semiconductor Co., Ltd.".
		PCIVendors: []uint16{0x1e3e},
		// /usr/local/corex/lib64/libcuda.so.1: Deep-Spark/ix-device-plugin
		// Makefile (copies libcuda.so.1 from $(COREX_PATH)/lib64), FlagCX
		// makefiles/iluvatar_corex.mk (DEVICE_HOME ?= /usr/local/corex).
		Paths: []string{"/corex/"},
		// "Iluvatar BI-V150S": Deep-Spark/ix-device-plugin README.md.
		DeviceNames: []string{"Iluvatar "},
	},
	{
		Name:  "T-Head PPU",
		Names: namesTHead,
		// PPU's device names hold "PPU" (alibaba/TorchEasyRec
		// tzrec/ops/__init__.py tests "PPU" in the device name); the
		// reported name is "PPU-ZW810E". Its PCI vendor id (Alibaba's
		// 0x1ded?) and its libcuda's path are not confirmed: not used.
		DeviceNames: []string{"PPU-"},
	},
	{
		Name:  "MetaX cu-bridge",
		Names: namesMetaX,
		// pci.ids line 42277: "9999  MetaX Integrated Circuits (Shanghai) Co., Ltd.".
		PCIVendors: []uint16{0x9999},
		// MACA's CUDA bridge lives in $MACA_PATH/tools/cu-bridge and
		// libsymbol_cu.so exports the plain names (flagos-ai/Torch-FL and
		// FlagCX's metax build files).
		Paths: []string{"/cu-bridge/"},
		Files: []string{"libsymbol_cu.so"},
	},
	{
		Name:  "Kunlunxin",
		Names: namesKunlunxin,
		// pci.ids line 27547: "1d22  Baidu Technology" (3684 Kunlun AI Accelerator).
		PCIVendors: []uint16{0x1d22},
		// libcuda.so.1 -> libxpucuda.so (baidu-baige/sglang-kunlun's
		// install script links libcuda.so and libcuda.so.1 to it).
		Files: []string{"libxpucuda.so"},
	},
}
