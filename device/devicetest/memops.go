package devicetest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/device"
)

// The second group of operations, on the fake machine as on a driver:
// memsets set, copies copy, a value wait holds its stream until the word is
// written (by another stream, or the host), a query runs what can run and
// says "not ready" while anything is held, IPC handles name an allocation
// (and reopen it in this process), PCI bus ids are "00000000:%02X:00.0"
// from bus 0x18 on, dma-buf exports are /dev/null descriptors.

var (
	_ device.MemoryOps    = (*Backend)(nil)
	_ device.IPC          = (*Backend)(nil)
	_ device.PCIDevices   = (*Backend)(nil)
	_ device.DMABuf       = (*Backend)(nil)
	_ device.StreamOps    = (*Stream)(nil)
	_ device.EventQuerier = (*Event)(nil)
)

// errHeld is what a value wait's step answers while its value is not there.
var errHeld = errors.New("devicetest: held by a value wait")

// errPending is a query's answer while work is held.
var errPending = fmt.Errorf("%w: work is pending", device.ErrNotReady)

// drain runs the stream's work; held by a wait, it returns errHeld when
// wait is false, else runs the device's other streams and polls, at most
// 10 s.
func (s *Stream) drain(wait bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		held := s.runLocked()
		err := s.err
		s.mu.Unlock()
		if !held {
			return err
		}
		if !wait {
			return errHeld
		}
		s.d.mem.mu.Lock()
		others := append([]*Stream(nil), s.d.mem.streams...)
		s.d.mem.mu.Unlock()
		for _, o := range others {
			if o != s {
				_ = o.drain(false)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: a value wait on the stream was never satisfied (10 s)", s.b.typ)
		}
		time.Sleep(time.Millisecond)
	}
}

// setter fills dev with count elements of width bytes of value.
func setter(value uint32, width int) func(dev []byte) {
	return func(dev []byte) {
		for i := 0; i+width <= len(dev); i += width {
			switch width {
			case 1:
				dev[i] = byte(value)
			case 2:
				binary.LittleEndian.PutUint16(dev[i:], uint16(value))
			default:
				binary.LittleEndian.PutUint32(dev[i:], value)
			}
		}
	}
}

func memsetSize(value uint32, width int, count uint64) (int, error) {
	if err := device.CheckMemset(value, width); err != nil {
		return 0, err
	}
	if count > (1<<40)/uint64(width) {
		return 0, fmt.Errorf("%w: memset of %d elements", device.ErrInvalidValue, count)
	}
	return int(count) * width, nil
}

// Memset sets count elements of width bytes at p, after the device's
// queued work.
func (b *Backend) Memset(index int, p device.Ptr, value uint32, width int, count uint64) error {
	n, err := memsetSize(value, width, count)
	if err != nil {
		return fmt.Errorf("%s: %w", b.typ, err)
	}
	return b.copyOn(index, "Memset", p, n, setter(value, width))
}

// CopyDtoD copies device memory, after the device's queued work.
func (b *Backend) CopyDtoD(index int, dst, src device.Ptr, size uint64) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if err := d.mem.flushAll(); err != nil {
		return err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return d.mem.dtod(dst, src, size)
}

// dtod copies [src, src+size) to dst; mu held.
func (m *memory) dtod(dst, src device.Ptr, size uint64) error {
	if size > 1<<40 {
		return fmt.Errorf("%w: a copy of %d bytes", device.ErrInvalidValue, size)
	}
	to, err := m.span(dst, int(size))
	if err != nil {
		return err
	}
	from, err := m.span(src, int(size))
	if err != nil {
		return err
	}
	copy(to, from)
	return nil
}

// AllocManaged allocates memory as Alloc does (the fake's memory is all
// reachable from the host).
func (b *Backend) AllocManaged(index int, size uint64) (device.Ptr, error) {
	return b.Alloc(index, size)
}

// HostDevicePointer maps a host buffer from AllocHost into device index's
// address space (once per buffer): device copies and kernels of the fake
// then read and write the buffer itself.
func (b *Backend) HostDevicePointer(index int, host uintptr) (device.Ptr, error) {
	d, err := b.device(index)
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	var hb *HostBuffer
	for _, h := range b.host {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(h.buf)))
		if host >= start && host < start+uintptr(len(h.buf)) {
			hb = h
			break
		}
	}
	b.mu.Unlock()
	if hb == nil {
		return 0, fmt.Errorf("%w: %s: HostDevicePointer(%#x): not in a buffer from AllocHost", device.ErrInvalidValue, b.typ, host)
	}
	off := host - uintptr(unsafe.Pointer(unsafe.SliceData(hb.buf)))
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.mapped == nil {
		hb.mapped = map[*dev]device.Ptr{}
	}
	base, ok := hb.mapped[d]
	if !ok {
		d.mem.mu.Lock()
		base = d.mem.mapHost(hb.buf)
		d.mem.mu.Unlock()
		hb.mapped[d] = base
	}
	return base + device.Ptr(off), nil
}

// mapHost makes buf an allocation of the device without counting it; mu
// held.
func (m *memory) mapHost(buf []byte) device.Ptr {
	base := m.next
	m.next += (uint64(len(buf)) + 255) &^ 255
	m.allocs[base] = buf
	m.insertBase(base)
	return device.Ptr(base)
}

// insertBase keeps bases sorted; mu held.
func (m *memory) insertBase(base uint64) {
	i := 0
	for i < len(m.bases) && m.bases[i] < base {
		i++
	}
	m.bases = append(m.bases, 0)
	copy(m.bases[i+1:], m.bases[i:])
	m.bases[i] = base
}

// ---- IPC ----

var ipcTable = crc64.MakeTable(crc64.ECMA)

// IPCHandle names the allocation holding p: "FTIPC", the device, the base,
// a checksum.
func (b *Backend) IPCHandle(index int, p device.Ptr) (device.IPCHandle, error) {
	var h device.IPCHandle
	d, err := b.device(index)
	if err != nil {
		return h, err
	}
	d.mem.mu.Lock()
	base, ok := d.mem.baseOf(p)
	d.mem.mu.Unlock()
	if !ok {
		return h, fmt.Errorf("%w: %s:%d: IPCHandle(%#x): not device memory", device.ErrInvalidValue, b.typ, d.index, uint64(p))
	}
	copy(h[:], "FTIPC")
	binary.LittleEndian.PutUint64(h[8:], uint64(d.index))
	binary.LittleEndian.PutUint64(h[16:], base)
	binary.LittleEndian.PutUint64(h[24:], crc64.Checksum(h[:24], ipcTable))
	return h, nil
}

// baseOf is the base of the allocation holding p; mu held.
func (m *memory) baseOf(p device.Ptr) (uint64, bool) {
	for _, base := range m.bases {
		if uint64(p) >= base && uint64(p) < base+uint64(len(m.allocs[base])) {
			return base, true
		}
	}
	return 0, false
}

// OpenIPCHandle checks h and maps its allocation again (the fake's
// processes are one): the base, with the mapping counted.
func (b *Backend) OpenIPCHandle(index int, h device.IPCHandle) (device.Ptr, error) {
	d, err := b.device(index)
	if err != nil {
		return 0, err
	}
	if string(h[:5]) != "FTIPC" || binary.LittleEndian.Uint64(h[24:]) != crc64.Checksum(h[:24], ipcTable) {
		return 0, fmt.Errorf("%w: %s: OpenIPCHandle: not an IPC handle", device.ErrInvalidValue, b.typ)
	}
	base := binary.LittleEndian.Uint64(h[16:])
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	if _, ok := d.mem.allocs[base]; !ok || binary.LittleEndian.Uint64(h[8:]) != uint64(d.index) {
		return 0, fmt.Errorf("%w: %s:%d: OpenIPCHandle: the handle names no live allocation of this device", device.ErrInvalidValue, b.typ, d.index)
	}
	if d.mem.ipc == nil {
		d.mem.ipc = map[uint64]int{}
	}
	d.mem.ipc[base]++
	return device.Ptr(base), nil
}

// CloseIPCHandle forgets a mapping OpenIPCHandle made.
func (b *Backend) CloseIPCHandle(index int, p device.Ptr) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	if d.mem.ipc[uint64(p)] == 0 {
		return fmt.Errorf("%w: %s:%d: CloseIPCHandle(%#x): not an open mapping", device.ErrInvalidValue, b.typ, d.index, uint64(p))
	}
	d.mem.ipc[uint64(p)]--
	return nil
}

// ---- PCI bus ids, dma-buf ----

// PCIBusID is device index's fake PCI bus id.
func (b *Backend) PCIBusID(index int) (string, error) {
	d, err := b.device(index)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("00000000:%02X:00.0", 0x18+d.index), nil
}

// DeviceByPCIBusID is the device at busID ("domain:bus:device.function" or
// "bus:device.function", any case).
func (b *Backend) DeviceByPCIBusID(busID string) (int, error) {
	if b.reason != "" {
		return -1, b.unavailable()
	}
	var dom, bus, dv, fn uint
	var rest string
	if n, _ := fmt.Sscanf(strings.ToLower(busID), "%x:%x:%x.%x%s", &dom, &bus, &dv, &fn, &rest); n != 4 {
		dom = 0
		if n, _ := fmt.Sscanf(strings.ToLower(busID), "%x:%x.%x%s", &bus, &dv, &fn, &rest); n != 3 {
			return -1, fmt.Errorf("%w: %s: %q is not a PCI bus id", device.ErrInvalidValue, b.typ, busID)
		}
	}
	i := int(bus) - 0x18
	if dom != 0 || dv != 0 || fn != 0 || i < 0 || i >= len(b.devs) {
		return -1, fmt.Errorf("%w: %s: no device at %q", device.ErrNotFound, b.typ, busID)
	}
	return i, nil
}

// DMABufSupported: every fake device exports.
func (b *Backend) DMABufSupported(index int) (bool, error) {
	if _, err := b.device(index); err != nil {
		return false, err
	}
	return true, nil
}

// DMABufFD opens /dev/null as the range's descriptor, after checking the
// range is device memory.
func (b *Backend) DMABufFD(index int, p device.Ptr, size uint64) (int, error) {
	d, err := b.device(index)
	if err != nil {
		return -1, err
	}
	if size == 0 || size > 1<<40 {
		return -1, fmt.Errorf("%w: %s: DMABufFD of %d bytes", device.ErrInvalidValue, b.typ, size)
	}
	d.mem.mu.Lock()
	_, err = d.mem.span(p, int(size))
	d.mem.mu.Unlock()
	if err != nil {
		return -1, fmt.Errorf("%s:%d: DMABufFD: %w", b.typ, d.index, err)
	}
	return unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
}
