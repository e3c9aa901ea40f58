package flagos

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// The second group of optional capabilities, forwarded as compute.go's
// are: a routed backend without one answers an error matching
// device.ErrNotSupported. Streams and events are the vendor's own values,
// so their operations (device.StreamOps, device.EventQuerier) need no
// forwarding.

var (
	_ device.MemoryOps  = (*Backend)(nil)
	_ device.IPC        = (*Backend)(nil)
	_ device.PCIDevices = (*Backend)(nil)
	_ device.DMABuf     = (*Backend)(nil)
)

// routed returns the route for device index and what of it of is.
func routed[T any](b *Backend, index int, what string, of func(device.Backend) (T, error)) (*route, T, error) {
	var zero T
	r, err := b.check(index)
	if err != nil {
		return nil, zero, err
	}
	x, err := of(r.to)
	if err != nil {
		return nil, zero, r.wrap(what, index, err)
	}
	return r, x, nil
}

// Memset sets device memory of the routed device.
func (b *Backend) Memset(index int, p device.Ptr, value uint32, width int, count uint64) error {
	r, m, err := routed(b, index, "memset", device.MemoryOpsOf)
	if err != nil {
		return err
	}
	if err := m.Memset(index, p, value, width, count); err != nil {
		return r.wrap("memset", index, err)
	}
	return nil
}

// CopyDtoD copies device memory of the routed device.
func (b *Backend) CopyDtoD(index int, dst, src device.Ptr, size uint64) error {
	r, m, err := routed(b, index, "copy device to device", device.MemoryOpsOf)
	if err != nil {
		return err
	}
	if err := m.CopyDtoD(index, dst, src, size); err != nil {
		return r.wrap("copy device to device", index, err)
	}
	return nil
}

// AllocManaged allocates managed memory on the routed device.
func (b *Backend) AllocManaged(index int, size uint64) (device.Ptr, error) {
	r, m, err := routed(b, index, "managed memory", device.MemoryOpsOf)
	if err != nil {
		return 0, err
	}
	p, err := m.AllocManaged(index, size)
	if err != nil {
		return 0, r.wrap(fmt.Sprintf("alloc %d managed bytes", size), index, err)
	}
	return p, nil
}

// HostDevicePointer is the routed device's address of pinned host memory.
func (b *Backend) HostDevicePointer(index int, host uintptr) (device.Ptr, error) {
	r, m, err := routed(b, index, "mapped host memory", device.MemoryOpsOf)
	if err != nil {
		return 0, err
	}
	p, err := m.HostDevicePointer(index, host)
	if err != nil {
		return 0, r.wrap("mapped host memory", index, err)
	}
	return p, nil
}

// IPCHandle is the routed backend's IPC handle of p.
func (b *Backend) IPCHandle(index int, p device.Ptr) (device.IPCHandle, error) {
	r, x, err := routed(b, index, "IPC handle", device.IPCOf)
	if err != nil {
		return device.IPCHandle{}, err
	}
	h, err := x.IPCHandle(index, p)
	if err != nil {
		return device.IPCHandle{}, r.wrap("IPC handle", index, err)
	}
	return h, nil
}

// OpenIPCHandle opens an IPC handle on the routed device.
func (b *Backend) OpenIPCHandle(index int, h device.IPCHandle) (device.Ptr, error) {
	r, x, err := routed(b, index, "open IPC handle", device.IPCOf)
	if err != nil {
		return 0, err
	}
	p, err := x.OpenIPCHandle(index, h)
	if err != nil {
		return 0, r.wrap("open IPC handle", index, err)
	}
	return p, nil
}

// CloseIPCHandle closes a mapping OpenIPCHandle made.
func (b *Backend) CloseIPCHandle(index int, p device.Ptr) error {
	r, x, err := routed(b, index, "close IPC handle", device.IPCOf)
	if err != nil {
		return err
	}
	if err := x.CloseIPCHandle(index, p); err != nil {
		return r.wrap("close IPC handle", index, err)
	}
	return nil
}

// PCIBusID is the routed device's PCI bus id.
func (b *Backend) PCIBusID(index int) (string, error) {
	r, x, err := routed(b, index, "PCI bus id", device.PCIDevicesOf)
	if err != nil {
		return "", err
	}
	id, err := x.PCIBusID(index)
	if err != nil {
		return "", r.wrap("PCI bus id", index, err)
	}
	return id, nil
}

// DeviceByPCIBusID is the index of the routed backend's device at busID:
// flagos's indexes are the routed backend's.
func (b *Backend) DeviceByPCIBusID(busID string) (int, error) {
	r, x, err := routed(b, -1, "device by PCI bus id", device.PCIDevicesOf)
	if err != nil {
		return -1, err
	}
	i, err := x.DeviceByPCIBusID(busID)
	if err != nil {
		return -1, fmt.Errorf("flagos (%s): device by PCI bus id %q: %w", r.typ, busID, err)
	}
	return i, nil
}

// DMABufSupported asks the routed device.
func (b *Backend) DMABufSupported(index int) (bool, error) {
	r, x, err := routed(b, index, "dma-buf support", device.DMABufOf)
	if err != nil {
		return false, err
	}
	ok, err := x.DMABufSupported(index)
	if err != nil {
		return false, r.wrap("dma-buf support", index, err)
	}
	return ok, nil
}

// DMABufFD exports routed device memory as a dma-buf.
func (b *Backend) DMABufFD(index int, p device.Ptr, size uint64) (int, error) {
	r, x, err := routed(b, index, "dma-buf export", device.DMABufOf)
	if err != nil {
		return -1, err
	}
	fd, err := x.DMABufFD(index, p, size)
	if err != nil {
		return -1, r.wrap("dma-buf export", index, err)
	}
	return fd, nil
}
