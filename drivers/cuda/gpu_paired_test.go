//go:build gpu

package cuda

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// BenchmarkGPUPaired measures each hot path against the C floor inside one
// process, in short slices that alternate between the two: n calls made by
// scripts/cfloor.c's loops (built as libcfloor.so, entered once per slice,
// so the transition into it is spread over n calls), then n calls through
// the Go backend, then the other order. Separate runs of the C program and
// the Go benchmarks see the driver's own cost drift by up to 2x between
// seconds (cuCtxSynchronize on an idle context took 284 ns in one round
// and 556 ns in the next); paired slices a millisecond apart cancel that
// drift, so their ratio is the Go backend's overhead alone.
//
// Each sub-benchmark reports ns/op (the median Go slice), c-ns/op (the
// median C slice) and go/c (the median of the slices' ratios).
// scripts/bench-ratio.sh paired builds the library and runs this with
// FLAGSHIM_CFLOOR_LIB set.
func BenchmarkGPUPaired(b *testing.B) {
	const cfloorEnv = "FLAGSHIM_CFLOOR_LIB"
	if os.Getenv(cfloorEnv) == "" {
		b.Skip(cfloorEnv + " is unset: build libcfloor.so with scripts/bench-ratio.sh build and run scripts/bench-ratio.sh paired")
	}
	be := gpuBackend(b)
	// Checked as the library's own loader checks a driver: it is code this
	// process will run.
	lib, err := dl.Open(dl.Spec{Name: "libcfloor", EnvVar: cfloorEnv})
	if err != nil {
		b.Fatal(err)
	}
	sym := func(name string) uintptr {
		p, err := lib.Sym(name)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	open, slice := sym("cfloor_open"), sym("cfloor_slice")
	ptx := append([]byte("testdata/gpu.ptx"), 0)
	if rc, _, _ := purego.SyscallN(open, uintptr(unsafe.Pointer(&ptx[0]))); int32(rc) != 0 {
		b.Fatalf("cfloor_open(testdata/gpu.ptx) = %d", int32(rc))
	}

	launch := func(kernel string, args func(device.Ptr) []any) func() error {
		fn, p := benchKernel(b, kernel)
		a := args(p)
		return func() error { return be.Launch(0, fn, one, one, 0, a...) }
	}

	rawSync, syncContext := rawSetThenSync(b)
	// Synchronize's C floor is the same driver calls: one
	// cuCtxSynchronize_v2 where the driver has it (CUDA 13.0+), as the
	// backend then makes, else cuCtxSetCurrent and cuCtxSynchronize.
	// SynchronizeVsSetSync keeps the second floor where the first is the
	// goal's.
	syncOp := 1
	if syncContext {
		syncOp = 9
	}

	// op numbers are scripts/cfloor.c's enum op.
	for _, c := range []struct {
		name   string
		op     int
		n      int
		call   func() error
		launch bool // drained after the clock stops, as the C loop does
	}{
		{"SetCurrent", 0, 20000, func() error { return be.SetCurrent(0) }, false},
		{"Synchronize", syncOp, 2000, func() error { return be.Synchronize(0) }, false},
		{"SynchronizeVsSetSync", 1, 2000, func() error { return be.Synchronize(0) }, false},
		// The floor of any Go caller: cuCtxSetCurrent and cuCtxSynchronize
		// through clib's transition alone (one runtime.cgocall), no backend.
		{"RawSetThenSync", 1, 2000, rawSync, false},
		{"Launch3Args", 3, 200, launch("nop3", nop3Args), true},
		{"Launch8Args", 4, 200, launch("nop8", nop8Args), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			goSlice := func() float64 {
				t := time.Now()
				for range c.n {
					if err := c.call(); err != nil {
						b.Fatal(err)
					}
				}
				d := time.Since(t)
				if c.launch {
					if err := be.Synchronize(0); err != nil {
						b.Fatal(err)
					}
				}
				return float64(d.Nanoseconds()) / float64(c.n)
			}
			cSlice := func() float64 {
				ns, _, _ := purego.SyscallN(slice, uintptr(c.op), uintptr(c.n))
				if int64(ns) < 0 {
					b.Fatalf("cfloor_slice(%d): the driver lacks the loop's function", c.op)
				}
				return float64(ns) / float64(c.n)
			}
			var goNs, cNs, ratio []float64
			for i := 0; b.Loop(); i++ {
				var g, cc float64
				if i%2 == 0 {
					cc, g = cSlice(), goSlice()
				} else {
					g, cc = goSlice(), cSlice()
				}
				goNs, cNs, ratio = append(goNs, g), append(cNs, cc), append(ratio, g/cc)
			}
			b.ReportMetric(median(goNs), "ns/op")
			b.ReportMetric(median(cNs), "c-ns/op")
			b.ReportMetric(median(ratio), "go/c")
		})
	}
}

// rawSetThenSync is cuCtxSetCurrent and cuCtxSynchronize through clib's
// transition alone (Func.CallThen: both in one runtime.cgocall), on device
// 0's primary context: what any Go caller pays at least for those two
// calls. syncContext: the driver has cuCtxSynchronize_v2.
func rawSetThenSync(b *testing.B) (call func() error, syncContext bool) {
	h, err := Vendor().Library.Open(nil) // the backend's own search: the same file
	if err != nil {
		b.Fatal(err)
	}
	var retain, set, sync, syncV2 clib.Func
	if err := h.Resolve("cuda", []clib.Sym{
		{Fn: &retain, Names: []string{"cuDevicePrimaryCtxRetain"}, Required: true},
		{Fn: &set, Names: []string{"cuCtxSetCurrent"}, Required: true},
		{Fn: &sync, Names: []string{"cuCtxSynchronize"}, Required: true},
		{Fn: &syncV2, Names: []string{"cuCtxSynchronize_v2"}},
	}); err != nil {
		b.Fatal(err)
	}
	var ctx uintptr
	if rc := retain.CallCode(uintptr(unsafe.Pointer(&ctx)), 0); rc != 0 { // device 0: CUdevice is its ordinal
		b.Fatalf("cuDevicePrimaryCtxRetain(device 0) = %d", rc)
	}
	args := []uintptr{ctx}
	return func() error {
		if r1, r2 := set.CallThen(args, &sync); r1|r2 != 0 {
			return fmt.Errorf("cuCtxSetCurrent, cuCtxSynchronize = %d, %d", clib.Code(r1), clib.Code(r2))
		}
		return nil
	}, syncV2.OK()
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
