//go:build gpu

package cuda

import (
	"os"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

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

	// op numbers are scripts/cfloor.c's enum op.
	for _, c := range []struct {
		name   string
		op     int
		n      int
		call   func() error
		launch bool // drained after the clock stops, as the C loop does
	}{
		{"SetCurrent", 0, 20000, func() error { return be.SetCurrent(0) }, false},
		{"Synchronize", 1, 2000, func() error { return be.Synchronize(0) }, false},
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
