package kunlunxin

// The XPUML binding: Kunlunxin's management library, an NVML clone
// (xpuml*, XPUML_*). Every signature, struct and code below is from
// xpu/xpuml.h as Kunlunxin's Go binding vendors it (kunlunxin/go-xpuml
// @e2a72e07 pkg/xpuml/xpuml.h, 2022-07) and its newer copy
// (zxw3221/libxpu-container @1516269d src/xpuml.h, 2022-08):
//
//	xpumlReturn_t xpumlInit(void);
//	xpumlReturn_t xpumlShutdown(void);
//	const char*   xpumlErrorString(xpumlReturn_t result);
//	xpumlReturn_t xpumlDeviceGetCount(unsigned int *deviceCount);
//	xpumlReturn_t xpumlDeviceGetHandleByIndex(unsigned int index, xpumlDevice_t *device);
//
// and, optional:
//
//	xpumlReturn_t xpumlDeviceGetName(xpumlDevice_t, char *name, unsigned int length);   newer header only (commented out in
//	                                                                                  go-xpuml's); XPUML_DEVICE_NAME_BUFFER_SIZE 96
//	xpumlReturn_t xpumlDeviceGetAttributes(xpumlDevice_t, xpumlDeviceAttributes_t *);   archId, modelId: the name where GetName is missing
//	xpumlReturn_t xpumlDeviceGetMemoryInfo(xpumlDevice_t, xpumlMemory_t *);
//	xpumlReturn_t xpumlDeviceGetPciInfo(xpumlDevice_t, xpumlPciInfo_t *);
//	xpumlReturn_t xpumlSystemGetDriverVersion(char *version, unsigned int length);      XPUML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
//
// xpumlDevice_t is "typedef struct xpumlDevice_st* xpumlDevice_t", an
// opaque pointer; xpumlReturn_t a C enum. The three structs are 128 bytes
// each ("sizeof() = 8B * 16", identical in both headers):
//
//	xpumlMemory_t            {ull pageSizeGlobalMemory, totalGlobalMemory, freeGlobalMemory, usedGlobalMemory, (L3: 4), reserved[8]}  bytes
//	xpumlPciInfo_t           {unsigned domain, bus, device, function, pciDeviceId, pciSubSystemId; char busId[32]; ull reserved[9]}
//	                         busId at 24, "%08X:%02X:%02X.%01X" (XPUML_DEVICE_PCI_BUS_ID_FMT)
//	xpumlDeviceAttributes_t  {int archId, boardId, modelId; unsigned clusterCount, ... (7); ull globalMemorySizeMB, l3MemorySizeMB, sn[2], reserved[7]}
//	                         archId: XPUML_DEVICE_ARCH_KL1 1, KL2 2, KL3 3; modelId: defs.h's DeviceModel
//
// There is no UUID call (xpumlDeviceGetUUID is commented out in both
// headers). The header warns that "the XPUML index may not correlate with
// other APIs": the tier takes XPUML's order for the runtime's (not
// confirmed on hardware).

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// XPUMLEnvVar overrides the search for libxpuml.so.1 with an absolute
// path.
const XPUMLEnvVar = "FLAGOS_LIBXPUML_PATH"

// SourceXPUML is the presence Report.Source of XPUML's answer.
const SourceXPUML = "xpuml"

// XPUMLLibrary is where XPUML is looked for: libxpuml.so.1 is its soname
// (the ELF of the libxpuml.so shipped in leoatgithub/xpu-device-plugin);
// libxpu-container opens /usr/local/xpu/lib64/libxpuml.so.1, go-xpuml the
// bare libxpuml.so; the folders are XRE's (see Vendor).
var XPUMLLibrary = clib.Library{
	Name:    "libxpuml",
	EnvVar:  XPUMLEnvVar,
	Sonames: []string{"libxpuml.so.1", "libxpuml.so"},
	Dirs:    []string{"/usr/local/xpu/lib64", "/usr/local/xpu/so", "/usr/local/xre/so"},
}

type xpumlSyms struct {
	init, shutdown, errorString, count, handle clib.Func
	name, attributes, memory, pci, driver      clib.Func
}

func (s *xpumlSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"xpumlInit"}, Required: true},
		{Fn: &s.shutdown, Names: []string{"xpumlShutdown"}, Required: true},
		{Fn: &s.errorString, Names: []string{"xpumlErrorString"}, Required: true, Sig: "i"},
		{Fn: &s.count, Names: []string{"xpumlDeviceGetCount"}, Required: true, Sig: "p"},
		{Fn: &s.handle, Names: []string{"xpumlDeviceGetHandleByIndex"}, Required: true, Sig: "up"},
		{Fn: &s.name, Names: []string{"xpumlDeviceGetName"}, Sig: "hpu"},
		{Fn: &s.attributes, Names: []string{"xpumlDeviceGetAttributes"}, Sig: "hp"},
		{Fn: &s.memory, Names: []string{"xpumlDeviceGetMemoryInfo"}, Sig: "hp"},
		{Fn: &s.pci, Names: []string{"xpumlDeviceGetPciInfo"}, Sig: "hp"},
		{Fn: &s.driver, Names: []string{"xpumlSystemGetDriverVersion"}, Sig: "pu"},
	}
}

// xpumlMemory is xpumlMemory_t: 16 unsigned long long.
type xpumlMemory struct {
	pageSize, total, free, used uint64
	l3                          [4]uint64
	reserved                    [8]uint64
}

// xpumlPciInfo is xpumlPciInfo_t.
type xpumlPciInfo struct {
	domain, bus, device, function, pciDeviceID, pciSubSystem uint32
	busID                                                    [32]byte
	reserved                                                 [9]uint64
}

// xpumlAttributes is xpumlDeviceAttributes_t.
type xpumlAttributes struct {
	archID, boardID, modelID int32
	counts                   [7]uint32 // clusterCount, sdnnCount, dmaEngineCount, decoderCount, encoderCount, imgProcCount, maxVFCount
	globalMB, l3MB           uint64
	sn                       [2]uint64
	reserved                 [7]uint64
}

var (
	_ [128 - unsafe.Sizeof(xpumlMemory{})]byte
	_ [unsafe.Sizeof(xpumlMemory{}) - 128]byte
	_ [128 - unsafe.Sizeof(xpumlPciInfo{})]byte
	_ [unsafe.Sizeof(xpumlPciInfo{}) - 128]byte
	_ [128 - unsafe.Sizeof(xpumlAttributes{})]byte
	_ [unsafe.Sizeof(xpumlAttributes{}) - 128]byte
)

// XPUML asks Kunlunxin's management library which XPUs are here, then
// applies XPU_VISIBLE_DEVICES (Visibility). It opens libxpuml.so.1
// (FLAGOS_LIBXPUML_PATH overrides the search), calls xpumlInit, reads every
// device and calls xpumlShutdown before returning (under
// presence.WithoutShutdown, the process's exit or the library's next query
// does); it never loads XRE. A count above device.MaxDevices is refused
// before anything is allocated for it. Safe for concurrent use; keeps no
// state.
func XPUML(e *presence.Env) presence.Report {
	var s xpumlSyms
	c := &clib.Codes{Library: "XPUML", Names: xpumlReturnNames, Message: presence.ErrorString(&s.errorString)}
	return presence.Query(e, presence.Management{
		Source: SourceXPUML, Library: XPUMLLibrary, Symbols: s.table(), Codes: c,
		Ships:      "XRE",
		Init:       func() error { return c.Check("xpumlInit", s.init.CallCode()) },
		InitReason: xpumlInitReason,
		Shutdown:   func() error { return c.Check("xpumlShutdown", s.shutdown.CallCode()) },
		Version: func(r *presence.Report, note func(error) bool) {
			var buf [96]byte
			if s.driver.OK() && note(c.Check("xpumlSystemGetDriverVersion", s.driver.CallCode(uintptr(unsafe.Pointer(&buf[0])), 80))) {
				r.DriverVersion = clib.CString(buf[:])
			}
		},
		Count: func() (uint64, string, error) {
			var n uint32
			err := c.Check("xpumlDeviceGetCount", s.count.CallCode(uintptr(unsafe.Pointer(&n))))
			return uint64(n), "xpumlDeviceGetCount", err
		},
		Device:  func(i int, d *presence.Device, note func(error) bool) error { return s.device(c, i, d, note) },
		Rules:   Visibility,
		Runtime: "XRE",
	})
}

// device reads device i through its handle: its name (from the model where
// XPUML cannot name it), its generation, memory and PCI bus id.
func (s *xpumlSyms) device(c *clib.Codes, i int, d *presence.Device, note func(error) bool) error {
	var h uintptr
	if err := c.Check(fmt.Sprintf("xpumlDeviceGetHandleByIndex(%d)", i), s.handle.CallCode(uintptr(i), uintptr(unsafe.Pointer(&h)))); err != nil {
		return err
	}
	var buf [96]byte
	if s.name.OK() && note(c.Check("xpumlDeviceGetName", s.name.CallCode(h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.Name = clib.CString(buf[:])
	}
	var a xpumlAttributes
	if s.attributes.OK() && note(c.Check("xpumlDeviceGetAttributes", s.attributes.CallCode(h, uintptr(unsafe.Pointer(&a))))) {
		if d.Name == "" && a.modelID >= 0 {
			d.Name = ModelName(uint64(a.modelID))
		}
		if a.archID >= 1 && a.archID <= 3 { // XPUML_DEVICE_ARCH_KL1..KL3: the exact tier's generation
			d.Major = int(a.archID)
		}
	}
	var m xpumlMemory
	if s.memory.OK() && note(c.Check("xpumlDeviceGetMemoryInfo", s.memory.CallCode(h, uintptr(unsafe.Pointer(&m))))) {
		d.TotalMemory, d.FreeMemory = m.total, m.free
	}
	var p xpumlPciInfo
	if s.pci.OK() && note(c.Check("xpumlDeviceGetPciInfo", s.pci.CallCode(h, uintptr(unsafe.Pointer(&p))))) {
		d.PCIBusID = clib.CString(p.busID[:])
	}
	return nil
}

// xpumlInitReason is the sentence for a failed xpumlInit: what it means for
// the user and what to do.
func xpumlInitReason(e *clib.Error) string {
	switch e.Code {
	case xpumlDriverNotLoaded:
		return fmt.Sprintf("XPUML: the Kunlunxin kernel driver (kunlun) is not loaded (%s): no Kunlunxin XPU is usable here", e.Name)
	case xpumlNoPermission:
		return fmt.Sprintf("XPUML: no permission to the Kunlunxin device nodes (%s): give this user access to /dev/xpu* and /dev/xpuctrl, or start the container with them", e.Name)
	case xpumlRMMismatch:
		return fmt.Sprintf("XPUML: libxpuml and the loaded kunlun kernel module are different versions (%s): reboot, or reload the kunlun module", e.Name)
	}
	return e.Error()
}
