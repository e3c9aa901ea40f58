package mlu

// The CNDev binding (Cambricon's management library, libcndev.so, what
// cnmon uses). Prototypes, structs and codes are from cndev.h as
// Cambricon/mlu-exporter vendors it (pkg/cndev/include/cndev.h, the
// CNDEV_VERSION_6 header); the calls and the version field are used the
// same way by mlu-exporter (pkg/cndev/cndev.go) and the k8s device plugin
// (Cambricon/cambricon-k8s-device-plugin device-plugin/pkg/cndev):
//
//	cndevRet_t cndevInit(__int32_t reserved);                                  reserved: 0
//	cndevRet_t cndevRelease(void);
//	cndevRet_t cndevGetDeviceCount(cndevCardInfo_t *cardNum);                  {__int32_t version (IN); __uint32_t number (OUT)}
//	cndevRet_t cndevGetDeviceHandleByIndex(__int32_t index, cndevDevice_t *handle);   cndevDevice_t is __int32_t
//
// and, optional:
//
//	const char *cndevGetErrorString(cndevRet_t errorId);
//	const char *cndevGetCardNameStringByDevId(cndevDevice_t device);
//	cndevRet_t cndevGetUUID(cndevUUID_t *uuidInfo, cndevDevice_t device);      {__int32_t version; __uint8_t uuid[37]; __uint64_t ncsUUID64}: 56 bytes
//	cndevRet_t cndevGetMemoryUsageV2(cndevMemoryInfoV2_t *memInfo, cndevDevice_t device);
//	    {__int64_t physicalMemoryTotal, physicalMemoryUsed, reservedMemory, virtualMemoryTotal,
//	     virtualMemoryUsed; __uint64_t globalMemory; __uint64_t reserved[16]}: MB, no version field, 176 bytes
//	cndevRet_t cndevGetPCIeInfoV2(cndevPCIeInfoV2_t *deviceInfo, cndevDevice_t device);
//	    {__uint32_t subsystemId, deviceId; __uint16_t vendor, subsystemVendor; __uint32_t domain,
//	     bus, device, function; __uint16_t moduleId, slotId; __uint32_t reserved[8]}: 64 bytes
//	cndevRet_t cndevGetDriverVersion(__uint32_t *majorVersion, __uint32_t *minorVersion, __uint32_t *buildVersion);
//
// The header's __uint64_t and __int64_t are long on LP64 Linux: 8 bytes.
// Structs with a version field get CNDEV_VERSION_6 (6), as mlu-exporter
// sets. A device's UUID is written "MLU-" + CNDev's UUID string, as the
// k8s device plugin writes it (pkg/cndev/bindings.go); the exact tier reads
// the same string through cnDeviceGetUuidStr (adapters.go). CNDev talks to the kernel driver through /dev/cambricon_ctl;
// cndevInit initializes no CNDrv context.

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// CNDevEnvVar overrides the search for libcndev.so with an absolute path.
const CNDevEnvVar = "FLAGOS_LIBCNDEV_PATH"

// SourceCNDev is the presence Report.Source of CNDev's answer.
const SourceCNDev = "cndev"

// CNDevLibrary is where CNDev is looked for: Neuware's folder (the k8s
// plugin's build_image.sh copies /usr/local/neuware/lib64/libcndev.so),
// then where the driver package installs it on the host (the k8s plugin
// probes /usr/lib/<multiarch>/libcndev.so and /usr/lib64/libcndev.so,
// pkg/cndev/bindings.go).
var CNDevLibrary = clib.Library{
	Name:    "libcndev",
	EnvVar:  CNDevEnvVar,
	Sonames: []string{"libcndev.so"},
	Dirs:    []string{"/usr/local/neuware/lib64", clib.MultiarchLibDir, "/usr/lib64"},
}

// cndevVersion6 is CNDEV_VERSION_6, the API version set in the structs'
// version field.
const cndevVersion6 = 6

type cndevSyms struct {
	init, release, count, handle         clib.Func
	errorString, name, uuid, memory, pci clib.Func
	driverVersion                        clib.Func
}

func (s *cndevSyms) table() []clib.Sym {
	return []clib.Sym{
		{Fn: &s.init, Names: []string{"cndevInit"}, Required: true, Sig: "i"},
		{Fn: &s.release, Names: []string{"cndevRelease"}, Required: true},
		{Fn: &s.count, Names: []string{"cndevGetDeviceCount"}, Required: true, Sig: "p"},
		{Fn: &s.handle, Names: []string{"cndevGetDeviceHandleByIndex"}, Required: true, Sig: "ip"},
		{Fn: &s.errorString, Names: []string{"cndevGetErrorString"}, Sig: "i"},
		{Fn: &s.name, Names: []string{"cndevGetCardNameStringByDevId"}, Sig: "i"},
		{Fn: &s.uuid, Names: []string{"cndevGetUUID"}, Sig: "pi"},
		{Fn: &s.memory, Names: []string{"cndevGetMemoryUsageV2"}, Sig: "pi"},
		{Fn: &s.pci, Names: []string{"cndevGetPCIeInfoV2"}, Sig: "pi"},
		{Fn: &s.driverVersion, Names: []string{"cndevGetDriverVersion"}, Sig: "ppp"},
	}
}

type cndevCardInfo struct {
	version int32
	number  uint32
}

// The structs hold only the fields read; the others are blank, in place.

type cndevUUID struct {
	version int32
	uuid    [37]byte // CNDEV_UUID_SIZE
	_       uint64   // ncsUUID64, at 48: Go pads as C does
}

type cndevMemoryInfoV2 struct {
	physicalMemoryTotal, physicalMemoryUsed int64      // MB
	_                                       [20]uint64 // reservedMemory, virtualMemoryTotal/Used, globalMemory, reserved[16]
}

type cndevPCIeInfoV2 struct {
	_                             [12]byte // subsystemId, deviceId, vendor, subsystemVendor
	domain, bus, device, function uint32
	_                             [36]byte // moduleId, slotId, reserved[8]
}

// CNDev asks Cambricon's management library which MLUs are here, then
// applies CN_VISIBLE_DEVICES or MLU_VISIBLE_DEVICES as Cambricon's runtime
// reads them (Visibility). It opens
// libcndev.so (FLAGOS_LIBCNDEV_PATH overrides the search), calls cndevInit,
// reads every device and calls cndevRelease before returning (under
// presence.WithoutShutdown, the process's exit or the library's next query
// does); it never initializes CNDrv (cnInit). A count above
// device.MaxDevices is refused before anything is allocated for it. Safe for
// concurrent use; keeps no state.
func CNDev(e *presence.Env) presence.Report {
	var s cndevSyms
	c := &clib.Codes{Library: "CNDev", Names: cndevRetNames, Message: presence.ErrorString(&s.errorString)}
	return presence.Query(e, presence.Management{
		Source: SourceCNDev, Library: CNDevLibrary, Symbols: s.table(), Codes: c,
		Ships:      "the Cambricon driver",
		Init:       func() error { return c.Check("cndevInit", s.init.CallCode(0)) },
		InitReason: cndevInitReason,
		Shutdown:   func() error { return c.Check("cndevRelease", s.release.CallCode()) },
		Version:    func(r *presence.Report, note func(error) bool) { r.DriverVersion = s.version(c, note) },
		Count: func() (uint64, string, error) {
			info := cndevCardInfo{version: cndevVersion6}
			err := c.Check("cndevGetDeviceCount", s.count.CallCode(uintptr(unsafe.Pointer(&info))))
			return uint64(info.number), "cndevGetDeviceCount", err
		},
		Device: func(i int, d *presence.Device, note func(error) bool) error { return s.device(c, i, d, note) },
		Rules:  Visibility,
	})
}

// version is the driver's "major.minor.build"; "" unknown.
func (s *cndevSyms) version(c *clib.Codes, note func(error) bool) string {
	var major, minor, build uint32
	if !s.driverVersion.OK() || !note(c.Check("cndevGetDriverVersion", s.driverVersion.CallCode(uintptr(unsafe.Pointer(&major)),
		uintptr(unsafe.Pointer(&minor)), uintptr(unsafe.Pointer(&build))))) {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", major, minor, build)
}

// device reads device i; what an optional function cannot say is noted.
func (s *cndevSyms) device(c *clib.Codes, i int, d *presence.Device, note func(error) bool) error {
	var h int32
	if err := c.Check(fmt.Sprintf("cndevGetDeviceHandleByIndex(%d)", i), s.handle.CallCode(uintptr(uint32(int32(i))), uintptr(unsafe.Pointer(&h)))); err != nil {
		return err
	}
	dev := uintptr(uint32(h))
	if s.name.OK() {
		d.Name = clib.GoString(s.name.Call(dev), 256)
	}
	if s.uuid.OK() {
		u := cndevUUID{version: cndevVersion6}
		if note(c.Check("cndevGetUUID", s.uuid.CallCode(uintptr(unsafe.Pointer(&u)), dev))) {
			if id := clib.CString(u.uuid[:]); id != "" {
				d.UUID = "MLU-" + id
			}
		}
	}
	if s.pci.OK() {
		var p cndevPCIeInfoV2
		if note(c.Check("cndevGetPCIeInfoV2", s.pci.CallCode(uintptr(unsafe.Pointer(&p)), dev))) {
			d.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", p.domain, p.bus, p.device, p.function)
		}
	}
	if s.memory.OK() {
		var m cndevMemoryInfoV2
		if note(c.Check("cndevGetMemoryUsageV2", s.memory.CallCode(uintptr(unsafe.Pointer(&m)), dev))) && m.physicalMemoryTotal > 0 {
			total, err := presence.MB(uint64(m.physicalMemoryTotal), "cndevGetMemoryUsageV2's physicalMemoryTotal")
			if note(err) {
				d.TotalMemory = total
				if used := m.physicalMemoryUsed; used >= 0 && used <= m.physicalMemoryTotal {
					d.FreeMemory, _ = presence.MB(uint64(m.physicalMemoryTotal-used), "") // within the total, which fits
				}
			}
		}
	}
	return nil
}

func cndevInitReason(e *clib.Error) string {
	switch e.Code {
	case cndevNoDriver:
		return fmt.Sprintf("CNDev: the Cambricon MLU driver is not loaded (%s): no MLU is usable here", e.Name)
	case cndevNoDevices:
		return fmt.Sprintf("CNDev: no MLU device is usable (%s): the driver failed to load or the device nodes are not mapped (start the container with /dev/cambricon_dev* and /dev/cambricon_ctl)", e.Name)
	case cndevNoPermission:
		return fmt.Sprintf("CNDev: no permission to the MLU device nodes (%s): give this user access to /dev/cambricon_dev* and /dev/cambricon_ctl", e.Name)
	case cndevLowDriverVersion:
		return fmt.Sprintf("CNDev: the MLU driver is older than this libcndev.so supports (%s): update the driver or use the libcndev.so it came with (%s)", e.Name, CNDevEnvVar)
	}
	return e.Error()
}
