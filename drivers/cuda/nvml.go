package cuda

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
//	nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
//	    nvmlMemory_v2_t {unsigned int version; unsigned long long total, reserved, free, used}:
//	    40 bytes (total at offset 8); version "must be 2": nvmlMemory_v2 =
//	    NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | 2 << 24 = 0x02000028
//
// Memory (nvml.h's comments): v1's total is the "Total physical device
// memory" and its used the "Sum of Reserved and Allocated device memory";
// v2 "accounts separately for reserved memory": reserved is the "Device
// memory (in bytes) reserved for system use (driver or firmware)", used
// the "Allocated device memory", total the same physical total. nvidia-smi
// prints v2's total, reserved, used and free as memory.total,
// memory.reserved, memory.used and memory.free; the CUDA driver's
// cuDeviceTotalMem (torch's total_memory) is total - reserved (on an H100
// 80GB HBM3 with driver 580.159.04: NVML's total 85520809984 bytes,
// reserved 503316480, cuDeviceTotalMem 85017493504). A device's
// presence.Device.TotalMemory is therefore v2's total - reserved, the
// runtime's total, with ReservedMemory beside it. nvmlDeviceGetMemoryInfo_v2
// is first in go-nvml's nvml.h with its NVML 11.6 sync (commit 7dd9b38):
// an older NVML may lack it, and then v1's total is given, the reserve
// unknown.
//
// and, for MIG (Multi-Instance GPU; "For Ampere or newer fully supported
// devices. Supported on Linux only"), optional as a set:
//
//	nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode);
//	    NVML_DEVICE_MIG_DISABLE 0x0, NVML_DEVICE_MIG_ENABLE 0x1; NVML_ERROR_NOT_SUPPORTED "if device doesn't support MIG mode"
//	nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);          "Returns zero if MIG is not supported or enabled"
//	nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice);
//	    NVML_ERROR_NOT_FOUND "if no valid MIG device was found at index"
//
// nvmlDeviceGetUUID, nvmlDeviceGetName and nvmlDeviceGetMemoryInfo take a
// MIG device handle as well ("When used with MIG device handles the API
// returns globally unique UUIDs": MIG-<UUID>, what CUDA_VISIBLE_DEVICES
// takes).
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
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// NVMLEnvVar overrides the search for libnvidia-ml.so.1 with an absolute
// path.
const NVMLEnvVar = "FLAGOS_LIBNVML_PATH"

// SourceNVML is the presence Report.Source of NVML's answer.
const SourceNVML = "nvml"

// nvmlLibrary is where NVML is looked for.
var nvmlLibrary = clib.Library{
	Name:    "libnvidia-ml",
	EnvVar:  NVMLEnvVar,
	Sonames: []string{"libnvidia-ml.so.1"},
	Dirs:    []string{"/usr/local/nvidia/lib64", clib.MultiarchLibDir, "/usr/lib64", "/usr/lib/wsl/lib"},
}

type nvmlSyms struct {
	init, shutdown, errorString           clib.Func
	count, handle, name, uuid, memory     clib.Func
	driverVersion                         clib.Func
	computeCapability, cudaVersion, pciV3 clib.Func
	memoryV2                              clib.Func
	migMode, maxMig, migHandle            clib.Func
}

func (s *nvmlSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"nvmlInit_v2", "nvmlInit"}, Required: true},
		{Fn: &s.shutdown, Names: []string{"nvmlShutdown"}, Required: true},
		{Fn: &s.errorString, Names: []string{"nvmlErrorString"}, Required: true, Sig: "i"},
		{Fn: &s.count, Names: []string{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, Required: true, Sig: "p"},
		{Fn: &s.handle, Names: []string{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, Required: true, Sig: "up"},
		{Fn: &s.name, Names: []string{"nvmlDeviceGetName"}, Required: true, Sig: "hpu"},
		{Fn: &s.uuid, Names: []string{"nvmlDeviceGetUUID"}, Required: true, Sig: "hpu"},
		{Fn: &s.memory, Names: []string{"nvmlDeviceGetMemoryInfo"}, Required: true, Sig: "hp"},
		{Fn: &s.driverVersion, Names: []string{"nvmlSystemGetDriverVersion"}, Required: true, Sig: "pu"},
		{Fn: &s.computeCapability, Names: []string{"nvmlDeviceGetCudaComputeCapability"}, Sig: "hpp"},
		{Fn: &s.cudaVersion, Names: []string{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}, Sig: "p"},
		{Fn: &s.pciV3, Names: []string{"nvmlDeviceGetPciInfo_v3"}, Sig: "hp"},
		{Fn: &s.memoryV2, Names: []string{"nvmlDeviceGetMemoryInfo_v2"}, Sig: "hp"},
		{Fn: &s.migMode, Names: []string{"nvmlDeviceGetMigMode"}, Sig: "hpp"},
		{Fn: &s.maxMig, Names: []string{"nvmlDeviceGetMaxMigDeviceCount"}, Sig: "hp"},
		{Fn: &s.migHandle, Names: []string{"nvmlDeviceGetMigDeviceHandleByIndex"}, Sig: "hup"},
	}
}

type nvmlMemory struct{ total, free, used uint64 }

// nvmlMemoryV2 is nvmlMemory_v2_t: the version, then (8-aligned) the four
// amounts.
type nvmlMemoryV2 struct {
	version                     uint32
	_                           uint32
	total, reserved, free, used uint64
}

// nvmlMemoryV2Version is nvml.h's nvmlMemory_v2:
// NVML_STRUCT_VERSION(Memory, 2), sizeof(nvmlMemory_v2_t) | 2 << 24.
const nvmlMemoryV2Version = uint32(unsafe.Sizeof(nvmlMemoryV2{})) | 2<<24

type nvmlPciInfo struct {
	busIDLegacy                                    [16]byte
	domain, bus, device, pciDeviceID, pciSubSystem uint32
	busID                                          [32]byte
}

// NVML asks the NVIDIA Management Library which NVIDIA GPUs are here and
// which MIG instances they hold, then applies CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER as the CUDA runtime would (Visibility). It opens libnvidia-ml.so.1 (FLAGOS_LIBNVML_PATH
// overrides the search), calls nvmlInit_v2, reads every device and calls
// nvmlShutdown before returning (under presence.WithoutShutdown, the
// process's exit or the library's next query does); it never initializes
// CUDA. A count above device.MaxDevices is refused before anything is
// allocated for it. Safe for concurrent use; keeps no state.
func NVML(e *presence.Env) presence.Report {
	var s nvmlSyms
	c := &clib.Codes{Library: "NVML", Names: nvmlReturnNames, Message: presence.ErrorString(&s.errorString)}
	return presence.Query(e, presence.Management{
		Source: SourceNVML, Library: nvmlLibrary, Symbols: s.table(), Codes: c,
		Ships:      "the NVIDIA driver",
		Init:       func() error { return c.Check(s.init.Name(), s.init.CallCode()) },
		InitReason: nvmlInitReason,
		Shutdown:   func() error { return c.Check("nvmlShutdown", s.shutdown.CallCode()) },
		Version:    func(r *presence.Report, note func(error) bool) { s.version(c, r, note) },
		Count: func() (uint64, string, error) {
			var n uint32
			err := c.Check(s.count.Name(), s.count.CallCode(uintptr(unsafe.Pointer(&n))))
			return uint64(n), s.count.Name(), err
		},
		Device: func(i int, d *presence.Device, note func(error) bool) error { return s.device(c, i, d, note) },
		Partitions: func(i int, d *presence.Device, note func(error) bool) []presence.Device {
			return s.migDevices(c, i, d, note)
		},
		Rules: Visibility,
	})
}

// version reads the driver's version and, where NVML tells it, the CUDA
// driver API's.
func (s *nvmlSyms) version(c *clib.Codes, r *presence.Report, note func(error) bool) {
	var buf [96]byte
	if note(c.Check("nvmlSystemGetDriverVersion", s.driverVersion.CallCode(uintptr(unsafe.Pointer(&buf[0])), 80))) {
		r.DriverVersion = clib.CString(buf[:])
	}
	if s.cudaVersion.OK() {
		var v int32
		if note(c.Check(s.cudaVersion.Name(), s.cudaVersion.CallCode(uintptr(unsafe.Pointer(&v))))) {
			r.CUDAVersion = int(v)
		}
	}
}

// device reads device i through its handle.
func (s *nvmlSyms) device(c *clib.Codes, i int, d *presence.Device, note func(error) bool) error {
	var h uintptr
	if err := c.Check(fmt.Sprintf("%s(%d)", s.handle.Name(), i), s.handle.CallCode(uintptr(i), uintptr(unsafe.Pointer(&h)))); err != nil {
		return err
	}
	var buf [96]byte
	if note(c.Check("nvmlDeviceGetName", s.name.CallCode(h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.Name = clib.CString(buf[:])
	}
	buf = [96]byte{}
	if note(c.Check("nvmlDeviceGetUUID", s.uuid.CallCode(h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
		d.UUID = clib.CString(buf[:])
	}
	s.memoryOf(c, h, "", d, note)
	if s.computeCapability.OK() {
		var major, minor int32
		if note(c.Check("nvmlDeviceGetCudaComputeCapability", s.computeCapability.CallCode(h, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))))) {
			d.Major, d.Minor = int(major), int(minor)
		}
	}
	if s.pciV3.OK() {
		var p nvmlPciInfo
		if note(c.Check("nvmlDeviceGetPciInfo_v3", s.pciV3.CallCode(h, uintptr(unsafe.Pointer(&p))))) {
			d.PCIBusID = clib.CString(p.busID[:])
		}
	}
	return nil
}

// memoryOf reads the memory of the device (or MIG instance: what names
// it, " (MIG 2)") behind handle h into d: nvmlDeviceGetMemoryInfo_v2's
// total - reserved as TotalMemory (what the CUDA driver gives as the
// device's total), the reserve apart, and the free memory. Where the _v2
// function is missing or fails, v1's total and free, the reserve unknown
// (a failure is noted).
func (s *nvmlSyms) memoryOf(c *clib.Codes, h uintptr, what string, d *presence.Device, note func(error) bool) {
	if s.memoryV2.OK() {
		m := nvmlMemoryV2{version: nvmlMemoryV2Version}
		err := c.Check("nvmlDeviceGetMemoryInfo_v2"+what, s.memoryV2.CallCode(h, uintptr(unsafe.Pointer(&m))))
		switch {
		case err != nil:
			note(fmt.Errorf("%w; its total is nvmlDeviceGetMemoryInfo's, the reserve unknown", err))
		case m.reserved > m.total:
			note(fmt.Errorf("%w: nvmlDeviceGetMemoryInfo_v2%s answered %d bytes reserved of %d; its total is nvmlDeviceGetMemoryInfo's, the reserve unknown", presence.ErrImplausible, what, m.reserved, m.total))
		default:
			d.TotalMemory, d.FreeMemory = m.total-m.reserved, m.free
			d.ReservedMemory, d.ReservedKnown = m.reserved, true
			return
		}
	}
	var m nvmlMemory
	if note(c.Check("nvmlDeviceGetMemoryInfo"+what, s.memory.CallCode(h, uintptr(unsafe.Pointer(&m))))) {
		d.TotalMemory, d.FreeMemory = m.total, m.free
	}
}

// nvmlInitReason is the sentence for a failed nvmlInit: what it means for
// the user and what to do.
func nvmlInitReason(e *clib.Error) string {
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
