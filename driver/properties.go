package driver

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// Properties describes device index (-1: the current device): name, total
// memory, compute capability, multiprocessors and, where the library can
// say, the UUID in the vendor's form ("GPU-…" for NVIDIA).
//
// What a vendor's API cannot tell is left unknown (0) rather than failing
// the device: the total memory of a vendor that names no OpDeviceTotalMem
// is OpMemGetInfo's total with the device's context current (which creates
// the context), or 0 where it has neither; an attribute the library
// answers with a code matching device.ErrNotSupported is 0 (a vendor whose
// attribute numbers are not known says so through its OpDeviceAttribute
// adapter).
func (b *Backend) Properties(index int) (device.Properties, error) {
	if f := b.facts(); f != nil {
		i, err := b.factsDevice(f, index)
		if err != nil {
			return device.Properties{}, err
		}
		return f.Devices[i], nil
	}
	s, d, err := b.device(index)
	if err != nil {
		return device.Properties{}, err
	}
	a := s.api
	p := device.Properties{Vendor: b.exactIdentity(s).byDevice[d.ordinal]}
	if p.Name, err = a.deviceName(d); err != nil {
		return p, s.opErr(OpDeviceName, d, err)
	}
	if p.TotalMemory, err = s.totalMem(d); err != nil {
		return p, err
	}
	at := b.v.Attributes
	for _, x := range []struct {
		attr int
		dst  *int
	}{
		{at.ComputeCapabilityMajor, &p.Major},
		{at.ComputeCapabilityMinor, &p.Minor},
		{at.MultiprocessorCount, &p.MultiProcessors},
	} {
		if x.attr < 0 {
			continue // the vendor has no such attribute: unknown, 0
		}
		if *x.dst, err = a.deviceAttribute(x.attr, d); err != nil {
			if errors.Is(err, device.ErrNotSupported) {
				*x.dst = 0 // unknown
				continue
			}
			return p, s.opErr(OpDeviceAttribute, d, fmt.Errorf("attribute %d: %w", x.attr, err))
		}
		if *x.dst < 0 {
			*x.dst = 0 // no count or capability is negative: unknown
		}
	}
	if a.has(OpDeviceUUID) {
		u, err := a.deviceUUID(d)
		switch {
		case err == nil:
			p.UUID = b.v.FormatUUID(u) // "" when the bytes hold no UUID: unknown
		case errors.Is(err, device.ErrNotSupported):
			// The function is there but this device cannot tell
			// (AscendCL's aclrtDeviceGetUuid on some chips): no UUID.
		default:
			return p, s.opErr(OpDeviceUUID, d, err)
		}
	}
	return p, nil
}

// totalMem is device d's total memory: OpDeviceTotalMem where the library
// has it; else OpMemGetInfo's total with d's context current; else 0
// (unknown).
func (s *state) totalMem(d *devState) (uint64, error) {
	a := s.api
	switch {
	case a.has(OpDeviceTotalMem):
		n, err := a.deviceTotalMem(d)
		if err != nil {
			return 0, s.opErr(OpDeviceTotalMem, d, err)
		}
		return n, nil
	case a.has(OpMemGetInfo):
		if err := s.enterDev(d); err != nil {
			return 0, err
		}
		_, total, err := a.memGetInfo()
		leave()
		if err != nil {
			return 0, s.opErr(OpMemGetInfo, d, err)
		}
		return total, nil
	}
	return 0, nil
}

// FormatUUID writes 16 bytes the way nvidia-smi does, after prefix:
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
func FormatUUID(prefix string, u [16]byte) string {
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// UUIDForm is what a vendor's device-UUID function writes into its 16
// bytes.
type UUIDForm int

const (
	// UUIDBinary: the UUID's 16 bytes (CUDA's CUuuid), written as
	// nvidia-smi writes them (FormatUUID).
	UUIDBinary UUIDForm = iota
	// UUIDHexText: the 16 hexadecimal digits of the UUID's body as
	// characters, without a NUL, as ROCm's hipDeviceGetUuid fills them:
	// ROCr gives an agent's UUID as the string "GPU-" and 16 hex digits
	// (hsa_ext_amd.h, HSA_AMD_AGENT_INFO_UUID; "GPU-XX" for an agent
	// without one), clr keeps the 16 characters after "GPU-"
	// (ROCm/clr @0053584a rocclr/device/rocm/rocdevice.cpp,
	// populateOCLDeviceConstants) and hipDeviceGetUuid strncpy's them into
	// the bytes (hipamd/src/hip_device_runtime.cpp); llama.cpp's ggml-cuda
	// reads them back the same way (ggml-org/llama.cpp
	// ggml/src/ggml-cuda/ggml-cuda.cu: stoull of the 16 bytes, base 16,
	// then "GPU-%016llx"). Written after the prefix in lower case, as the
	// KFD topology's unique_id gives the same device ("GPU-%016x").
	UUIDHexText
)

// FormatUUID writes a device-UUID function's 16 bytes in the vendor's
// form (UUIDForm), after its UUIDPrefix. "" when they hold no UUID: a
// UUIDHexText whose bytes are not 16 hex digits ("XX", ROCr's answer for
// an agent without a UUID) or are all zero.
func (v *Vendor) FormatUUID(u [16]byte) string {
	if v.UUIDForm != UUIDHexText {
		return FormatUUID(v.UUIDPrefix, u)
	}
	n, err := strconv.ParseUint(string(u[:]), 16, 64)
	if err != nil || n == 0 {
		return ""
	}
	return fmt.Sprintf("%s%016x", v.UUIDPrefix, n)
}

// DriverVersion is the driver's version, decoded with the vendor's
// encoding. It needs the library, not a working device: a driver whose init
// failed still answers it.
func (b *Backend) DriverVersion() (major, minor int, err error) {
	if f := b.facts(); f != nil {
		if !b.v.VersionKnown() && f.Tier != tier.Presence {
			return 0, 0, fmt.Errorf("%w: %s: the %s tier gave version %q, a number whose encoding is not known", device.ErrNotSupported, b.v.Type, f.Tier, f.DriverVersion)
		}
		if _, err := fmt.Sscanf(f.DriverVersion, "%d.%d", &major, &minor); err != nil {
			return 0, 0, fmt.Errorf("%w: %s: the %s tier gave no driver version (%s)", device.ErrNotSupported, b.v.Type, f.Tier, f.Result.Reason)
		}
		return major, minor, nil
	}
	s := b.load()
	if s.api == nil || s.version == 0 {
		if s.err != nil {
			return 0, 0, b.unavail(s)
		}
		return 0, 0, fmt.Errorf("%w: %s: %s did not report its version", device.ErrNotSupported, b.v.Type, s.path)
	}
	if !b.v.VersionKnown() {
		return 0, 0, fmt.Errorf("%w: %s: %s reports version %d, a number whose encoding is not known", device.ErrNotSupported, b.v.Type, s.path, s.version)
	}
	major, minor = b.v.DecodeVersion(s.version)
	return major, minor, nil
}

// PCIBusID is the PCI address the driver gives device index
// ("00000000:18:00.0"). A library without the function gives an error
// matching device.ErrNotSupported.
func (b *Backend) PCIBusID(index int) (string, error) {
	if f := b.facts(); f != nil {
		i, err := b.factsDevice(f, index)
		if err != nil {
			return "", err
		}
		if i >= len(f.PCIBusIDs) || f.PCIBusIDs[i] == "" {
			return "", fmt.Errorf("%w: %s: the %s tier did not learn device %d's PCI bus id", device.ErrNotSupported, b.v.Type, f.Tier, i)
		}
		return f.PCIBusIDs[i], nil
	}
	s, d, err := b.device(index)
	if err != nil {
		return "", err
	}
	if !s.api.has(OpDevicePCIBusID) {
		return "", s.lacks("PCI bus ids", OpDevicePCIBusID)
	}
	id, err := s.api.devicePCIBusID(d)
	if err != nil {
		return "", s.opErr(OpDevicePCIBusID, d, err)
	}
	return id, nil
}

// Describe reports the library, the driver version, every load attempt and,
// in Extra: "available", "reason", "devices", the visible-devices variable
// when set, "symbol.<Op>" with the name found for each operation that has
// versions ("symbol.DeviceTotalMem": "cuDeviceTotalMem_v2"), and
// "missing.<feature>" for each feature the library lacks.
func (b *Backend) Describe() device.Info {
	if f := b.facts(); f != nil {
		return b.describeFacts(f)
	}
	return b.describeExact(b.load())
}

func (b *Backend) describeExact(s *state) device.Info {
	info := device.Info{Library: s.path, Extra: map[string]string{"tier": string(tier.Exact)}}
	if s.err == nil {
		id := b.exactIdentity(s)
		info.Vendor, info.VendorFacts = id.maker, id.facts
	}
	if s.version != 0 {
		info.DriverVersion = b.v.FormatVersion(s.version)
	}
	info.Attempts = attempts(s.attempts)
	info.Extra["available"] = strconv.FormatBool(s.err == nil)
	info.Extra["reason"] = s.result.Reason
	if s.count >= 0 {
		info.Extra["devices"] = strconv.Itoa(s.count)
	}
	for _, k := range b.v.VisibleEnv {
		if val := b.o.getenv(k); val != "" {
			info.Extra[k] = val
		}
	}
	if a := s.api; a != nil {
		for op := Op(0); op < numOps; op++ {
			if a.has(op) && len(b.v.Symbols[op]) > 1 {
				info.Extra["symbol."+opNames[op]] = a.sym(op)
			}
		}
		for _, f := range features {
			if !a.has(f.ops...) {
				info.Extra["missing."+f.name] = s.lacks(f.name, f.ops...).Error()
			}
		}
	}
	return info
}

// attempts converts the loader's attempts for the public API.
func attempts(as []clib.Attempt) []device.Attempt { return clib.Attempts(as) }
