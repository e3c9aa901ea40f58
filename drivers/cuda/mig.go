package cuda

import (
	"fmt"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The nvmlReturn_t codes and constants the MIG calls tell apart (nvml.h).
const (
	nvmlNotSupported = 3
	nvmlNotFound     = 6
	nvmlMIGEnable    = 1 // NVML_DEVICE_MIG_ENABLE
	// maxMIGPerGPU bounds nvmlDeviceGetMaxMigDeviceCount's answer before
	// anything is asked for it: a GPU holds at most 7 MIG instances today
	// (NVIDIA's MIG user guide); more than 64 is a broken library.
	maxMIGPerGPU = 64
)

// migDevices are the MIG instances of device i (d, read already), as
// partitions: what CUDA_VISIBLE_DEVICES=MIG-<UUID> names. It marks d
// Partitioned when MIG mode is on, and PartitionsListed when NVML told
// whether it has instances and listed them all; it changes no mode.
func (s *nvmlSyms) migDevices(c *clib.Codes, i int, d *presence.Device, note func(error) bool) []presence.Device {
	if !s.migMode.OK() || !s.maxMig.OK() || !s.migHandle.OK() {
		return nil // an NVML without MIG: nothing known of partitions
	}
	var h uintptr
	if !note(c.Check(fmt.Sprintf("%s(%d)", s.handle.Name(), i), s.handle.CallCode(uintptr(i), uintptr(unsafe.Pointer(&h))))) {
		return nil
	}
	var cur, pending uint32
	switch r := s.migMode.CallCode(h, uintptr(unsafe.Pointer(&cur)), uintptr(unsafe.Pointer(&pending))); {
	case r == nvmlNotSupported:
		d.PartitionsListed = true // no MIG on this GPU: no partition
		return nil
	case !note(c.Check("nvmlDeviceGetMigMode", r)):
		return nil
	}
	if cur != nvmlMIGEnable {
		d.PartitionsListed = true
		return nil
	}
	d.Partitioned = true
	if d.UUID == "" {
		note(fmt.Errorf("in MIG mode without a UUID: its MIG instances cannot be told apart from GPUs"))
		return nil
	}
	var n uint32
	if !note(c.Check("nvmlDeviceGetMaxMigDeviceCount", s.maxMig.CallCode(h, uintptr(unsafe.Pointer(&n))))) {
		return nil
	}
	if n > maxMIGPerGPU {
		note(fmt.Errorf("nvmlDeviceGetMaxMigDeviceCount answered %d, more than %d: MIG instances not listed", n, maxMIGPerGPU))
		return nil
	}
	var out []presence.Device
	listed := true
	for k := range n {
		var mh uintptr
		r := s.migHandle.CallCode(h, uintptr(k), uintptr(unsafe.Pointer(&mh)))
		if r == nvmlNotFound {
			continue // no instance at this index
		}
		if !note(c.Check(fmt.Sprintf("nvmlDeviceGetMigDeviceHandleByIndex(%d)", k), r)) {
			listed = false
			continue
		}
		p := presence.Device{Parent: d.UUID, PCIBusID: d.PCIBusID, Major: d.Major, Minor: d.Minor}
		var buf [96]byte // NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE
		if !note(c.Check(fmt.Sprintf("nvmlDeviceGetUUID(MIG %d)", k), s.uuid.CallCode(mh, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
			listed = false
			continue
		}
		p.UUID = clib.CString(buf[:])
		buf = [96]byte{}
		if note(c.Check(fmt.Sprintf("nvmlDeviceGetName(MIG %d)", k), s.name.CallCode(mh, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))))) {
			p.Name = clib.CString(buf[:])
		}
		s.memoryOf(c, mh, fmt.Sprintf("(MIG %d)", k), &p, note)
		out = append(out, p)
	}
	d.PartitionsListed = listed
	return out
}
