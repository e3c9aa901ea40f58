package npu

// The DCMI binding (libdcmi.so, the library npu-smi stands on). Prototypes,
// structs and codes are DRV's src/custom/include/dcmi_interface_api.h
// (installed as /usr/local/Ascend/driver/include/dcmi_interface_api.h);
// MC's component/ascend-common/devmanager/dcmi/dcmi_interface_api.h agrees:
//
//	int dcmi_init(void);                                                     2001
//	int dcmi_get_driver_version(char *driver_ver, unsigned int len);         2005
//	int dcmi_get_card_list(int *card_num, int *card_list, int list_len);     2007
//	int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len); 3613 (older name, same shape)
//	int dcmi_get_device_num_in_card(int card_id, int *device_num);           2009
//	int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id);  2155 (out first)
//	int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info);              2015
//	int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info);                 2090
//	int dcmi_get_device_memory_info_v3(int card_id, int device_id, struct dcmi_get_memory_info_stru *info);   2094
//	int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info);       2021
//
// A card holds one or more NPUs (device_id 0..n-1 in the card); each has a
// logic id, the id AscendCL and ASCEND_RT_VISIBLE_DEVICES use (MC's
// DcGetLogicIDList walks cards and devices the same way). DCMI has no
// shutdown function and no UUID getter (none in the header): dcmi_init is
// called on each ask, nothing is released, and the devices carry no UUID.
// Memory: dcmi_get_device_hbm_info on chips with HBM (910, 910B; its sizes
// are MB: DRV src/custom/dev_prod/user/dcmi/dcmi_inner/src/
// dcmi_inner_info_get.c divides the driver's KB by KB_TO_MB_TRANS_VALUE
// 1024), else dcmi_get_device_memory_info_v3 ("unit:MB").

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// SourceDCMI is the presence Report.Source of DCMI's answer.
const SourceDCMI = "dcmi"

// DCMILibrary is where DCMI is looked for: DRV
// scripts/package/custom/driver/ascend910B/driver_atlas.xml installs
// libdcmi.so in /usr/local/Ascend/driver/lib64/driver and /usr/local/dcmi;
// MC loads "libdcmi.so" (devmanager/dcmi/constants_v2.go).
var DCMILibrary = clib.Library{
	Name:    "libdcmi",
	EnvVar:  DCMIEnvVar,
	Sonames: []string{"libdcmi.so"},
	Dirs:    []string{"/usr/local/Ascend/driver/lib64/driver", "/usr/local/dcmi", "/usr/local/Ascend/driver/lib64"},
}

type dcmiSyms struct {
	init, cardList, devNum, logicID            clib.Func
	chipInfo, hbm, memory, pcie, driverVersion clib.Func
	v2                                         dcmiV2Syms // Ascend 950 boards (dcmiv2.go)
}

func (s *dcmiSyms) table() []clib.Sym {
	return append([]clib.Sym{
		{Fn: &s.init, Names: []string{"dcmi_init"}, Required: true, Sig: ""},
		{Fn: &s.cardList, Names: []string{"dcmi_get_card_list", "dcmi_get_card_num_list"}, Required: true, Sig: "ppi"},
		{Fn: &s.devNum, Names: []string{"dcmi_get_device_num_in_card"}, Required: true, Sig: "ip"},
		{Fn: &s.logicID, Names: []string{"dcmi_get_device_logic_id"}, Required: true, Sig: "pii"},
		{Fn: &s.chipInfo, Names: []string{"dcmi_get_device_chip_info"}, Sig: "iip"},
		{Fn: &s.hbm, Names: []string{"dcmi_get_device_hbm_info"}, Sig: "iip"},
		{Fn: &s.memory, Names: []string{"dcmi_get_device_memory_info_v3"}, Sig: "iip"},
		{Fn: &s.pcie, Names: []string{"dcmi_get_device_pcie_info_v2"}, Sig: "iip"},
		{Fn: &s.driverVersion, Names: []string{"dcmi_get_driver_version"}, Sig: "pu"},
	}, s.v2.table()...)
}

// The structs, LP64 (offsets checked in dcmi_test.go against gcc's).
type (
	// struct dcmi_chip_info (header 74-79): MAX_CHIP_NAME_LEN is 32. 100 bytes.
	dcmiChipInfo struct {
		chipType  [32]byte
		chipName  [32]byte
		chipVer   [32]byte
		aicoreCnt uint32
	}
	// struct dcmi_hbm_info (185-191). 32 bytes.
	dcmiHBMInfo struct {
		memorySize        uint64 // MB
		freq              uint32
		_                 uint32
		memoryUsage       uint64 // MB
		temp              int32
		bandwidthUtilRate uint32
	}
	// struct dcmi_get_memory_info_stru (199-208); the header's "96" comment
	// is stale: 112 bytes on LP64.
	dcmiMemoryInfo struct {
		memorySize      uint64 // MB
		memoryAvailable uint64 // MB
		freq            uint32
		_               uint32
		hugepageSize    uint64 // unsigned long, KB
		hugepagesTotal  uint64
		hugepagesFree   uint64
		utiliza         uint32
		reserve         [60]byte
	}
	// struct dcmi_pcie_info_all (98-108). 64 bytes.
	dcmiPCIeInfoAll struct {
		venderID, subvenderID, deviceID, subdeviceID uint32
		domain                                       int32
		bdfBusID, bdfDeviceID, bdfFuncID             uint32
		reserve                                      [32]byte
	}
)

// dcmiDev is one NPU of a card.
type dcmiDev struct{ card, dev int32 }

// DCMI asks Huawei's DCMI which Ascend NPUs are here, then applies
// ASCEND_RT_VISIBLE_DEVICES the way the runtime does
// (Visibility). It opens libdcmi.so (FLAGOS_LIBDCMI_PATH
// overrides the search) and calls dcmi_init; it never loads AscendCL. Every
// count is refused above device.MaxDevices before anything is allocated or
// asked for it. Safe for concurrent use; keeps no state.
func DCMI(e *presence.Env) presence.Report {
	var s dcmiSyms
	var devs []dcmiDev // every (card, device) pair, once counted
	var ids []int32    // every logic id, once counted, on a board of the second API
	var v2 bool        // an Ascend 950 board: the second API answers (dcmiv2.go)
	var visNote string // what ASCEND_RT_VISIBLE_DEVICES did, where a user may not expect it
	c := &clib.Codes{Library: "DCMI", Names: dcmiNames}
	r := presence.Query(e, presence.Management{
		Source: SourceDCMI, Library: DCMILibrary, Symbols: s.table(), Codes: c,
		Ships: "the Ascend driver",
		Init: func() error {
			err := c.Check("dcmi_init", s.init.CallCode())
			if notSupported(err) {
				if ok, err2 := s.v2.start(c); ok {
					v2 = true
					return nil
				} else if err2 != nil {
					return err2
				}
			}
			return err
		},
		InitReason: dcmiInitReason,
		// No shutdown: DCMI has none.
		Version: func(r *presence.Report, note func(error) bool) {
			if v2 {
				r.DriverVersion = s.v2.version(c, note)
				return
			}
			var buf [64]byte
			if s.driverVersion.OK() && note(c.Check("dcmi_get_driver_version", s.driverVersion.CallCode(uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
				r.DriverVersion = clib.CString(buf[:])
			}
		},
		Count: func() (n uint64, fn string, err error) {
			if v2 {
				ids, n, fn, err = s.v2.devices(c)
				return n, fn, err
			}
			devs, n, fn, err = s.list(c)
			return n, fn, err
		},
		Device: func(i int, d *presence.Device, note func(error) bool) error {
			if v2 {
				return s.v2.device(c, ids[i], d, note)
			}
			return s.device(c, devs[i], d, note)
		},
		DeviceName: func(i int) string {
			if v2 {
				return fmt.Sprintf("device %d", ids[i])
			}
			return fmt.Sprintf("card %d device %d", devs[i].card, devs[i].dev)
		},
		Visible: func(all []presence.Device) ([]presence.Device, string, error) {
			// The runtime numbers its devices by logic id.
			sorted := slices.Clone(all)
			slices.SortStableFunc(sorted, func(a, b presence.Device) int { return cmp.Compare(a.SourceIndex, b.SourceIndex) })
			sorted = presence.Renumber(sorted)
			value, set := e.Lookup(VisibleDevicesEnv)
			if set {
				sorted, visNote = visibleAscendRT(sorted, value)
			}
			return sorted, presence.Visibility(VisibleDevicesEnv, value, set), nil
		},
	})
	// Every device in the runtime's order, logical id first.
	slices.SortStableFunc(r.All, func(a, b presence.Device) int { return cmp.Compare(a.SourceIndex, b.SourceIndex) })
	if visNote != "" && r.Err == nil {
		r.Notes = append(r.Notes, VisibleDevicesEnv+": "+visNote)
		r.Reason += "; " + visNote
	}
	return r
}

// list is every (card, device) pair DCMI knows and their count. The card
// count, each card's device count and their sum are bounded: a count above
// device.MaxDevices is returned with the function that reported it, and no
// list, for Query to refuse.
func (s *dcmiSyms) list(c *clib.Codes) ([]dcmiDev, uint64, string, error) {
	var cards [device.MaxDevices]int32
	var ncards int32
	fn := s.cardList.Name()
	if err := c.Check(fn, s.cardList.CallCode(uintptr(unsafe.Pointer(&ncards)), uintptr(unsafe.Pointer(&cards[0])), uintptr(len(cards)))); err != nil {
		return nil, 0, fn, err
	}
	// An int count: a negative one is read as the unsigned number it is
	// (-1 is 4294967295), so that it is refused as too many.
	if n := uint64(uint32(ncards)); n > device.MaxDevices {
		return nil, n, fn, nil
	}
	counts := make([]int32, ncards)
	total := uint64(0)
	for i, card := range cards[:ncards] {
		if err := c.Check(fmt.Sprintf("dcmi_get_device_num_in_card(%d)", card), s.devNum.CallCode(uintptr(card), uintptr(unsafe.Pointer(&counts[i])))); err != nil {
			return nil, 0, fn, err
		}
		total += uint64(uint32(counts[i]))
		if total > device.MaxDevices {
			return nil, total, "dcmi_get_device_num_in_card", nil
		}
	}
	out := make([]dcmiDev, 0, total)
	for i, card := range cards[:ncards] {
		for dev := range counts[i] {
			out = append(out, dcmiDev{card: card, dev: dev})
		}
	}
	return out, total, fn, nil
}

// device reads one NPU: its logic id (required), which the runtime numbers
// it by, and what DCMI tells of it (each optional; a failure is a note).
func (s *dcmiSyms) device(c *clib.Codes, d dcmiDev, out *presence.Device, note func(error) bool) error {
	var logic int32
	if err := c.Check(fmt.Sprintf("dcmi_get_device_logic_id(card %d, device %d)", d.card, d.dev),
		s.logicID.CallCode(uintptr(unsafe.Pointer(&logic)), uintptr(d.card), uintptr(d.dev))); err != nil {
		return err
	}
	out.SourceIndex = int(logic)
	card, dev := uintptr(d.card), uintptr(d.dev)
	var ci dcmiChipInfo
	if s.chipInfo.OK() && note(c.Check("dcmi_get_device_chip_info", s.chipInfo.CallCode(card, dev, uintptr(unsafe.Pointer(&ci))))) {
		out.Name = chipName(clib.CString(ci.chipType[:]), clib.CString(ci.chipName[:]))
	}
	out.TotalMemory, out.FreeMemory = s.memoryOf(c, d, note)
	var p dcmiPCIeInfoAll
	if s.pcie.OK() && note(c.Check("dcmi_get_device_pcie_info_v2", s.pcie.CallCode(card, dev, uintptr(unsafe.Pointer(&p))))) {
		out.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", uint32(p.domain), p.bdfBusID, p.bdfDeviceID, p.bdfFuncID)
	}
	return nil
}

// memoryOf is the NPU's memory in bytes: HBM where the chip has it, else
// its DDR; a note when neither answers.
func (s *dcmiSyms) memoryOf(c *clib.Codes, d dcmiDev, note func(error) bool) (total, free uint64) {
	card, dev := uintptr(d.card), uintptr(d.dev)
	var why []string
	if s.hbm.OK() {
		var h dcmiHBMInfo
		err := c.Check("dcmi_get_device_hbm_info", s.hbm.CallCode(card, dev, uintptr(unsafe.Pointer(&h))))
		if err == nil && h.memorySize > 0 {
			total, err = presence.MB(h.memorySize, "dcmi_get_device_hbm_info's memory_size")
			if err == nil {
				if h.memoryUsage <= h.memorySize {
					free, _ = presence.MB(h.memorySize-h.memoryUsage, "") // within the total, which fits
				}
				return total, free
			}
		}
		if err != nil {
			why = append(why, err.Error())
		}
	}
	if s.memory.OK() {
		var m dcmiMemoryInfo
		err := c.Check("dcmi_get_device_memory_info_v3", s.memory.CallCode(card, dev, uintptr(unsafe.Pointer(&m))))
		if err == nil && m.memorySize > 0 {
			total, err = presence.MB(m.memorySize, "dcmi_get_device_memory_info_v3's memory_size")
			if err == nil {
				if m.memoryAvailable <= m.memorySize {
					free, _ = presence.MB(m.memoryAvailable, "") // within the total, which fits
				}
				return total, free
			}
		}
		if err != nil {
			why = append(why, err.Error())
		}
	}
	if len(why) > 0 {
		note(fmt.Errorf("memory unknown: %s", strings.Join(why, "; ")))
	}
	return 0, 0
}

// chipName is the NPU's name from DCMI's chip type and name: "Ascend" and
// "910B3" are "Ascend910B3", the form of aclrtGetSocName; a name that has
// the type already ("Ascend910" on 910_93 and 950 boards, DRV
// dcmi_inner_info_get.c dcmi_copy_npu_chip_name_v2) is kept as it is.
func chipName(typ, name string) string {
	if name == "" || strings.HasPrefix(name, typ) {
		return name
	}
	return typ + name
}

func dcmiInitReason(e *clib.Error) string {
	switch e.Code {
	case dcmiErrOperNotPermitted:
		return fmt.Sprintf("DCMI: %s: no permission to the Ascend driver's nodes: give this user access to /dev/davinci_manager and /dev/davinci* or run in a container started with the NPUs", e.Detail())
	case dcmiErrNotSupportInDocker:
		return fmt.Sprintf("DCMI: %s: this DCMI does not answer inside a container; the device nodes answer instead", e.Detail())
	case dcmiErrDeviceNotExist:
		return fmt.Sprintf("DCMI: %s: the Ascend driver sees no NPU", e.Detail())
	case dcmiErrNotSupport:
		return fmt.Sprintf("DCMI: %s: this board takes neither DCMI's first API nor its dcmiv2_* API (Ascend 950 boards take only the second): update the Ascend driver, or use FLAGOS_PROBE=isolated", e.Detail())
	}
	return e.Error()
}
