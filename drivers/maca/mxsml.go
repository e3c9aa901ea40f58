package maca

// The MXSML binding: MetaX's management library, its handle-based
// "extension" API (NVML's shape). Every signature, struct and code below is
// from MxSmlExtension.h, "MXSML VERSION: 2.3.1", © MetaX, as MetaX's Go
// binding go-mxsml vendors it (mirror ghangz/go-mxsml @0c93ae2a,
// pkg/mxsmlextension/MxSmlExtension.h):
//
//	mxSmlExReturn_t mxSmlExInit(void);
//	mxSmlExReturn_t mxSmlExShutdown(void);
//	const char*     mxSmlExErrorString(mxSmlExReturn_t result);
//	mxSmlExReturn_t mxSmlExDeviceGetCount(unsigned int* deviceCount);                       "the number of compute devices"
//	mxSmlExReturn_t mxSmlExGetDeviceHandleByIndex(unsigned int deviceId, mxSmlExDevice_t* deviceHandle);
//	mxSmlExReturn_t mxSmlExDeviceGetName(mxSmlExDevice_t, char* name, unsigned int length);  MXSMLEX_NAME_V2_BUFFER_SIZE 96
//
// and, optional:
//
//	mxSmlExReturn_t mxSmlExDeviceGetUUID(mxSmlExDevice_t, char* uuid, unsigned int length);  MXSMLEX_DEVICE_UUID_BUFFER_SIZE 80
//	    ("Guaranteed maximum possible size for device UUID"; INVALID_ARGUMENT "if ... length is invalid": 80 is passed, not 96)
//	mxSmlExReturn_t mxSmlExMacaDeviceGetCount(unsigned int* deviceCount);  "the number of maca compute devices"
//	mxSmlExReturn_t mxSmlExDeviceGetMemoryInfo(mxSmlExDevice_t, mxSmlExMemory_t* memory);    bytes
//	mxSmlExReturn_t mxSmlExDeviceGetPciInfo(mxSmlExDevice_t, mxSmlExPciInfo_t* pci);
//	mxSmlExReturn_t mxSmlExDeviceGetComputeCapability(mxSmlExDevice_t, int* major, int* minor);
//	mxSmlExReturn_t mxSmlExSystemGetDriverVersion(char* version, unsigned int length);       MXSMLEX_DRIVER_VERSION_BUFFER_SIZE 80
//
// mxSmlExReturn_t is an enum of unsigned int (NVML's numbers). The handle
// is "typedef struct { struct MxSmlExDevice* handle; } mxSmlExDevice_t;",
// one pointer in a struct, passed by value: the SysV x86-64 ABI passes an
// 8-byte INTEGER-class struct in one general register and AAPCS64 a
// composite of at most 16 bytes in general registers, so it travels
// exactly as a pointer would (MetaX's pymxsml declares it a pointer).
// mxSmlExPciInfo_t is {char busIdLegacy[16]; unsigned domain, bus, device,
// pciDeviceId, pciSubSystemId; char busId[32]}: 68 bytes, busId at 36.
//
// mxSmlExMemory_t is three unsigned long long, and its order is disputed:
// the header says {free, total, used}, MetaX's own pymxsml (2024,
// pymxsml/mxsml_extension.py c_mxSmlExMemory_t) {total, free, used}. Both
// put used last, and free <= total always, so the larger of the first two
// is the total; the answer is kept only where free + used is within a
// tenth of the total, and left out (a note) otherwise.
//
// The device order is MXSML's index; the runtime's ordinals are taken to
// follow it (Ray's MetaX manager counts GPUs with mxSmlExDeviceGetCount,
// and vLLM-metax maps ordinals to CUDA_VISIBLE_DEVICES the same way): not
// confirmed by a MetaX statement.

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// MXSMLEnvVar overrides the search for libmxsml.so with an absolute path.
const MXSMLEnvVar = "FLAGOS_LIBMXSML_PATH"

// SourceMXSML is the presence Report.Source of MXSML's answer.
const SourceMXSML = "mxsml"

// MXSMLLibrary is where MXSML is looked for: the folders go-mxsml's
// pkg/lib/lib.go searches, in its order (so do nvtop's
// extract_gpuinfo_metax.c and pymxsml's _searchMxsmlLibrary).
var MXSMLLibrary = clib.Library{
	Name:    "libmxsml",
	EnvVar:  MXSMLEnvVar,
	Sonames: []string{"libmxsml.so"},
	Dirs:    []string{"/opt/mxdriver/lib", "/opt/maca/lib", "/opt/mxn100/lib"},
}

type mxsmlSyms struct {
	init, shutdown, errorString, count, handle, name clib.Func
	uuid, memory, pci, computeCapability             clib.Func
	driverVersion, macaCount                         clib.Func
}

func (s *mxsmlSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"mxSmlExInit"}, Required: true},
		{Fn: &s.shutdown, Names: []string{"mxSmlExShutdown"}, Required: true},
		{Fn: &s.errorString, Names: []string{"mxSmlExErrorString"}, Required: true, Sig: "u"},
		{Fn: &s.count, Names: []string{"mxSmlExDeviceGetCount"}, Required: true, Sig: "p"},
		{Fn: &s.handle, Names: []string{"mxSmlExGetDeviceHandleByIndex"}, Required: true, Sig: "up"},
		{Fn: &s.name, Names: []string{"mxSmlExDeviceGetName"}, Required: true, Sig: "hpu"},
		{Fn: &s.uuid, Names: []string{"mxSmlExDeviceGetUUID"}, Sig: "hpu"},
		{Fn: &s.memory, Names: []string{"mxSmlExDeviceGetMemoryInfo"}, Sig: "hp"},
		{Fn: &s.pci, Names: []string{"mxSmlExDeviceGetPciInfo"}, Sig: "hp"},
		{Fn: &s.computeCapability, Names: []string{"mxSmlExDeviceGetComputeCapability"}, Sig: "hpp"},
		{Fn: &s.driverVersion, Names: []string{"mxSmlExSystemGetDriverVersion"}, Sig: "pu"},
		{Fn: &s.macaCount, Names: []string{"mxSmlExMacaDeviceGetCount"}, Sig: "p"},
	}
}

// mxsmlMemory is mxSmlExMemory_t; see the disputed order above.
type mxsmlMemory struct{ first, second, used uint64 }

type mxsmlPciInfo struct {
	busIDLegacy                                    [16]byte
	domain, bus, device, pciDeviceID, pciSubSystem uint32
	busID                                          [32]byte
}

// MXSML asks MetaX's management library which MetaX GPUs are here, then
// applies the visibility variables the presence tier can decide
// (Visibility). Where mxSmlExMacaDeviceGetCount counts fewer MACA compute
// devices than mxSmlExDeviceGetCount counts devices, a note says so: MXSML
// does not tell which of them the MACA runtime leaves out, so the list is
// kept whole. It opens libmxsml.so
// (FLAGOS_LIBMXSML_PATH overrides the search), calls mxSmlExInit, reads
// every device and calls mxSmlExShutdown before returning (under
// presence.WithoutShutdown, the process's exit or the library's next query
// does); it never loads the MACA runtime. A count above device.MaxDevices is
// refused before anything is allocated for it. Safe for concurrent use;
// keeps no state.
func MXSML(e *presence.Env) presence.Report {
	var s mxsmlSyms
	var macaNote string
	c := &clib.Codes{Library: "MXSML", Names: mxsmlReturnNames, Message: presence.ErrorString(&s.errorString)}
	r := presence.Query(e, presence.Management{
		Source: SourceMXSML, Library: MXSMLLibrary, Symbols: s.table(), Codes: c,
		Ships:      "the MetaX driver",
		Init:       func() error { return c.Check("mxSmlExInit", s.init.CallCode()) },
		InitReason: mxsmlInitReason,
		Shutdown:   func() error { return c.Check("mxSmlExShutdown", s.shutdown.CallCode()) },
		Version: func(r *presence.Report, note func(error) bool) {
			var buf [96]byte
			if s.driverVersion.OK() && note(c.Check("mxSmlExSystemGetDriverVersion", s.driverVersion.CallCode(uintptr(unsafe.Pointer(&buf[0])), 80))) {
				r.DriverVersion = clib.CString(buf[:])
			}
		},
		Count: func() (uint64, string, error) {
			var n uint32
			err := c.Check("mxSmlExDeviceGetCount", s.count.CallCode(uintptr(unsafe.Pointer(&n))))
			if err == nil {
				macaNote = s.macaCountNote(c, n)
			}
			return uint64(n), "mxSmlExDeviceGetCount", err
		},
		Device: func(i int, d *presence.Device, note func(error) bool) error { return s.device(c, i, d, note) },
		Rules:  Visibility,
	})
	if macaNote != "" {
		r.Notes = append(r.Notes, macaNote)
	}
	return r
}

// macaCountNote compares mxSmlExMacaDeviceGetCount's count of MACA compute
// devices with n, mxSmlExDeviceGetCount's: "" where they agree or the
// library lacks the function.
func (s *mxsmlSyms) macaCountNote(c *clib.Codes, n uint32) string {
	if !s.macaCount.OK() {
		return ""
	}
	var m uint32
	if err := c.Check("mxSmlExMacaDeviceGetCount", s.macaCount.CallCode(uintptr(unsafe.Pointer(&m)))); err != nil {
		return err.Error()
	}
	if m == n {
		return ""
	}
	return fmt.Sprintf("mxSmlExMacaDeviceGetCount counts %d MACA compute device(s) of the %d mxSmlExDeviceGetCount counts; MXSML does not say which the MACA runtime leaves out, so all are listed", m, n)
}

// device reads device i through its handle; memory that is not free, total
// and used in either order is noted and left unknown.
func (s *mxsmlSyms) device(c *clib.Codes, i int, d *presence.Device, note func(error) bool) error {
	var h uintptr // mxSmlExDevice_t: one pointer
	if err := c.Check(fmt.Sprintf("mxSmlExGetDeviceHandleByIndex(%d)", i), s.handle.CallCode(uintptr(i), uintptr(unsafe.Pointer(&h)))); err != nil {
		return err
	}
	var buf [96]byte
	if note(c.Check("mxSmlExDeviceGetName", s.name.CallCode(h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.Name = clib.CString(buf[:])
	}
	buf = [96]byte{}
	const uuidSize = 80 // MXSMLEX_DEVICE_UUID_BUFFER_SIZE
	if s.uuid.OK() && note(c.Check("mxSmlExDeviceGetUUID", s.uuid.CallCode(h, uintptr(unsafe.Pointer(&buf[0])), uuidSize))) {
		d.UUID = clib.CString(buf[:])
	}
	var m mxsmlMemory
	if s.memory.OK() && note(c.Check("mxSmlExDeviceGetMemoryInfo", s.memory.CallCode(h, uintptr(unsafe.Pointer(&m))))) {
		var ok bool
		if d.TotalMemory, d.FreeMemory, ok = m.read(); !ok {
			note(fmt.Errorf("mxSmlExDeviceGetMemoryInfo answered {%d, %d, %d}, which is not free, total and used in either order MetaX's sources give: memory left unknown",
				m.first, m.second, m.used))
		}
	}
	var p mxsmlPciInfo
	if s.pci.OK() && note(c.Check("mxSmlExDeviceGetPciInfo", s.pci.CallCode(h, uintptr(unsafe.Pointer(&p))))) {
		d.PCIBusID = clib.CString(p.busID[:])
	}
	var major, minor int32
	if s.computeCapability.OK() && note(c.Check("mxSmlExDeviceGetComputeCapability", s.computeCapability.CallCode(h, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))))) {
		d.Major, d.Minor = int(major), int(minor)
	}
	return nil
}

// read returns the total and free memory of an mxSmlExMemory_t whose first
// two fields are free and total in either order; ok is false when the three
// numbers are not a plausible free/total/used (free + used within a tenth
// of the total).
func (m mxsmlMemory) read() (total, free uint64, ok bool) {
	total, free = max(m.first, m.second), min(m.first, m.second)
	if total == 0 || total > 1<<60 || m.used > total {
		return 0, 0, false
	}
	sum, slack := free+m.used, total/10
	if sum > total+slack || sum+slack < total {
		return 0, 0, false
	}
	return total, free, true
}

// mxsmlInitReason is the sentence for a failed mxSmlExInit: what it means
// for the user and what to do.
func mxsmlInitReason(e *clib.Error) string {
	switch e.Code {
	case mxsmlDriverNotLoaded:
		return fmt.Sprintf("MXSML: the MetaX kernel driver is not loaded (%s): no MetaX GPU is usable here", e.Name)
	case mxsmlNoPermission:
		return fmt.Sprintf("MXSML: no permission to the MetaX device nodes (%s): give this user access to /dev/mxcd and /dev/dri, or start the container with --device=/dev/mxcd --device=/dev/dri", e.Name)
	case mxsmlRMMismatch:
		return fmt.Sprintf("MXSML: libmxsml and the loaded metax kernel module are different driver versions (%s): reboot, or reload the metax module", e.Name)
	}
	return e.Error()
}
