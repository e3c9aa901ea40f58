//go:build cgo

package main

/*
#include "fast.h"
*/
import "C"

import (
	"os"
	"unsafe"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// The Go side of fast.c's direct calls: when the backend is chosen, the
// addresses of the driver functions the hot fields need, resolved and
// checked by flagshim's core, go to the C table; each device's selector
// (its retained primary context, or its ordinal) is published when the
// plugin first uses the device; every live stream and event is registered
// with its handle and device. Then streamSynchronize, streamQuery,
// eventRecord (on a stream), eventSynchronize, eventQuery, deviceMemcpy on
// a stream, deviceMalloc/deviceFree of device memory and streamCreate/
// streamDestroy never enter Go,
// except on a driver's failure (flagcxshim_go_fastFail). Where the
// vendor's selection is a context, the getter of the thread's current one
// goes too, so that a call sets the context only when it is not current
// already.

// fxOps are the operations of fast.h's FX_STREAM_SYNC.. FX_MEM_FREE, in
// order (FX_SELECT is DirectCalls' selection function).
var fxOps = [C.FX_NOPS - 1]driver.Op{
	driver.OpStreamSynchronize, driver.OpStreamQuery, driver.OpEventRecord, driver.OpEventSynchronize,
	driver.OpEventQuery, driver.OpMemcpyHtoDAsync, driver.OpMemcpyDtoHAsync, driver.OpMemcpyDtoDAsync,
	driver.OpMemAlloc, driver.OpMemFree, driver.OpStreamCreate, driver.OpStreamDestroy,
}

func init() {
	fastSetup = func(p *plugin) {
		if os.Getenv(directEnv) == "0" {
			p.log.Info("direct calls off", zap.String("by", directEnv))
			return
		}
		sel, fns, current, err := directCalls(p.b)
		if err != nil {
			p.log.Info("direct calls off: the hot fields go through Go", zap.Error(err))
			return
		}
		n, err := p.b.DeviceCount()
		if err != nil || n <= 0 {
			p.log.Info("direct calls off: no device count", zap.Error(err))
			return
		}
		var addrs [C.FX_NOPS]C.uintptr_t
		var ops [C.FX_NOPS]C.int
		addrs[0] = C.uintptr_t(sel)
		for i, op := range fxOps {
			addrs[i+1], ops[i+1] = C.uintptr_t(fns[i]), C.int(op)
		}
		C.flagcxshim_fast_enable(&addrs[0], &ops[0], C.uintptr_t(current), C.int(p.b.NotReadyCode()), C.int(n),
			C.uint(p.b.Vendor().NonBlockingStream))
		p.direct = true
		p.log.Info("direct calls on", zap.Int("devices", n), zap.Bool("context getter", current != 0))
	}
	fastPublish = func(b *driver.Backend, dev int) {
		if sel, err := b.Selector(dev); err == nil {
			C.flagcxshim_fast_publish(C.int(dev), C.uintptr_t(sel))
		}
	}
	fastRegister = func(obj, h uintptr, dev, kind int) bool {
		return C.flagcxshim_fast_register(clib.Ptr(obj), C.uintptr_t(h), C.int(dev), C.int(kind)) != 0
	}
	fastForget = func(obj uintptr) { C.flagcxshim_fast_forget(clib.Ptr(obj)) }
	fastAdopt = func(obj uintptr) (uintptr, int, bool) {
		var h C.uintptr_t
		var dev C.int
		ok := C.flagcxshim_fast_adopt(clib.Ptr(obj), &h, &dev) != 0
		return uintptr(h), int(dev), ok
	}
}

// directCalls is DirectCalls of fxOps, and, where the vendor's selection
// is a context (not CurrentDevice's ordinal), the getter of the thread's
// current context (OpCtxGetCurrent) when it too can be called directly
// (fast.c's FX_SKIP_CURRENT); current is 0 without one.
func directCalls(b *driver.Backend) (sel uintptr, fns []uintptr, current uintptr, err error) {
	if b.Vendor().Context != driver.CurrentDevice {
		if sel, fns, err = b.DirectCalls(append(fxOps[:], driver.OpCtxGetCurrent)...); err == nil {
			return sel, fns[:len(fxOps)], fns[len(fxOps)], nil
		}
	}
	sel, fns, err = b.DirectCalls(fxOps[:]...)
	return sel, fns, 0, err
}

//export flagcxshim_go_fastFail
func flagcxshim_go_fastFail(fn *C.char, dev, op, code, selecting C.int) C.int {
	name := C.GoString(fn)
	b, err := the.backend()
	if err != nil {
		return C.int(fail(name, err))
	}
	err = b.DirectError(int(dev), driver.Op(op), int(code), selecting != 0)
	if err == nil { // not a failure after all (fast.c passes only codes other than 0)
		return C.int(resSuccess)
	}
	return C.int(fail(name, err))
}

//export flagcxshim_go_streamForget
func flagcxshim_go_streamForget(obj unsafe.Pointer) {
	if v, ok := streams.LoadAndDelete(addr(obj)); ok {
		_ = v.(*driver.Stream).Destroy() // a wrapper (ForeignStream): the native stream is fast.c's to destroy
	}
}
