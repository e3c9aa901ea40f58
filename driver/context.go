package driver

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/clib"
)

// devState is one device of a loaded backend.
type devState struct {
	ordinal int
	// handle is what OpDeviceGet wrote: CUDA's CUdevice is an int, some
	// vendors' handle is 64 bits (Cambricon's CNdev); the core reads it
	// into a zeroed 64-bit variable, so both come out right.
	handle uint64

	mu  sync.Mutex               // serialises the first retain
	sel atomic.Pointer[selector] // nil until the device's first use
}

// selector is the one argument that makes a device current: its retained
// primary context (PrimaryContext), its context learned once
// (DeviceContext) or its ordinal (CurrentDevice). The list is built once,
// so a call passes it without allocating.
type selector struct {
	args [1]uintptr
	// sync is Synchronize's call prepared (OpSynchronizeContext on the
	// context), where the library has it: not OK otherwise.
	sync clib.Prepared
}

// selector returns the device's selector, retaining its primary context
// (or learning its context) on first use.
func (s *state) selector(d *devState) (*selector, error) {
	if sel := d.sel.Load(); sel != nil {
		return sel, nil
	}
	return s.firstSelector(d)
}

// firstSelector is selector's first use of a device, out of line (its
// lock's defer would keep selector from inlining into the hot paths).
func (s *state) firstSelector(d *devState) (*selector, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sel := d.sel.Load(); sel != nil {
		return sel, nil
	}
	sel := &selector{}
	switch s.v.Context {
	case CurrentDevice:
		sel.args[0] = uintptr(d.ordinal)
	case DeviceContext:
		ctx, op, err := s.api.deviceContext(d)
		if err != nil {
			return nil, s.opErr(op, d, err)
		}
		sel.args[0] = ctx
	default:
		ctx, err := s.api.retainPrimary(d)
		if err != nil {
			return nil, s.opErr(OpPrimaryCtxRetain, d, err)
		}
		sel.args[0] = ctx
	}
	sel.sync = s.api.prepareSyncContext(sel)
	d.sel.Store(sel)
	return sel, nil
}

// enter locks the calling goroutine to its thread and makes device index
// current there (-1: the current device). On success the caller must call
// leave; on error the thread is unlocked already.
func (b *Backend) enter(index int) (*state, *devState, error) {
	s, d, err := b.device(index)
	if err != nil {
		return nil, nil, err
	}
	if err := s.enterDev(d); err != nil {
		return nil, nil, err
	}
	return s, d, nil
}

// selected is device index's record and selector (-1: the current device)
// for a call that makes the device current and runs in the same transition
// to C (api.selectThen): no locked thread.
func (b *Backend) selected(index int) (*devState, *selector, error) {
	s, d, err := b.device(index)
	if err != nil {
		return nil, nil, err
	}
	sel, err := s.selector(d)
	if err != nil {
		return nil, nil, err
	}
	return d, sel, nil
}

func (s *state) enterDev(d *devState) error {
	sel, err := s.selector(d)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	if err := s.api.makeCurrent(sel.args[:]); err != nil {
		runtime.UnlockOSThread()
		return s.opErr(s.api.selectOp(), d, err)
	}
	return nil
}

// leave ends what enter began.
func leave() { runtime.UnlockOSThread() }

// WithContext runs f on a locked OS thread with device index's context
// current (its primary context for CUDA and MUSA, the selected device for
// HIP, the device's own context for AscendCL), for code that calls the
// vendor's libraries itself (NVSHMEM, say).
// The thread's previous context is restored afterwards where the library can
// report it (OpCtxGetCurrent, OpGetDevice). f must not unlock the thread.
func (b *Backend) WithContext(index int, f func() error) error {
	s, d, err := b.device(index)
	if err != nil {
		return err
	}
	sel, err := s.selector(d)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, restore, err := s.api.current()
	if err != nil {
		return fmt.Errorf("%s: reading the thread's current context: %w", s.v.Type, err)
	}
	if err := s.api.makeCurrent(sel.args[:]); err != nil {
		return s.opErr(s.api.selectOp(), d, err)
	}
	if restore && prev != sel.args[0] {
		defer func() { _ = s.api.makeCurrent([]uintptr{prev}) }()
	}
	return f()
}
