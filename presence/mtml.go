package presence

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

	"github.com/ebitengine/purego"
	"go.uber.org/zap"
)

var mtmlLib = libDesc{
	human:   "MTML",
	name:    "libmtml",
	file:    "libmtml.so",
	envVar:  MTMLEnvVar,
	sonames: []string{"libmtml.so", "libmtml.so.2"},
	dirs:    []string{"/usr/lib", "/lib", multiarchLibDir, "/usr/local/musa/lib"},
}

type mtmlSyms struct {
	init, shutdown, count, byIndex, name, uuid uintptr
	initMemory, memTotal, memUsed              uintptr
	initSystem, driverVersion                  uintptr
	pci, property, errorString                 uintptr
}

func (s *mtmlSyms) table() []sym {
	return []sym{
		{&s.init, []string{"mtmlLibraryInit"}, true},
		{&s.shutdown, []string{"mtmlLibraryShutDown"}, true},
		{&s.count, []string{"mtmlLibraryCountDevice"}, true},
		{&s.byIndex, []string{"mtmlLibraryInitDeviceByIndex"}, true},
		{&s.name, []string{"mtmlDeviceGetName"}, true},
		{&s.uuid, []string{"mtmlDeviceGetUUID"}, true},
		{&s.initMemory, []string{"mtmlDeviceInitMemory"}, false},
		{&s.memTotal, []string{"mtmlMemoryGetTotal"}, false},
		{&s.memUsed, []string{"mtmlMemoryGetUsed"}, false},
		{&s.initSystem, []string{"mtmlLibraryInitSystem"}, false},
		{&s.driverVersion, []string{"mtmlSystemGetDriverVersion"}, false},
		{&s.pci, []string{"mtmlDeviceGetPciInfo"}, false},
		{&s.property, []string{"mtmlDeviceGetProperty"}, false},
		{&s.errorString, []string{"mtmlErrorString"}, false},
	}
}

func (s *mtmlSyms) err(fn string, code int) *Error {
	e := &Error{Library: "MTML", Func: fn, Code: code, Name: mtmlReturnNames[code]}
	if s.errorString != 0 {
		r, _, _ := purego.SyscallN(s.errorString, uintptr(uint32(int32(code))))
		e.Message = goString(r)
	}
	return e
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
// rules (see Visible). It opens libmtml.so (FLAGOS_LIBMTML_PATH overrides
// the search), calls mtmlLibraryInit, reads every device and calls
// mtmlLibraryShutDown before returning; it never initializes MUSA (muInit).
// Safe for concurrent use; keeps no state.
func MTML(opts ...Option) (r Report) {
	r.Source = SourceMTML
	defer guard(&r)
	c := newConfig(opts)
	lib := c.open(mtmlLib, &r)
	if lib == nil {
		return r
	}
	var s mtmlSyms
	if err := resolve(lib, s.table()); err != nil {
		r.Err = err
		r.Reason = err.Error() + "; update the Moore Threads driver or point " + MTMLEnvVar + " at its libmtml.so"
		return r
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var h uintptr
	if code := call(s.init, uintptr(unsafe.Pointer(&h))); code != mtmlSuccess || h == 0 {
		e := s.err("mtmlLibraryInit", code)
		r.Err = fmt.Errorf("%w: %w", ErrInit, e)
		r.Reason = mtmlInitReason(e)
		c.log.Debug("presence: mtml init failed", zap.Error(e))
		return r
	}
	defer func() {
		if code := call(s.shutdown, h); code != mtmlSuccess {
			r.Notes = append(r.Notes, s.err("mtmlLibraryShutDown", code).Error())
		}
	}()

	if s.initSystem != 0 && s.driverVersion != 0 {
		var sys uintptr
		var buf [128]byte
		if code := call(s.initSystem, h, uintptr(unsafe.Pointer(&sys))); code != mtmlSuccess {
			r.Notes = append(r.Notes, s.err("mtmlLibraryInitSystem", code).Error())
		} else if code := call(s.driverVersion, sys, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); code != mtmlSuccess {
			r.Notes = append(r.Notes, s.err("mtmlSystemGetDriverVersion", code).Error())
		} else {
			r.DriverVersion = cString(buf[:])
		}
	}

	var n uint32
	if code := call(s.count, h, uintptr(unsafe.Pointer(&n))); code != mtmlSuccess {
		e := s.err("mtmlLibraryCountDevice", code)
		r.Err = fmt.Errorf("%w: %w", ErrQuery, e)
		r.Reason = e.Error()
		return r
	}
	all := make([]Device, 0, n)
	for i := range int(n) {
		d, parent, err := s.device(h, i, &r.Notes)
		if err != nil {
			r.Err = fmt.Errorf("%w: %w", ErrQuery, err)
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
	value, set := c.lookupEnv(MUSAVisibleEnv)
	r.Visibility = visibility(MUSAVisibleEnv, value, set)
	devs, err := Visible(all, value, set)
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("MTML sees %d device%s, but %s cannot be resolved without MUSA: %v; use FLAGOS_PROBE=isolated", r.Total, plural(r.Total), r.Visibility, err)
		return r
	}
	r.Devices = devs
	r.Reason = countReason("MTML", r.Total, len(devs), r.Visibility)
	c.log.Debug("presence: mtml", zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// device reads one device; parent reports an MPC parent.
func (s *mtmlSyms) device(h uintptr, i int, notes *[]string) (d Device, parent bool, err error) {
	d = Device{Index: i, SourceIndex: i}
	var dev uintptr
	if code := call(s.byIndex, h, uintptr(uint32(i)), uintptr(unsafe.Pointer(&dev))); code != mtmlSuccess || dev == 0 {
		return d, false, s.err(fmt.Sprintf("mtmlLibraryInitDeviceByIndex(%d)", i), code)
	}
	note := func(fn string, code int) {
		*notes = append(*notes, fmt.Sprintf("device %d: %v", i, s.err(fn, code)))
	}
	if s.property != 0 {
		var prop [2]uint32
		if code := call(s.property, dev, uintptr(unsafe.Pointer(&prop[0]))); code == mtmlSuccess {
			parent = (prop[0]>>5)&7 == mtmlMPCParent
		} else {
			note("mtmlDeviceGetProperty", code)
		}
	}
	var buf [64]byte
	if code := call(s.name, dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); code == mtmlSuccess {
		d.Name = cString(buf[:])
	} else {
		note("mtmlDeviceGetName", code)
	}
	buf = [64]byte{}
	if code := call(s.uuid, dev, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); code == mtmlSuccess {
		d.UUID = cString(buf[:])
	} else {
		note("mtmlDeviceGetUUID", code)
	}
	if s.pci != 0 {
		var p mtmlPciInfo
		if code := call(s.pci, dev, uintptr(unsafe.Pointer(&p))); code == mtmlSuccess {
			d.PCIBusID = cString(p.sbdf[:])
		} else {
			note("mtmlDeviceGetPciInfo", code)
		}
	}
	if s.initMemory != 0 && s.memTotal != 0 {
		var mem uintptr
		var total, used uint64
		if code := call(s.initMemory, dev, uintptr(unsafe.Pointer(&mem))); code != mtmlSuccess {
			note("mtmlDeviceInitMemory", code)
		} else if code := call(s.memTotal, mem, uintptr(unsafe.Pointer(&total))); code != mtmlSuccess {
			note("mtmlMemoryGetTotal", code)
		} else {
			d.TotalMemory = total
			if s.memUsed != 0 {
				if code := call(s.memUsed, mem, uintptr(unsafe.Pointer(&used))); code == mtmlSuccess && used <= total {
					d.FreeMemory = total - used
				} else if code != mtmlSuccess {
					note("mtmlMemoryGetUsed", code)
				}
			}
		}
	}
	return d, parent, nil
}

func mtmlInitReason(e *Error) string {
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
