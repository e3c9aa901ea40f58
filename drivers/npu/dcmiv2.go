package npu

// DCMI's second API, for Ascend 950 boards. DRV's DCMI answers the calls of
// the first API on a 950 board with DCMI_ERR_CODE_NOT_SUPPORT (-8255):
// dcmi_init itself ("this product is not support ascend 950.",
// src/custom/dev_prod/user/dcmi/dcmi_init/src/dcmi_init_basic.c), and
// dcmi_get_card_list, dcmi_get_device_num_in_card, dcmi_get_device_logic_id,
// dcmi_get_device_chip_info, dcmi_get_device_hbm_info,
// dcmi_get_device_memory_info_v3, dcmi_get_device_pcie_info_v2 and
// dcmi_get_driver_version (dcmi_interface/src/dcmi_basic_info_intf.c,
// dcmi_running_info_intf.c: "if (dcmi_board_chip_type_is_ascend_950())
// ... return DCMI_ERR_CODE_NOT_SUPPORT"). The same header
// (src/custom/include/dcmi_interface_api.h, under DCMI_VERSION_2) declares
// the API such a board answers, by logic id, which other boards refuse
// ("dcmiv2_init仅支持A5场景", dcmiv2_init only supports the A5 scenario):
//
//	int dcmiv2_init(void);
//	int dcmiv2_get_device_list(int *device_list, int *device_cnt, int list_len);   logic ids, sorted (qsort)
//	int dcmiv2_get_device_chip_info(int dev_id, struct dcmi_chip_info_v2 *chip_info);
//	int dcmiv2_get_device_hbm_info(int dev_id, struct dcmi_hbm_info *hbm_info);
//	int dcmiv2_get_device_pcie_info(int dev_id, struct dcmi_pcie_info_all *pcie_info);
//	int dcmiv2_get_driver_version(char *driver_ver, unsigned int len);
//
// struct dcmi_chip_info_v2 is dcmi_chip_info with char npu_name[32] after
// aicore_cnt: 132 bytes. There is no dcmiv2 memory_info_v3: a 950's memory
// comes from its HBM only. The binding asks the second API only where
// dcmi_init answers -8255 and the library has dcmiv2_init.

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// dcmiErrNotSupport is DCMI_ERR_CODE_NOT_SUPPORT (DCMI_ERROR_CODE_BASE - 255).
const dcmiErrNotSupport = -8255

type dcmiV2Syms struct {
	init, list, chipInfo, hbm, pcie, driverVersion clib.Func
}

func (s *dcmiV2Syms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"dcmiv2_init"}, Sig: ""},
		{Fn: &s.list, Names: []string{"dcmiv2_get_device_list"}, Sig: "ppi"},
		{Fn: &s.chipInfo, Names: []string{"dcmiv2_get_device_chip_info"}, Sig: "ip"},
		{Fn: &s.hbm, Names: []string{"dcmiv2_get_device_hbm_info"}, Sig: "ip"},
		{Fn: &s.pcie, Names: []string{"dcmiv2_get_device_pcie_info"}, Sig: "ip"},
		{Fn: &s.driverVersion, Names: []string{"dcmiv2_get_driver_version"}, Sig: "pu"},
	}
}

// dcmiChipInfoV2 is struct dcmi_chip_info_v2 (dcmi_interface_api.h 81-87).
type dcmiChipInfoV2 struct {
	chipType  [32]byte
	chipName  [32]byte
	chipVer   [32]byte
	aicoreCnt uint32
	npuName   [32]byte
}

// notSupported reports whether err is DCMI's answer of a call this board
// does not take.
func notSupported(err error) bool {
	var ce *clib.Error
	return errors.As(err, &ce) && ce.Code == dcmiErrNotSupport
}

// start is dcmiv2_init where the library has it; ok false otherwise.
func (s *dcmiV2Syms) start(c *clib.Codes) (ok bool, err error) {
	if !s.init.OK() || !s.list.OK() {
		return false, nil
	}
	if err := c.Check("dcmiv2_init", s.init.CallCode()); err != nil {
		return false, err
	}
	return true, nil
}

func (s *dcmiV2Syms) version(c *clib.Codes, note func(error) bool) string {
	var buf [64]byte
	if s.driverVersion.OK() && note(c.Check("dcmiv2_get_driver_version", s.driverVersion.CallCode(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		return clib.CString(buf[:])
	}
	return ""
}

// devices are the logic ids dcmiv2_get_device_list gives, in order; a count
// above device.MaxDevices is returned with no list, for Query to refuse.
func (s *dcmiV2Syms) devices(c *clib.Codes) ([]int32, uint64, string, error) {
	const fn = "dcmiv2_get_device_list"
	var ids [device.MaxDevices]int32
	var n int32
	if err := c.Check(fn, s.list.CallCode(uintptr(unsafe.Pointer(&ids[0])), uintptr(unsafe.Pointer(&n)), uintptr(len(ids)))); err != nil {
		return nil, 0, fn, err
	}
	if count := uint64(uint32(n)); count > device.MaxDevices {
		return nil, count, fn, nil
	}
	out := slices.Clone(ids[:n])
	slices.Sort(out)
	return out, uint64(n), fn, nil
}

// device reads NPU id (a logic id) through the second API.
func (s *dcmiV2Syms) device(c *clib.Codes, id int32, out *presence.Device, note func(error) bool) error {
	out.SourceIndex = int(id)
	dev := uintptr(id)
	var ci dcmiChipInfoV2
	if s.chipInfo.OK() && note(c.Check("dcmiv2_get_device_chip_info", s.chipInfo.CallCode(dev, uintptr(unsafe.Pointer(&ci))))) {
		out.Name = chipName(clib.CString(ci.chipType[:]), clib.CString(ci.chipName[:]))
	}
	if s.hbm.OK() {
		var h dcmiHBMInfo
		if note(c.Check("dcmiv2_get_device_hbm_info", s.hbm.CallCode(dev, uintptr(unsafe.Pointer(&h))))) && h.memorySize > 0 {
			const mb = 1 << 20
			out.TotalMemory = h.memorySize * mb
			if h.memoryUsage <= h.memorySize {
				out.FreeMemory = (h.memorySize - h.memoryUsage) * mb
			}
		}
	}
	var p dcmiPCIeInfoAll
	if s.pcie.OK() && note(c.Check("dcmiv2_get_device_pcie_info", s.pcie.CallCode(dev, uintptr(unsafe.Pointer(&p))))) {
		out.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", uint32(p.domain), p.bdfBusID, p.bdfDeviceID, p.bdfFuncID)
	}
	return nil
}
