package presence

// The NVML binding. Every signature, struct and code below is from nvml.h
// as NVIDIA/go-nvml vendors it (pkg/nvml/nvml.h):
//
//	nvmlReturn_t nvmlInit_v2(void);                      (nvmlInit before R319)
//	nvmlReturn_t nvmlShutdown(void);
//	const char*  nvmlErrorString(nvmlReturn_t result);
//	nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
//	nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
//	nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);   96 bytes (NVML_DEVICE_NAME_V2_BUFFER_SIZE)
//	nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);   96 bytes (NVML_DEVICE_UUID_V2_BUFFER_SIZE)
//	nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);         {total, free, used} unsigned long long
//	nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);             80 bytes (NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)
//
// and, optional:
//
//	nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
//	nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);  (then nvmlSystemGetCudaDriverVersion)
//	nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
//
// nvmlDevice_t is an opaque pointer. nvmlPciInfo_t (v3) is
// {char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId,
// pciSubSystemId; char busId[32]}: 68 bytes, busId at offset 36.
//
// nvmlInit_v2 does not initialize CUDA: NVML talks to the kernel driver
// through /dev/nvidiactl. nvml.h says the _v2 CUDA version comes from
// libcuda.so.1's cuDriverGetVersion, so NVML may map libcuda into the
// process to answer it; cuDriverGetVersion needs no cuInit and creates no
// context.

import (
	"fmt"
	"runtime"
	"unsafe"

	"go.uber.org/zap"

	"github.com/ebitengine/purego"
)

var nvmlLib = libDesc{
	human:   "NVML",
	name:    "libnvidia-ml",
	file:    "libnvidia-ml.so.1",
	envVar:  NVMLEnvVar,
	sonames: []string{"libnvidia-ml.so.1"},
	dirs:    []string{"/usr/local/nvidia/lib64", multiarchLibDir, "/usr/lib64", "/usr/lib/wsl/lib"},
}

type nvmlSyms struct {
	init, shutdown, errorString           uintptr
	count, handle, name, uuid, memory     uintptr
	driverVersion                         uintptr
	computeCapability, cudaVersion, pciV3 uintptr
	initName                              string
}

func (s *nvmlSyms) table() []sym {
	return []sym{
		{&s.init, []string{"nvmlInit_v2", "nvmlInit"}, true},
		{&s.shutdown, []string{"nvmlShutdown"}, true},
		{&s.errorString, []string{"nvmlErrorString"}, true},
		{&s.count, []string{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, true},
		{&s.handle, []string{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, true},
		{&s.name, []string{"nvmlDeviceGetName"}, true},
		{&s.uuid, []string{"nvmlDeviceGetUUID"}, true},
		{&s.memory, []string{"nvmlDeviceGetMemoryInfo"}, true},
		{&s.driverVersion, []string{"nvmlSystemGetDriverVersion"}, true},
		{&s.computeCapability, []string{"nvmlDeviceGetCudaComputeCapability"}, false},
		{&s.cudaVersion, []string{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}, false},
		{&s.pciV3, []string{"nvmlDeviceGetPciInfo_v3"}, false},
	}
}

// err builds the *Error of a failed call, with NVML's own message.
func (s *nvmlSyms) err(fn string, code int) *Error {
	e := &Error{Library: "NVML", Func: fn, Code: code, Name: nvmlReturnNames[code]}
	if s.errorString != 0 {
		r, _, _ := purego.SyscallN(s.errorString, uintptr(uint32(int32(code))))
		e.Message = goString(r)
	}
	return e
}

type nvmlMemory struct{ total, free, used uint64 }

type nvmlPciInfo struct {
	busIDLegacy                                    [16]byte
	domain, bus, device, pciDeviceID, pciSubSystem uint32
	busID                                          [32]byte
}

// NVML asks the NVIDIA Management Library which NVIDIA GPUs are here, then
// applies CUDA_VISIBLE_DEVICES as the CUDA runtime would (see Visible). It
// opens libnvidia-ml.so.1 (FLAGOS_LIBNVML_PATH overrides the search), calls
// nvmlInit_v2, reads every device and calls nvmlShutdown before returning;
// it never initializes CUDA. Safe for concurrent use; keeps no state.
func NVML(opts ...Option) (r Report) {
	r.Source = SourceNVML
	defer guard(&r)
	c := newConfig(opts)
	lib := c.open(nvmlLib, &r)
	if lib == nil {
		return r
	}
	var s nvmlSyms
	if err := resolve(lib, s.table()); err != nil {
		r.Err = err
		r.Reason = err.Error() + "; update the NVIDIA driver or point " + NVMLEnvVar + " at its libnvidia-ml.so.1"
		return r
	}
	s.initName = "nvmlInit_v2"
	if a, err := lib.Sym("nvmlInit_v2"); err != nil || a != s.init {
		s.initName = "nvmlInit"
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if code := call(s.init); code != nvmlSuccess {
		e := s.err(s.initName, code)
		r.Err = fmt.Errorf("%w: %w", ErrInit, e)
		r.Reason = nvmlInitReason(e)
		c.log.Debug("presence: nvml init failed", zap.Error(e))
		return r
	}
	defer func() {
		if code := call(s.shutdown); code != nvmlSuccess {
			r.Notes = append(r.Notes, s.err("nvmlShutdown", code).Error())
		}
	}()

	var buf [96]byte
	if code := call(s.driverVersion, uintptr(unsafe.Pointer(&buf[0])), 80); code == nvmlSuccess {
		r.DriverVersion = cString(buf[:])
	} else {
		r.Notes = append(r.Notes, s.err("nvmlSystemGetDriverVersion", code).Error())
	}
	if s.cudaVersion != 0 {
		var v int32
		if code := call(s.cudaVersion, uintptr(unsafe.Pointer(&v))); code == nvmlSuccess {
			r.CUDAVersion = int(v)
		} else {
			r.Notes = append(r.Notes, s.err("nvmlSystemGetCudaDriverVersion", code).Error())
		}
	}

	var n uint32
	if code := call(s.count, uintptr(unsafe.Pointer(&n))); code != nvmlSuccess {
		e := s.err("nvmlDeviceGetCount", code)
		r.Err = fmt.Errorf("%w: %w", ErrQuery, e)
		r.Reason = e.Error()
		return r
	}
	all := make([]Device, 0, n)
	for i := range int(n) {
		d, err := s.device(i, &r.Notes)
		if err != nil {
			r.Err = fmt.Errorf("%w: %w", ErrQuery, err)
			r.Reason = err.Error()
			return r
		}
		all = append(all, d)
	}
	r.Total = len(all)
	value, set := c.lookupEnv(CUDAVisibleEnv)
	r.Visibility = visibility(CUDAVisibleEnv, value, set)
	devs, err := Visible(all, value, set)
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("NVML sees %d device%s, but %s cannot be resolved without CUDA: %v; use FLAGOS_PROBE=isolated", r.Total, plural(r.Total), r.Visibility, err)
		return r
	}
	r.Devices = devs
	r.Reason = countReason("NVML", r.Total, len(devs), r.Visibility)
	c.log.Debug("presence: nvml", zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// device reads one device; only a missing handle is an error, the rest of
// what does not answer becomes a note.
func (s *nvmlSyms) device(i int, notes *[]string) (Device, error) {
	d := Device{Index: i, SourceIndex: i}
	var h uintptr
	if code := call(s.handle, uintptr(i), uintptr(unsafe.Pointer(&h))); code != nvmlSuccess {
		return d, s.err(fmt.Sprintf("nvmlDeviceGetHandleByIndex(%d)", i), code)
	}
	note := func(fn string, code int) {
		*notes = append(*notes, fmt.Sprintf("device %d: %v", i, s.err(fn, code)))
	}
	var buf [96]byte
	if code := call(s.name, h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); code == nvmlSuccess {
		d.Name = cString(buf[:])
	} else {
		note("nvmlDeviceGetName", code)
	}
	buf = [96]byte{}
	if code := call(s.uuid, h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); code == nvmlSuccess {
		d.UUID = cString(buf[:])
	} else {
		note("nvmlDeviceGetUUID", code)
	}
	var m nvmlMemory
	if code := call(s.memory, h, uintptr(unsafe.Pointer(&m))); code == nvmlSuccess {
		d.TotalMemory, d.FreeMemory = m.total, m.free
	} else {
		note("nvmlDeviceGetMemoryInfo", code)
	}
	if s.computeCapability != 0 {
		var major, minor int32
		if code := call(s.computeCapability, h, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); code == nvmlSuccess {
			d.Major, d.Minor = int(major), int(minor)
		} else {
			note("nvmlDeviceGetCudaComputeCapability", code)
		}
	}
	if s.pciV3 != 0 {
		var p nvmlPciInfo
		if code := call(s.pciV3, h, uintptr(unsafe.Pointer(&p))); code == nvmlSuccess {
			d.PCIBusID = cString(p.busID[:])
		} else {
			note("nvmlDeviceGetPciInfo_v3", code)
		}
	}
	return d, nil
}

// nvmlInitReason is the sentence for a failed nvmlInit: what it means for
// the user and what to do.
func nvmlInitReason(e *Error) string {
	switch e.Code {
	case nvmlDriverNotLoaded:
		return fmt.Sprintf("NVML: the NVIDIA kernel driver is not loaded (%s): no NVIDIA GPU is usable here", e.Name)
	case nvmlNoPermission:
		return fmt.Sprintf("NVML: no permission to the NVIDIA device nodes (%s): give this user access to /dev/nvidia* or start the container with the GPUs", e.Name)
	case nvmlRMMismatch:
		return fmt.Sprintf("NVML: libnvidia-ml and the loaded kernel module are different driver versions (%s): reboot, or reload the nvidia module", e.Name)
	}
	return e.Error()
}
