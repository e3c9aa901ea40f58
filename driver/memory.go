package driver

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// MemInfo is the free and total memory of device index as its context sees
// them (cuMemGetInfo_v2): a second source for the total, next to
// Properties' cuDeviceTotalMem_v2. In the presence and isolated tiers,
// before anything has initialized the driver in this process, it answers
// what the tier saw when it probed (and never initializes the driver
// itself); once the driver is initialized, it asks the driver.
func (b *Backend) MemInfo(index int) (free, total uint64, err error) {
	if f := b.facts(); f != nil && b.st.Load() == nil {
		i, err := b.factsDevice(f, index)
		if err != nil {
			return 0, 0, err
		}
		if i < len(f.FreeMemory) && f.FreeMemory[i] != 0 {
			return f.FreeMemory[i], f.Devices[i].TotalMemory, nil
		}
		return 0, 0, fmt.Errorf("%w: %s: the %s tier did not learn device %d's free memory; it is known once the driver is initialized (any call that needs a context)",
			device.ErrNotSupported, b.v.Type, f.Tier, i)
	}
	if _, err := b.ready("memory info", OpMemGetInfo); err != nil {
		return 0, 0, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return 0, 0, err
	}
	free, total, err = s.api.memGetInfo()
	leave()
	if err != nil {
		return 0, 0, s.opErr(OpMemGetInfo, d, err)
	}
	if free > total {
		return 0, 0, fmt.Errorf("%w: %s(device %d) answered %d bytes free of %d", ErrImplausible, s.api.sym(OpMemGetInfo), d.ordinal, free, total)
	}
	return free, total, nil
}

// sizeErr refuses a size a 32-bit legacy function cannot take.
func (s *state) sizeErr(op Op, n uint64) error {
	if s.api.fits(op, n) {
		return nil
	}
	return fmt.Errorf("%w: %s: %s has only the 32-bit %s: %d bytes is too many", device.ErrNotSupported, s.v.Type, s.path, s.api.sym(op), n)
}

// Alloc allocates n bytes of device memory on device index (cuMemAlloc_v2).
func (b *Backend) Alloc(index int, n uint64) (device.Ptr, error) {
	s, err := b.ready("device memory", OpMemAlloc)
	if err != nil {
		return 0, err
	}
	if err := s.sizeErr(OpMemAlloc, n); err != nil {
		return 0, err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return 0, err
	}
	p, err := s.api.memAlloc(n)
	leave()
	if err != nil {
		return 0, fmt.Errorf("%s(device %d, %d bytes): %w", s.api.sym(OpMemAlloc), d.ordinal, n, err)
	}
	return device.Ptr(p), nil
}

// Free frees memory Alloc returned (cuMemFree_v2).
func (b *Backend) Free(index int, p device.Ptr) error {
	if _, err := b.ready("device memory", OpMemFree); err != nil {
		return err
	}
	s, d, err := b.enter(index)
	if err != nil {
		return err
	}
	err = s.api.memFree(uint64(p))
	leave()
	if err != nil {
		return fmt.Errorf("%s(device %d, %#x): %w", s.api.sym(OpMemFree), d.ordinal, uint64(p), err)
	}
	return nil
}

// CopyHtoD copies src to device memory at dst on device index
// (cuMemcpyHtoD_v2); it returns once src may be reused.
func (b *Backend) CopyHtoD(index int, dst device.Ptr, src []byte) error {
	s, err := b.ready("device memory", OpMemcpyHtoD)
	if err != nil {
		return err
	}
	if err := s.sizeErr(OpMemcpyHtoD, uint64(len(src))); err != nil {
		return err
	}
	if len(src) == 0 { // nothing to copy: the device is made current, as for any copy
		_, _, err := b.enter(index)
		if err == nil {
			leave()
		}
		return err
	}
	d, sel, err := b.selected(index)
	if err != nil {
		return err
	}
	// One transition to C for the selection and the copy (see Synchronize).
	selected, r, err := s.api.selectThenMemcpyHtoD(sel.args[:], uint64(dst), src)
	if err != nil {
		return err
	}
	if err := s.api.check(s.api.selectOp(), selected); err != nil {
		return s.opErr(s.api.selectOp(), d, err)
	}
	if err := s.api.check(OpMemcpyHtoD, r); err != nil {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", s.api.sym(OpMemcpyHtoD), d.ordinal, uint64(dst), len(src), err)
	}
	return nil
}

// CopyDtoH copies len(dst) bytes of device memory at src on device index
// into dst (cuMemcpyDtoH_v2). It waits for the work queued before it on the
// default stream, so it follows a Launch safely.
func (b *Backend) CopyDtoH(index int, dst []byte, src device.Ptr) error {
	s, err := b.ready("device memory", OpMemcpyDtoH)
	if err != nil {
		return err
	}
	if err := s.sizeErr(OpMemcpyDtoH, uint64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 { // nothing to copy: the device is made current, as for any copy
		_, _, err := b.enter(index)
		if err == nil {
			leave()
		}
		return err
	}
	d, sel, err := b.selected(index)
	if err != nil {
		return err
	}
	selected, r, err := s.api.selectThenMemcpyDtoH(sel.args[:], dst, uint64(src))
	if err != nil {
		return err
	}
	if err := s.api.check(s.api.selectOp(), selected); err != nil {
		return s.opErr(s.api.selectOp(), d, err)
	}
	if err := s.api.check(OpMemcpyDtoH, r); err != nil {
		return fmt.Errorf("%s(device %d, %#x, %d bytes): %w", s.api.sym(OpMemcpyDtoH), d.ordinal, uint64(src), len(dst), err)
	}
	return nil
}
