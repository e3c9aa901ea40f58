//go:build gpu

package cuda

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/device"
)

// BenchmarkGPUThreads is launches from several goroutines at once on one
// device against as many C threads making the same calls
// (scripts/cfloor.c's cfloor_threads: cuCtxSetCurrent and cuLaunchKernel
// of nop3 per launch, as the backend makes them), in slices that alternate
// as BenchmarkGPUPaired's do. OwnStreams/N: N goroutines (threads), each
// launching on a stream of its own; OneStream/N: all on one stream. A slice
// is threadLaunches launches split evenly, timed from the moment every
// goroutine (thread) is waiting to start until the last is done; the
// streams are drained after the clock stops.
//
// It reports ns/op and c-ns/op (wall time per launch, all goroutines
// together), go/c (the median of the slices' ratios: the goal, aggregate
// launches per second >= 0.95x C's, is go/c <= 1/0.95) and the aggregate
// rates, launches/s and c-launches/s; with cgo, the same for the Go floor's
// goroutines (gofloor-ns/op, go/gofloor, gofloor-launches/s), which make
// the driver calls through cgo themselves.
func BenchmarkGPUThreads(b *testing.B) {
	be := gpuBackend(b)
	cfloor(b)
	fn, p := benchKernel(b, "nop3")
	args := nop3Args(p)
	streams := make([]device.Stream, threadsMax)
	for i := range streams {
		st, err := be.NewStream(0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Destroy() })
		streams[i] = st
	}
	var floor func(stream uintptr) error
	if goFloorLaunch != nil {
		floor = goFloorLaunch(b, newPairedEnv(b, be), handle(b, fn))
	}
	for _, mode := range []string{"OwnStreams", "OneStream"} {
		shared := mode == "OneStream"
		for _, n := range []int{1, 4, 16, 64} {
			name := fmt.Sprintf("%s/%d", mode, n)
			b.Run(name, func(b *testing.B) {
				per := threadLaunches / n
				stream := func(g int) device.Stream {
					if shared {
						return streams[0]
					}
					return streams[g]
				}
				sides := []func() float64{
					func() float64 {
						return goroutines(b, n, per, streams[:n], func(g int) error {
							return stream(g).Launch(fn, one, one, 0, args...)
						})
					},
					func() float64 {
						sh := 0
						if shared {
							sh = 1
						}
						ns, _, _ := purego.SyscallN(cf.threads, uintptr(n), uintptr(per), uintptr(sh))
						if int64(ns) < 0 {
							b.Fatalf("cfloor_threads(%d, %d, %d) failed", n, per, sh)
						}
						return float64(ns) / float64(n*per)
					},
				}
				if floor != nil {
					handles := make([]uintptr, n)
					for g := range handles {
						handles[g] = handle(b, stream(g))
					}
					sides = append(sides, func() float64 {
						return goroutines(b, n, per, streams[:n], func(g int) error { return floor(handles[g]) })
					})
				}
				med := rotate(b, sides, []string{"c-ns/op", "gofloor-ns/op"}, []string{"go/c", "go/gofloor"})
				b.ReportMetric(1e9/med[0], "launches/s")
				b.ReportMetric(1e9/med[1], "c-launches/s")
				if floor != nil {
					b.ReportMetric(1e9/med[2], "gofloor-launches/s")
				}
			})
		}
	}
}

// goroutines times n goroutines making per launches each (launch(g) is
// goroutine g's), from the moment all are waiting to start until the last
// is done, drains streams after the clock stops and returns the wall time
// per launch.
func goroutines(b *testing.B, n, per int, streams []device.Stream, launch func(g int) error) float64 {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	ready.Add(n)
	done.Add(n)
	for g := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for range per {
				if err := launch(g); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	ready.Wait()
	t := time.Now()
	close(start)
	done.Wait()
	d := time.Since(t)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	for _, st := range streams {
		if err := st.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	return float64(d.Nanoseconds()) / float64(n*per)
}

// goFloorLaunch, with cgo (gpu_gofloor_test.go), gives the threads'
// Go floor: nop3 (its handle kernel) launched on a stream through one cgo
// call (cuCtxSetCurrent and cuLaunchKernel), so that goroutines making
// the driver calls themselves show what Go's runtime costs against C's
// threads, apart from flagshim's own path.
var goFloorLaunch func(b *testing.B, e *pairedEnv, kernel uintptr) func(stream uintptr) error

const (
	threadsMax     = 64   // scripts/cfloor.c's CFLOOR_MAX_THREADS
	threadLaunches = 4096 // per slice, all threads together
)
