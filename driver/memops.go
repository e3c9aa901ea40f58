package driver

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// The device-level operations of device.MemoryOps, device.IPC,
// device.PCIDevices and device.DMABuf. Each is optional: a library without
// its function answers an error matching device.ErrNotSupported that names
// the function (ops.go lists them, the vendor packages cite each name).

var (
	_ device.MemoryOps  = (*Backend)(nil)
	_ device.IPC        = (*Backend)(nil)
	_ device.PCIDevices = (*Backend)(nil)
	_ device.DMABuf     = (*Backend)(nil)
)

// onDevice runs f with device index current on a locked thread; what
// names the feature for ready's error, ops the operations it needs.
func (b *Backend) onDevice(index int, what string, ops []Op, f func(s *state, d *devState) error) error {
	if _, err := b.ready(what, ops...); err != nil {
		return err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return err
	}
	err = f(s, d)
	leave()
	return err
}

// Memset sets count elements of width bytes (1, 2, 4) from p to value
// (cuMemsetD8_v2, cuMemsetD16_v2, cuMemsetD32_v2).
func (b *Backend) Memset(index int, p device.Ptr, value uint32, width int, count uint64) error {
	if err := device.CheckMemset(value, width); err != nil {
		return fmt.Errorf("%s: %w", b.v.Type, err)
	}
	op := memsetOp(width, false)
	return b.onDevice(index, "memset", []Op{op}, func(s *state, d *devState) error {
		if err := s.sizeErr(op, count); err != nil {
			return err
		}
		if count == 0 {
			return nil
		}
		if err := s.api.memset(uint64(p), value, width, count); err != nil {
			return fmt.Errorf("%s(device %d, %#x, %#x, %d): %w", s.api.sym(op), d.ordinal, uint64(p), value, count, err)
		}
		return nil
	})
}

// CopyDtoD copies size bytes from src to dst in device memory
// (cuMemcpyDtoD_v2).
func (b *Backend) CopyDtoD(index int, dst, src device.Ptr, size uint64) error {
	return b.onDevice(index, "device-to-device copies", []Op{OpMemcpyDtoD}, func(s *state, d *devState) error {
		if err := s.sizeErr(OpMemcpyDtoD, size); err != nil {
			return err
		}
		if size == 0 {
			return nil
		}
		if err := s.api.memcpyDtoD(uint64(dst), uint64(src), size); err != nil {
			return fmt.Errorf("%s(device %d, %#x <- %#x, %d bytes): %w", s.api.sym(OpMemcpyDtoD), d.ordinal, uint64(dst), uint64(src), size, err)
		}
		return nil
	})
}

// AllocManaged allocates size bytes of managed memory, attached globally
// (cuMemAllocManaged with CU_MEM_ATTACH_GLOBAL). Free releases it.
func (b *Backend) AllocManaged(index int, size uint64) (device.Ptr, error) {
	var p uint64
	err := b.onDevice(index, "managed memory", []Op{OpMemAllocManaged}, func(s *state, d *devState) error {
		var err error
		if p, err = s.api.memAllocManaged(size); err != nil {
			return fmt.Errorf("%s(device %d, %d bytes): %w", s.api.sym(OpMemAllocManaged), d.ordinal, size, err)
		}
		return nil
	})
	return device.Ptr(p), err
}

// HostDevicePointer is the device address of pinned host memory at host
// (cuMemHostGetDevicePointer_v2). AllocHost's buffers are mapped where the
// driver maps pinned memory (every 64-bit CUDA and HIP system).
func (b *Backend) HostDevicePointer(index int, host uintptr) (device.Ptr, error) {
	if host == 0 {
		return 0, fmt.Errorf("%w: %s: HostDevicePointer of a NULL host address", device.ErrInvalidValue, b.v.Type)
	}
	var p uint64
	err := b.onDevice(index, "mapped host memory", []Op{OpMemHostGetDevicePtr}, func(s *state, d *devState) error {
		var err error
		if p, err = s.api.memHostGetDevicePtr(host); err != nil {
			return fmt.Errorf("%s(device %d, host %#x): %w", s.api.sym(OpMemHostGetDevicePtr), d.ordinal, host, err)
		}
		return nil
	})
	return device.Ptr(p), err
}

// IPCHandle is the IPC handle of the allocation holding p
// (cuIpcGetMemHandle).
func (b *Backend) IPCHandle(index int, p device.Ptr) (device.IPCHandle, error) {
	var h device.IPCHandle
	err := b.onDevice(index, "IPC memory handles", ipcOps, func(s *state, d *devState) error {
		raw, err := s.api.ipcGetMemHandle(uint64(p))
		if err != nil {
			return fmt.Errorf("%s(device %d, %#x): %w", s.api.sym(OpIpcGetMemHandle), d.ordinal, uint64(p), err)
		}
		h = raw
		return nil
	})
	return h, err
}

// OpenIPCHandle maps the memory h names on device index
// (cuIpcOpenMemHandle_v2 with lazy peer access).
func (b *Backend) OpenIPCHandle(index int, h device.IPCHandle) (device.Ptr, error) {
	var p uint64
	err := b.onDevice(index, "IPC memory handles", ipcOps, func(s *state, d *devState) error {
		raw := [64]byte(h)
		var err error
		if p, err = s.api.ipcOpenMemHandle(&raw); err != nil {
			return fmt.Errorf("%s(device %d): %w", s.api.sym(OpIpcOpenMemHandle), d.ordinal, err)
		}
		return nil
	})
	return device.Ptr(p), err
}

// CloseIPCHandle unmaps memory OpenIPCHandle mapped (cuIpcCloseMemHandle).
func (b *Backend) CloseIPCHandle(index int, p device.Ptr) error {
	return b.onDevice(index, "IPC memory handles", ipcOps, func(s *state, d *devState) error {
		if err := s.api.ipcCloseMemHandle(uint64(p)); err != nil {
			return fmt.Errorf("%s(device %d, %#x): %w", s.api.sym(OpIpcCloseMemHandle), d.ordinal, uint64(p), err)
		}
		return nil
	})
}

// maxBusID bounds a PCI bus id a caller gives ("00000000:18:00.0" is 16
// bytes; a generous bound, so a caller's garbage is refused before the
// driver sees it).
const maxBusID = 64

// DeviceByPCIBusID is the index of the device at busID
// (cuDeviceGetByPCIBusId). A bus id of no device here is an error
// matching device.ErrNotFound (or the driver's invalid-value error).
func (b *Backend) DeviceByPCIBusID(busID string) (int, error) {
	s, err := b.ready("PCI bus id lookup", OpDeviceByPCIBusID)
	if err != nil {
		return -1, err
	}
	if len(busID) > maxBusID {
		return -1, fmt.Errorf("%w: %s: a PCI bus id of %d bytes (at most %d)", device.ErrInvalidValue, b.v.Type, len(busID), maxBusID)
	}
	id, err := cName("PCI bus id", busID)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", b.v.Type, err)
	}
	dev, err := s.api.deviceByPCIBusID(id)
	if err != nil {
		return -1, fmt.Errorf("%s(%q): %w", s.api.sym(OpDeviceByPCIBusID), busID, err)
	}
	ordinal := s.v.takesOrdinal(OpDeviceByPCIBusID)
	for i := range s.devs {
		if (ordinal && uint64(s.devs[i].ordinal) == dev) || (!ordinal && s.devs[i].handle == dev) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: %s: %s(%q) gave device %d, which is none of the %d devices this process sees",
		device.ErrNotFound, b.v.Type, s.api.sym(OpDeviceByPCIBusID), busID, dev, len(s.devs))
}

// DMABufSupported asks the device's dma-buf attribute
// (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED). A vendor without the attribute
// or the export function answers an error matching device.ErrNotSupported.
func (b *Backend) DMABufSupported(index int) (bool, error) {
	s, d, err := b.device(index)
	if err != nil {
		return false, err
	}
	if b.v.Attributes.DMABufSupported == 0 {
		return false, fmt.Errorf("%w: %s: flagshim knows no dma-buf attribute of this API", device.ErrNotSupported, b.v.Type)
	}
	if !s.api.has(OpMemGetHandleForRange) {
		return false, s.lacks("DMA-buf", OpMemGetHandleForRange)
	}
	v, err := s.api.deviceAttribute(b.v.Attributes.DMABufSupported, d)
	if err != nil {
		return false, s.opErr(OpDeviceAttribute, d, err)
	}
	return v != 0, nil
}

// DMABufFD exports [p, p+size) of device memory as a new dma-buf
// descriptor (cuMemGetHandleForAddressRange with
// CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD); the caller closes it.
func (b *Backend) DMABufFD(index int, p device.Ptr, size uint64) (int, error) {
	return b.DMABufFDWith(index, p, size, 0)
}

// DMABufFDWith is DMABufFD with the driver's flags
// (CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE 1 asks for a mapping
// through PCIe rather than the GPU's own fabric), for C hosts that pass
// them on.
func (b *Backend) DMABufFDWith(index int, p device.Ptr, size, flags uint64) (int, error) {
	fd := -1
	err := b.onDevice(index, "DMA-buf", []Op{OpMemGetHandleForRange}, func(s *state, d *devState) error {
		var err error
		if fd, err = s.api.memGetDMABufFD(uint64(p), size, flags); err != nil {
			return fmt.Errorf("%s(device %d, %#x, %d bytes, DMA_BUF_FD): %w", s.api.sym(OpMemGetHandleForRange), d.ordinal, uint64(p), size, err)
		}
		if fd < 0 {
			return fmt.Errorf("%s: %s succeeded and gave no descriptor (%d)", b.v.Type, s.api.sym(OpMemGetHandleForRange), fd)
		}
		return nil
	})
	return fd, err
}
