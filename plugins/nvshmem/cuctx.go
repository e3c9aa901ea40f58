package nvshmem

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// cudaCtx is the little of the CUDA driver API the plugin needs to make its
// device's primary context current around NVSHMEM calls.
type cudaCtx struct {
	lib                                     *dl.Library
	init, deviceGet, retain, getCur, setCur uintptr
	ctx                                     uintptr // the retained primary context
}

func cuErr(fn string, r uintptr) error {
	if int32(uint32(r)) != 0 {
		return fmt.Errorf("nvshmem: %s returned CUresult %d", fn, int32(uint32(r)))
	}
	return nil
}

// context opens libcuda and retains the device's primary context, once;
// l.mu held.
func (l *Lib) context() (*cudaCtx, error) {
	if l.cu != nil {
		return l.cu, nil
	}
	lib, err := dl.Open(cuda.LibrarySpec(l.opts.getenv))
	if err != nil {
		return nil, fmt.Errorf("nvshmem: a CUDA context is needed: %w", err)
	}
	c := &cudaCtx{lib: lib}
	for _, s := range []struct {
		p     *uintptr
		names []string
	}{
		{&c.init, []string{"cuInit"}},
		{&c.deviceGet, []string{"cuDeviceGet"}},
		{&c.retain, []string{"cuDevicePrimaryCtxRetain"}},
		{&c.getCur, []string{"cuCtxGetCurrent"}},
		{&c.setCur, []string{"cuCtxSetCurrent"}},
	} {
		if *s.p, _, err = lib.SymAny(s.names...); err != nil {
			return nil, fmt.Errorf("nvshmem: %w", err)
		}
	}
	if err := cuErr("cuInit", call1(c.init, 0)); err != nil {
		return nil, err
	}
	var dev int32
	if err := cuErr("cuDeviceGet", call1(c.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(l.opts.device))); err != nil {
		return nil, fmt.Errorf("%w (device %d)", err, l.opts.device)
	}
	if err := cuErr("cuDevicePrimaryCtxRetain", call1(c.retain, uintptr(unsafe.Pointer(&c.ctx)), uintptr(dev))); err != nil {
		return nil, err
	}
	l.cu = c
	return c, nil
}

func call1(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// withContext runs f on a locked OS thread with the device's primary context
// current, then restores the thread's previous context; l.mu held.
func (l *Lib) withContext(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := l.context()
	if err != nil {
		return err
	}
	var prev uintptr
	if err := cuErr("cuCtxGetCurrent", call1(c.getCur, uintptr(unsafe.Pointer(&prev)))); err != nil {
		return err
	}
	if prev != c.ctx {
		if err := cuErr("cuCtxSetCurrent", call1(c.setCur, c.ctx)); err != nil {
			return err
		}
		defer call1(c.setCur, prev)
	}
	return f()
}
