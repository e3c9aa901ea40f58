//go:build gpu

package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// BenchmarkGPUSplit sets two Go paths to the same driver calls against
// each other directly, in rotating slices as BenchmarkGPUPaired does: a
// row "A/B" reports A's median slice (ns/op), B's (b-ns/op) and the median
// of the slices' A/B ratios (a/b). The paired rows give each path against
// the Go floor in its own row, a few seconds apart, while the driver's own
// time drifts between them (a Synchronize of 695 ns in one row, 374 ns in
// the next); here the two paths meet in one row, so what separates them
// is read without that drift, step by step:
//
//	Synchronize/Raw             the backend's Synchronize against clib's
//	                            transition alone (CallList)
//	Synchronize/Prepared        ... against its prepared call kept here
//	Prepared/Raw                the prepared call against CallList
//	Synchronize2/Prepared       a second backend, made in the benchmark
//	InPage/Prepared             the prepared call in a page of its own
//	Shaped/Prepared             Synchronize's fast path and layout in
//	                            this package's code (backendShape)
//	Synchronize/Synchronize2    two backends, the same code and calls
//	StreamSynchronize/Raw       a stream's synchronize against CallAfter
//	Launch3Args/RawParams       the backend's launch against the launch's
//	                            trampoline alone, values laid out once
//	ArgsParams/RawParams        ... the caller's []any read each call
//	TurnParams/RawParams        ... inside a sync.Mutex, as a stream's turn
//	AA rows                     a path against itself: the harness's bias
func BenchmarkGPUSplit(b *testing.B) {
	be := gpuBackend(b)
	env := newPairedEnv(b, be)
	beSync := func() error { return be.Synchronize(0) }
	prepared := env.preparedSync()
	drain := func() error { return be.Synchronize(0) }
	a3 := nop3Args(env.p)
	launch3 := func() error { return be.Launch(0, env.nop3, one, one, 0, a3...) }
	raw3 := env.rawParamsLaunch(env.nop3, 3)
	args3 := env.argsParamsLaunch(env.nop3, a3)
	// Where Synchronize's gap lies (Synchronize/Prepared): a second
	// backend, made now beside the benchmark's own allocations; the
	// prepared call in a page of its own; the backend's code shape on a
	// copy of its layout, made now.
	be2 := New(driver.WithLogger(zap.NewNop()))
	if err := be2.Synchronize(0); err != nil { // the first call fills its hot table
		b.Fatal(err)
	}
	page, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = unix.Munmap(page) })
	// The Prepared's pointers are to env's Funcs, which env keeps alive.
	inPage := env.prepareSync((*clib.Prepared)(unsafe.Pointer(&page[0])))
	shaped := new(backendShape)
	shaped.hot[0].Store(env.prepareSync(new(clib.Prepared)))
	var turn sync.Mutex
	turn3 := func() error {
		turn.Lock()
		defer turn.Unlock()
		return raw3()
	}
	rows := []struct {
		name  string
		n     int
		a, b  func() error
		drain func() error
	}{
		{"AARawSynchronize", 2000, env.rawSync, env.rawSync, nil},
		{"Synchronize/Raw", 2000, beSync, env.rawSync, nil},
		{"Synchronize/Prepared", 2000, beSync, prepared, nil},
		{"Prepared/Raw", 2000, prepared, env.rawSync, nil},
		{"Synchronize2/Prepared", 2000, func() error { return be2.Synchronize(0) }, prepared, nil},
		{"InPage/Prepared", 2000, callPrepared(inPage), prepared, nil},
		{"Shaped/Prepared", 2000, func() error { return shaped.synchronize(0) }, prepared, nil},
		{"Synchronize/Synchronize2", 2000, beSync, func() error { return be2.Synchronize(0) }, nil},
		{"StreamSynchronize/Raw", 2000, env.st.Synchronize, env.rawStreamSync, nil},
		{"AARawParams", 200, raw3, raw3, drain},
		{"Launch3Args/RawParams", 200, launch3, raw3, drain},
		{"ArgsParams/RawParams", 200, args3, raw3, drain},
		{"TurnParams/RawParams", 200, turn3, raw3, drain},
		{"Launch3Args/ArgsParams", 200, launch3, args3, drain},
	}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			rotate(b, []func() float64{
				func() float64 { return timeSlice(b, r.n, r.a, r.drain) },
				func() float64 { return timeSlice(b, r.n, r.b, r.drain) },
			}, []string{"b-ns/op"}, []string{"a/b"})
		})
	}
}

// backendShape is driver.Backend's size class (1024 bytes) with its hot
// table where the Backend kept it when this was written (offset 904), and
// synchronize is Backend.Synchronize's fast path: the backend's code
// shape and layout, in a fresh allocation and in this package's code.
type backendShape struct {
	_   [904]byte
	hot [8]atomic.Pointer[clib.Prepared]
	_   [56]byte
}

//go:noinline
func (s *backendShape) synchronize(index int) error {
	if uint(index) < uint(len(s.hot)) {
		if p := s.hot[index].Load(); p != nil {
			if _, r := p.Call(); clib.Code(r) != 0 {
				return fmt.Errorf("cuCtxSynchronize_v2 = %d", clib.Code(r))
			}
			return nil
		}
	}
	return fmt.Errorf("backendShape: no prepared call for device %d", index)
}

// argsParamsLaunch is rawParamsLaunch with the values read from args, a
// caller's []any of boxed values, on each call, as Launch reads them.
func (e *pairedEnv) argsParamsLaunch(fn device.Function, args []any) func() error {
	p := e.launchFn.Prepare(&e.setFn, e.ctx)
	h, _ := fn.(interface{ Handle() uintptr })
	kernel := h.Handle()
	return func() error {
		var vals [clib.MaxParams]uint64
		for i, a := range args {
			v, ok := benchValue(a)
			if !ok {
				return fmt.Errorf("argsParamsLaunch: argument %d is a %T, which it does not lay out", i, a)
			}
			vals[i] = v
		}
		call := [11]uintptr{kernel, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}
		if r0, r1 := p.CallParams(&call, 9, &vals, len(args)); clib.Code(r0)|clib.Code(r1) != 0 {
			return fmt.Errorf("cuCtxSetCurrent, cuLaunchKernel = %d, %d", clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
}
