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
	"runtime"
	"unsafe"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/presence"
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

// codes gives MTML's errors their names and mtmlErrorString's words.
func (s *mtmlSyms) codes() *clib.Codes {
	c := &clib.Codes{Library: "MTML", Names: mtmlReturnNames}
	if s.errorString.OK() {
		c.Message = func(code int) string {
			return clib.GoString(s.errorString.Call(uintptr(uint32(int32(code)))), clib.MaxCString)
		}
	}
	return c
}

// mtmlPciInfo is MtmlPciInfo: sbdf[32], six unsigned, two float, four
// unsigned, int rsvd[6].
type mtmlPciInfo struct {
	sbdf [32]byte
	rest [72]byte
}

const mtmlMPCParent = 1

// MTML asks the Moore Threads Management Library which Moore Threads GPUs
// are here, then applies MUSA_VISIBLE_DEVICES with CUDA_VISIBLE_DEVICES'
// rules (see presence.Visible). It opens libmtml.so (FLAGOS_LIBMTML_PATH
// overrides the search), calls mtmlLibraryInit, reads every device and
// calls mtmlLibraryShutDown before returning; it never initializes MUSA
// (muInit). A count above device.MaxDevices is refused before anything is
// allocated for it. Safe for concurrent use; keeps no state.
func MTML(e *presence.Env) (r presence.Report) {
	r.Source = SourceMTML
	defer presence.Guard(&r)
	lib := e.Open(mtmlLibrary, &r)
	if lib == nil {
		return r
	}
	var s mtmlSyms
	if err := lib.Resolve("MTML", s.table()); err != nil {
		r.Err = err
		r.Reason = err.Error() + "; update the Moore Threads driver or point " + MTMLEnvVar + " at its libmtml.so"
		return r
	}
	codes := s.codes()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var h uintptr
	if code := s.init.CallCode(uintptr(unsafe.Pointer(&h))); code != mtmlSuccess || h == 0 {
		err := codes.Err("mtmlLibraryInit", code)
		r.Err = fmt.Errorf("%w: %w", presence.ErrInit, err)
		r.Reason = mtmlInitReason(err)
		e.Log().Debug("presence: mtml init failed", zap.Error(err))
		return r
	}
	defer func() {
		if err := codes.Check("mtmlLibraryShutDown", s.shutdown.CallCode(h)); err != nil {
			r.Notes = append(r.Notes, err.Error())
		}
	}()

	if s.initSystem.OK() && s.driverVersion.OK() {
		var sys uintptr
		var buf [128]byte
		if err := codes.Check("mtmlLibraryInitSystem", s.initSystem.CallCode(h, uintptr(unsafe.Pointer(&sys)))); err != nil {
			r.Notes = append(r.Notes, err.Error())
		} else if err := codes.Check("mtmlSystemGetDriverVersion", s.driverVersion.CallCode(sys, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))); err != nil {
			r.Notes = append(r.Notes, err.Error())
		} else {
			r.DriverVersion = clib.CString(buf[:])
		}
	}

	var n uint32
	if err := codes.Check("mtmlLibraryCountDevice", s.count.CallCode(h, uintptr(unsafe.Pointer(&n)))); err != nil {
		r.Err = fmt.Errorf("%w: %w", presence.ErrQuery, err)
		r.Reason = err.Error()
		return r
	}
	if !presence.CheckCount(&r, "MTML", "mtmlLibraryCountDevice", uint64(n)) {
		return r
	}
	all := make([]presence.Device, 0, n)
	for i := range int(n) {
		d, parent, err := s.device(codes, h, i, &r.Notes)
		if err != nil {
			r.Err = fmt.Errorf("%w: %w", presence.ErrQuery, err)
			r.Reason = err.Error()
			return r
		}
		if parent {
			r.Notes = append(r.Notes, fmt.Sprintf("device %d is an MPC parent (the control device of its MPC instances): not counted", i))
			continue
		}
		d.Index = len(all)
		all = append(all, d)
	}
	r.Total = len(all)
	value, set := e.Lookup(VisibleDevicesEnv)
	r.Visibility = presence.Visibility(VisibleDevicesEnv, value, set)
	devs, err := presence.Visible(all, value, set)
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("MTML sees %d device%s, but %s cannot be resolved without MUSA: %v; use FLAGOS_PROBE=isolated", r.Total, presence.Plural(r.Total), r.Visibility, err)
		return r
	}
	r.Devices = devs
	r.Reason = presence.CountReason("MTML", r.Total, len(devs), r.Visibility)
	e.Log().Debug("presence: mtml", zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// device reads one device; parent reports an MPC parent.
func (s *mtmlSyms) device(codes *clib.Codes, h uintptr, i int, notes *[]string) (d presence.Device, parent bool, err error) {
	d = presence.Device{Index: i, SourceIndex: i}
	var dev uintptr
	if code := s.byIndex.CallCode(h, uintptr(uint32(i)), uintptr(unsafe.Pointer(&dev))); code != mtmlSuccess || dev == 0 {
		return d, false, codes.Err(fmt.Sprintf("mtmlLibraryInitDeviceByIndex(%d)", i), code)
	}
	note := func(err error) bool {
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("device %d: %v", i, err))
		}
		return err == nil
	}
	if s.property.OK() {
		var prop [2]uint32
		if note(codes.Check("mtmlDeviceGetProperty", s.property.CallCode(dev, uintptr(unsafe.Pointer(&prop[0]))))) {
			parent = (prop[0]>>5)&7 == mtmlMPCParent
		}
	}
	var buf [64]byte
	if note(codes.Check("mtmlDeviceGetName", s.name.CallCode(dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.Name = clib.CString(buf[:])
	}
	buf = [64]byte{}
	if note(codes.Check("mtmlDeviceGetUUID", s.uuid.CallCode(dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.UUID = clib.CString(buf[:])
	}
	if s.pci.OK() {
		var p mtmlPciInfo
		if note(codes.Check("mtmlDeviceGetPciInfo", s.pci.CallCode(dev, uintptr(unsafe.Pointer(&p))))) {
			d.PCIBusID = clib.CString(p.sbdf[:])
		}
	}
	if s.initMemory.OK() && s.memTotal.OK() {
		var mem uintptr
		var total, used uint64
		if !note(codes.Check("mtmlDeviceInitMemory", s.initMemory.CallCode(dev, uintptr(unsafe.Pointer(&mem))))) {
			return d, parent, nil
		}
		if !note(codes.Check("mtmlMemoryGetTotal", s.memTotal.CallCode(mem, uintptr(unsafe.Pointer(&total))))) {
			return d, parent, nil
		}
		d.TotalMemory = total
		if s.memUsed.OK() && note(codes.Check("mtmlMemoryGetUsed", s.memUsed.CallCode(mem, uintptr(unsafe.Pointer(&used))))) && used <= total {
			d.FreeMemory = total - used
		}
	}
	return d, parent, nil
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
