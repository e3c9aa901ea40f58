package gcu

// The EFML binding (the Enflame Management Library, libefml.so, what efsmi
// and Enflame's gcu-exporter read). Prototypes, structs and codes are from
// efml.h as EnflameTechnology/gcu-exporter vendors it
// (vendor/go-eflib/efml/efml.h, go-eflib 1.2.3.5), its index-based "Efml*"
// family, the one Enflame's own Go bindings (efml_bindings.go) call:
//
//	efmlReturn_t EfmlInit(bool no_driver);                          go-eflib's Init passes false: "init with driver"
//	void         EfmlShutdown();
//	efmlReturn_t EfmlGetDevCount(uint32_t *dev_count);
//
// and, optional:
//
//	efmlReturn_t EfmlErrorString(efmlReturn_t result, char *p_error_str);
//	efmlReturn_t EfmlGetDriverVer(char *p_driver_ver);
//	efmlReturn_t EfmlGetDevName(uint32_t dev_idx, char *p_name);
//	efmlReturn_t EfmlGetDevUuid(uint32_t dev_idx, char *p_info);
//	efmlReturn_t EfmlGetDevMem(uint32_t dev_idx, efmlDevMemInfo_t *p_mem);     {uint64_t mem_total_size; uint32_t mem_used}: 16 bytes
//	efmlReturn_t EfmlGetDevInfo(uint32_t dev_idx, efmlDeviceInfo_t *p_info);   {char name[128]; uint32_t vendor_id, device_id,
//	                                                                           domain_id, bus_id, dev_id, func_id, logic_id}: 156 bytes
//
// The string outputs take no length: Enflame passes char[MAX_CHAR_BUFF_LEN]
// (128); this binding passes 1024 bytes. mem_total_size is in bytes and
// mem_used in MiB (go-eflib device.go: Mem_Used * 1024 * 1024). The UUID
// is reported as EFML writes it (its format is not documented). That EFML's
// device indexes are the TOPS runtime's ordinals is not confirmed.
// go-eflib ignores SIGUSR1 and SIGUSR2 before EfmlInit ("SIGUSR1 for PSE
// efml have special use"); a Go program ignores them anyway unless it asks
// for them (os/signal.Notify).

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// EFMLEnvVar overrides the search for libefml.so with an absolute path.
const EFMLEnvVar = "FLAGOS_LIBEFML_PATH"

// SourceEFML is the presence Report.Source of EFML's answer.
const SourceEFML = "efml"

// EFMLLibrary is where EFML is looked for: the names and folders Enflame's
// loader tries (gcu-exporter vendor/go-eflib/efml/efml_dl.go: libefml.so,
// .so.1, .so.2, .so.2.1, .so.2.0, .so.1.0.0 in /usr/lib, /usr/lib64 and
// /usr/lib/x86_64-linux-gnu; the driver installs /usr/lib/libefml.so).
var EFMLLibrary = clib.Library{
	Name:    "libefml",
	EnvVar:  EFMLEnvVar,
	Sonames: []string{"libefml.so", "libefml.so.1", "libefml.so.2", "libefml.so.2.1", "libefml.so.2.0", "libefml.so.1.0.0"},
	Dirs:    []string{"/usr/lib", "/usr/lib64", clib.MultiarchLibDir},
}

// efmlBuf is the size of the buffers given to EFML's string outputs.
const efmlBuf = 1024

type efmlSyms struct {
	init, shutdown, count                        clib.Func
	errorString, driverVer, name, uuid, mem, pci clib.Func
}

func (s *efmlSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"EfmlInit"}, Required: true, Sig: "u"},
		{Fn: &s.shutdown, Names: []string{"EfmlShutdown"}, Required: true},
		{Fn: &s.count, Names: []string{"EfmlGetDevCount"}, Required: true, Sig: "p"},
		{Fn: &s.errorString, Names: []string{"EfmlErrorString"}, Sig: "ip"},
		{Fn: &s.driverVer, Names: []string{"EfmlGetDriverVer"}, Sig: "p"},
		{Fn: &s.name, Names: []string{"EfmlGetDevName"}, Sig: "up"},
		{Fn: &s.uuid, Names: []string{"EfmlGetDevUuid"}, Sig: "up"},
		{Fn: &s.mem, Names: []string{"EfmlGetDevMem"}, Sig: "up"},
		{Fn: &s.pci, Names: []string{"EfmlGetDevInfo"}, Sig: "up"},
	}
}

// message is EfmlErrorString's words for a code; "" where the library
// lacks it or cannot say.
func (s *efmlSyms) message(code int) string {
	var buf [efmlBuf]byte
	if !s.errorString.OK() || s.errorString.CallCode(uintptr(uint32(int32(code))), uintptr(unsafe.Pointer(&buf[0]))) != efmlSuccess {
		return ""
	}
	return clib.CString(buf[:])
}

type efmlDevMemInfo struct {
	memTotalSize uint64 // bytes
	memUsed      uint32 // MiB
}

type efmlDeviceInfo struct {
	name                           [128]byte
	_                              [2]uint32 // vendor_id, device_id
	domainID, busID, devID, funcID uint32
	_                              uint32 // logic_id
}

// EFML asks the Enflame Management Library which GCUs are here, then applies
// TOPS_VISIBLE_DEVICES (its ordinal form, as CUDA_VISIBLE_DEVICES' ordinals;
// a DRS-<uuid> partition cannot be resolved here). It opens libefml.so
// (FLAGOS_LIBEFML_PATH overrides the search), calls EfmlInit, reads every
// device and calls EfmlShutdown before returning (under
// presence.WithoutShutdown, the process's exit or the library's next query
// does); it never initializes the TOPS runtime (topsInit). A count above
// device.MaxDevices is refused before anything is allocated for it. Safe for
// concurrent use; keeps no state.
func EFML(e *presence.Env) presence.Report {
	var s efmlSyms
	c := &clib.Codes{Library: "EFML", Names: efmlReturnNames, Message: s.message}
	return presence.Query(e, presence.Management{
		Source: SourceEFML, Library: EFMLLibrary, Symbols: s.table(), Codes: c,
		Ships:      "the Enflame driver",
		Init:       func() error { return c.Check("EfmlInit", s.init.CallCode(0)) },
		InitReason: efmlInitReason,
		Shutdown:   func() error { s.shutdown.Call(); return nil }, // void EfmlShutdown()
		Version: func(r *presence.Report, note func(error) bool) {
			var buf [efmlBuf]byte
			if s.driverVer.OK() && note(c.Check("EfmlGetDriverVer", s.driverVer.CallCode(uintptr(unsafe.Pointer(&buf[0]))))) {
				r.DriverVersion = clib.CString(buf[:])
			}
		},
		Count: func() (uint64, string, error) {
			var n uint32
			err := c.Check("EfmlGetDevCount", s.count.CallCode(uintptr(unsafe.Pointer(&n))))
			return uint64(n), "EfmlGetDevCount", err
		},
		Device:  func(i int, d *presence.Device, note func(error) bool) error { s.device(c, i, d, note); return nil },
		Rules:   Visibility,
		Runtime: "the TOPS runtime",
	})
}

// device reads device i by its index (EFML has no handles); what a
// function cannot say is noted.
func (s *efmlSyms) device(c *clib.Codes, i int, d *presence.Device, note func(error) bool) {
	idx := uintptr(uint32(i))
	var buf [efmlBuf]byte
	if s.name.OK() && note(c.Check("EfmlGetDevName", s.name.CallCode(idx, uintptr(unsafe.Pointer(&buf[0]))))) {
		d.Name = clib.CString(buf[:])
	}
	buf = [efmlBuf]byte{}
	if s.uuid.OK() && note(c.Check("EfmlGetDevUuid", s.uuid.CallCode(idx, uintptr(unsafe.Pointer(&buf[0]))))) {
		d.UUID = clib.CString(buf[:])
	}
	var info efmlDeviceInfo
	if s.pci.OK() && note(c.Check("EfmlGetDevInfo", s.pci.CallCode(idx, uintptr(unsafe.Pointer(&info))))) {
		d.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", info.domainID, info.busID, info.devID, info.funcID)
		if d.Name == "" {
			d.Name = clib.CString(info.name[:])
		}
	}
	var m efmlDevMemInfo
	if s.mem.OK() && note(c.Check("EfmlGetDevMem", s.mem.CallCode(idx, uintptr(unsafe.Pointer(&m))))) && m.memTotalSize > 0 {
		d.TotalMemory = m.memTotalSize
		used, err := presence.MB(uint64(m.memUsed), "EfmlGetDevMem's mem_used")
		if note(err) && used <= m.memTotalSize {
			d.FreeMemory = m.memTotalSize - used
		}
	}
}

func efmlInitReason(e *clib.Error) string {
	switch e.Code {
	case efmlDriverNotLoaded:
		return fmt.Sprintf("EFML: the Enflame GCU driver is not loaded (%s): no GCU is usable here", e.Name)
	case efmlNoDevice:
		return fmt.Sprintf("EFML: no GCU is usable (%s): start the container with /dev/gcu* and /dev/gcuctl", e.Name)
	case efmlDriverNotCompatible:
		return fmt.Sprintf("EFML: this libefml.so does not match the GCU driver (%s): use the one the driver installed (%s)", e.Name, EFMLEnvVar)
	}
	return e.Error()
}

// efmlReturnNames are efmlReturn_t of efml.h (gcu-exporter
// vendor/go-eflib/efml/efml.h, the "Efml*" family's codes).
var efmlReturnNames = map[int]string{
	0:   "EFML_SUCCESS",
	1:   "EFML_ERROR_UNINITIALIZED",
	2:   "EFML_ERROR_INVALID_ARGUMENT",
	3:   "EFML_ERROR_NOT_SUPPORTED",
	4:   "EFML_ERROR_LIBRARY_NOT_FOUND",
	5:   "EFML_ERROR_INVALID_ERROR_CODE",
	6:   "EFML_ERROR_DRIVER_NOT_LOADED",
	7:   "EFML_ERROR_GCU_LARE_PORT_NUMBER_ERR",
	8:   "EFML_ERROR_INVALID_INPUT",
	9:   "EFML_ERROR_FUNCTION_NOT_FOUND",
	10:  "EFML_ERROR_OPEN_DRIVER_VERSION",
	11:  "EFML_ERROR_DRIVER_NOT_COMPATIBLE",
	12:  "EFML_ERROR_NO_DEVICE",
	13:  "EFML_ERROR_DEPRECATION",
	253: "EFML_ERROR_TIMEOUT",
	254: "EFML_ERROR_FAIL",
	255: "EFML_ERROR_MAX",
}

// The efmlReturn_t codes this package tells apart.
const (
	efmlSuccess             = 0
	efmlDriverNotLoaded     = 6
	efmlDriverNotCompatible = 11
	efmlNoDevice            = 12
)
