package musa

// The MTML binding. Signatures, structs and codes are from Moore Threads'
// mtml.h, MTML 2.2.0 (vendored as mtml_2.2.0.h in yeahdongcn/mthreads-ml-py;
// the same calls and return codes are in MooreThreads/mthreads-ml-py
// pymtml.py). The handles are opaque pointers:
//
//	MtmlReturn mtmlLibraryInit(MtmlLibrary **lib);
//	MtmlReturn mtmlLibraryShutDown(MtmlLibrary *lib);
//	MtmlReturn mtmlLibraryCountDevice(const MtmlLibrary *lib, unsigned int *count);
//	MtmlReturn mtmlLibraryInitDeviceByIndex(const MtmlLibrary *lib, unsigned int index, MtmlDevice **dev);
//	MtmlReturn mtmlDeviceGetName(const MtmlDevice *dev, char *name, unsigned int length);   MTML_DEVICE_NAME_BUFFER_SIZE 32
//	MtmlReturn mtmlDeviceGetUUID(const MtmlDevice *dev, char *uuid, unsigned int length);   MTML_DEVICE_UUID_BUFFER_SIZE 48
//
// and, optional:
//
//	MtmlReturn mtmlDeviceInitMemory(const MtmlDevice *dev, MtmlMemory **mem);
//	MtmlReturn mtmlMemoryGetTotal(const MtmlMemory *mem, unsigned long long *total);
//	MtmlReturn mtmlMemoryGetUsed(const MtmlMemory *mem, unsigned long long *used);
//	MtmlReturn mtmlLibraryInitSystem(const MtmlLibrary *lib, MtmlSystem **sys);
//	MtmlReturn mtmlSystemGetDriverVersion(const MtmlSystem *sys, char *version, unsigned int length);  MTML_DRIVER_VERSION_BUFFER_SIZE 80
//	MtmlReturn mtmlDeviceGetPciInfo(const MtmlDevice *dev, MtmlPciInfo *pci);   char sbdf[32] first ("00000000:3a:00.0"); 104 bytes
//	MtmlReturn mtmlDeviceGetProperty(const MtmlDevice *dev, MtmlDeviceProperty *prop);   8 bytes of bit fields
//	const char* mtmlErrorString(MtmlReturn result);
//
// The header: "If multiple MtmlLibrary pointers are initialized ..., the
// library will not be shut down until the corresponding number of
// mtmlLibraryShutDown() calls", and mtmlLibraryFree{System,Device} and
// mtmlDeviceFreeMemory are deprecated ("Not required anymore"), so one
// ShutDown per Init releases everything. UUIDs come as
// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", without a prefix.
//
// MtmlDeviceProperty's first 32 bits are virtCap:1, virtRole:3, mpcCap:1,
// mpcType:3 (0 none, 1 MPC parent, 2 MPC instance), ...; bit fields are
// allocated from the low bit on the SysV ABIs. With MPC enabled, MTML lists
// N instances plus their parent, "a mimic device" that "serves as the
// control for MPC functions": this tier does not count the parent (an
// inference from the header; MUSA's runtime is closed source).
//
// Where libmtml installs: MooreThreads/mthreads-ml-py loads the bare
// "libmtml.so" (an earlier revision's test preferred "libmtml.so.2");
// MooreThreads/ollama-musa opens /lib/libmtml.so; sglang's MUSA wrapper
// opens /usr/lib/libmtml.so. /usr/local/musa/lib is MUSA's toolkit folder
// (not confirmed to hold libmtml).

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// MTMLEnvVar overrides the search for libmtml.so with an absolute path.
const MTMLEnvVar = "FLAGOS_LIBMTML_PATH"

// SourceMTML is the presence Report.Source of MTML's answer.
const SourceMTML = "mtml"

// mtmlLibrary is where MTML is looked for.
var mtmlLibrary = clib.Library{
	Name:    "libmtml",
	EnvVar:  MTMLEnvVar,
	Sonames: []string{"libmtml.so", "libmtml.so.2"},
	Dirs:    []string{"/usr/lib", "/lib", clib.MultiarchLibDir, "/usr/local/musa/lib"},
}

type mtmlSyms struct {
	init, shutdown, count, byIndex, name, uuid clib.Func
	initMemory, memTotal, memUsed              clib.Func
	initSystem, driverVersion                  clib.Func
	pci, property, errorString                 clib.Func
}

func (s *mtmlSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"mtmlLibraryInit"}, Required: true, Sig: "p"},
		{Fn: &s.shutdown, Names: []string{"mtmlLibraryShutDown"}, Required: true, Sig: "h"},
		{Fn: &s.count, Names: []string{"mtmlLibraryCountDevice"}, Required: true, Sig: "hp"},
		{Fn: &s.byIndex, Names: []string{"mtmlLibraryInitDeviceByIndex"}, Required: true, Sig: "hup"},
		{Fn: &s.name, Names: []string{"mtmlDeviceGetName"}, Required: true, Sig: "hpu"},
		{Fn: &s.uuid, Names: []string{"mtmlDeviceGetUUID"}, Required: true, Sig: "hpu"},
		{Fn: &s.initMemory, Names: []string{"mtmlDeviceInitMemory"}, Sig: "hp"},
		{Fn: &s.memTotal, Names: []string{"mtmlMemoryGetTotal"}, Sig: "hp"},
		{Fn: &s.memUsed, Names: []string{"mtmlMemoryGetUsed"}, Sig: "hp"},
		{Fn: &s.initSystem, Names: []string{"mtmlLibraryInitSystem"}, Sig: "hp"},
		{Fn: &s.driverVersion, Names: []string{"mtmlSystemGetDriverVersion"}, Sig: "hpu"},
		{Fn: &s.pci, Names: []string{"mtmlDeviceGetPciInfo"}, Sig: "hp"},
		{Fn: &s.property, Names: []string{"mtmlDeviceGetProperty"}, Sig: "hp"},
		{Fn: &s.errorString, Names: []string{"mtmlErrorString"}, Sig: "i"},
	}
}

// mtmlPciInfo is MtmlPciInfo: sbdf[32], six unsigned, two float, four
// unsigned, int rsvd[6].
type mtmlPciInfo struct {
	sbdf [32]byte
	rest [72]byte
}

const mtmlMPCParent = 1

// MTML asks the Moore Threads Management Library which Moore Threads GPUs
// are here, then applies MUSA_VISIBLE_DEVICES as MUSA documents it
// (Visibility). It opens libmtml.so (FLAGOS_LIBMTML_PATH
// overrides the search), calls mtmlLibraryInit, reads every device and calls
// mtmlLibraryShutDown before returning (under presence.WithoutShutdown, the
// process's exit or the library's next query does); it never initializes
// MUSA (muInit). A count above device.MaxDevices is refused before anything
// is allocated for it. Safe for concurrent use; keeps no state.
func MTML(e *presence.Env) presence.Report {
	var s mtmlSyms
	var h uintptr // the MtmlLibrary mtmlLibraryInit gives
	c := &clib.Codes{Library: "MTML", Names: mtmlReturnNames, Message: presence.ErrorString(&s.errorString)}
	return presence.Query(e, presence.Management{
		Source: SourceMTML, Library: mtmlLibrary, Symbols: s.table(), Codes: c,
		Ships: "the Moore Threads driver",
		Init: func() error {
			if code := s.init.CallCode(uintptr(unsafe.Pointer(&h))); code != mtmlSuccess || h == 0 {
				return c.Err("mtmlLibraryInit", code)
			}
			return nil
		},
		InitReason: mtmlInitReason,
		Shutdown:   func() error { return c.Check("mtmlLibraryShutDown", s.shutdown.CallCode(h)) },
		Version:    func(r *presence.Report, note func(error) bool) { r.DriverVersion = s.version(c, h, note) },
		Count: func() (uint64, string, error) {
			var n uint32
			err := c.Check("mtmlLibraryCountDevice", s.count.CallCode(h, uintptr(unsafe.Pointer(&n))))
			return uint64(n), "mtmlLibraryCountDevice", err
		},
		Device: func(i int, d *presence.Device, note func(error) bool) error { return s.device(c, h, i, d, note) },
		Rules:  Visibility,
	})
}

// version is the driver's version, through the MtmlSystem; "" unknown.
func (s *mtmlSyms) version(c *clib.Codes, h uintptr, note func(error) bool) string {
	if !s.initSystem.OK() || !s.driverVersion.OK() {
		return ""
	}
	var sys uintptr
	var buf [128]byte
	if !note(c.Check("mtmlLibraryInitSystem", s.initSystem.CallCode(h, uintptr(unsafe.Pointer(&sys))))) ||
		!note(c.Check("mtmlSystemGetDriverVersion", s.driverVersion.CallCode(sys, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		return ""
	}
	return clib.CString(buf[:])
}

// device reads device i; an MPC parent is read, then skipped.
func (s *mtmlSyms) device(c *clib.Codes, h uintptr, i int, d *presence.Device, note func(error) bool) error {
	var dev uintptr
	if code := s.byIndex.CallCode(h, uintptr(uint32(i)), uintptr(unsafe.Pointer(&dev))); code != mtmlSuccess || dev == 0 {
		return c.Err(fmt.Sprintf("mtmlLibraryInitDeviceByIndex(%d)", i), code)
	}
	parent := false
	if s.property.OK() {
		var prop [2]uint32
		if note(c.Check("mtmlDeviceGetProperty", s.property.CallCode(dev, uintptr(unsafe.Pointer(&prop[0]))))) {
			parent = (prop[0]>>5)&7 == mtmlMPCParent
		}
	}
	var buf [64]byte
	if note(c.Check("mtmlDeviceGetName", s.name.CallCode(dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.Name = clib.CString(buf[:])
	}
	buf = [64]byte{}
	if note(c.Check("mtmlDeviceGetUUID", s.uuid.CallCode(dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.UUID = clib.CString(buf[:])
	}
	if s.pci.OK() {
		var p mtmlPciInfo
		if note(c.Check("mtmlDeviceGetPciInfo", s.pci.CallCode(dev, uintptr(unsafe.Pointer(&p))))) {
			d.PCIBusID = clib.CString(p.sbdf[:])
		}
	}
	d.TotalMemory, d.FreeMemory = s.memory(c, dev, note)
	if parent {
		return presence.Skip{Why: "an MPC parent (the control device of its MPC instances)"}
	}
	return nil
}

// memory is the device's total and free memory in bytes; 0 unknown.
func (s *mtmlSyms) memory(c *clib.Codes, dev uintptr, note func(error) bool) (total, free uint64) {
	if !s.initMemory.OK() || !s.memTotal.OK() {
		return 0, 0
	}
	var mem uintptr
	if !note(c.Check("mtmlDeviceInitMemory", s.initMemory.CallCode(dev, uintptr(unsafe.Pointer(&mem))))) ||
		!note(c.Check("mtmlMemoryGetTotal", s.memTotal.CallCode(mem, uintptr(unsafe.Pointer(&total))))) {
		return 0, 0
	}
	var used uint64
	if s.memUsed.OK() && note(c.Check("mtmlMemoryGetUsed", s.memUsed.CallCode(mem, uintptr(unsafe.Pointer(&used))))) && used <= total {
		free = total - used
	}
	return total, free
}

func mtmlInitReason(e *clib.Error) string {
	switch e.Code {
	case mtmlDriverNotLoaded:
		return fmt.Sprintf("MTML: the Moore Threads kernel driver is not loaded (%s): no Moore Threads GPU is usable here", e.Name)
	case mtmlNoPermission:
		return fmt.Sprintf("MTML: no permission to the Moore Threads device nodes (%s): give this user access to /dev/mtgpu.* and /dev/dri or start the container with the GPUs", e.Name)
	case mtmlSuccess:
		return "MTML: mtmlLibraryInit succeeded but returned no library handle"
	}
	return e.Error()
}
