//go:build gpu

package cuda

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkGPUSides runs each of BenchmarkGPUPaired's rows one side at a
// time, in a plain loop: the Go backend (go) and, where the test binary is
// built with cgo, the Go floor (gofloor). It needs no C floor, so it runs
// against the fake libcuda too (scripts/bench-ratio.sh fake). It is the
// benchmark to profile (-cpuprofile, perf record) and to compare with
// benchstat; the paired one, whose sides rotate within a second, stays the
// measure of record on a GPU, whose own cost drifts between seconds.
//
// FLAGSHIM_BENCH_EVICT=KiB makes every call find the caches cold, as a
// real driver's call leaves them (it runs far more code and touches far
// more memory than the fake): before each call the loop writes one byte
// of every cache line of a buffer of that size, on both sides alike, and
// times the call alone (cold-ns/op: the mean call but its slowest 1%, a
// clock read included: the same on both sides; the clock's steps, 10 ns
// on some virtual machines, average out over the calls). The sides' difference is then what
// each call's own cache lines cost when they have been evicted.
func BenchmarkGPUSides(b *testing.B) {
	be := gpuBackend(b)
	var evict []byte
	if kib, err := strconv.Atoi(os.Getenv("FLAGSHIM_BENCH_EVICT")); err == nil && kib > 0 {
		evict = make([]byte, kib<<10)
	}
	env := newPairedEnv(b, be)
	var floors map[string]func() error
	if goFloor != nil {
		floors = goFloor(b, env)
	}
	for _, c := range pairedRows(be, env) {
		sides := []struct {
			name string
			call func() error
		}{{"go", c.call}, {"gofloor", floors[c.name]}}
		for _, side := range sides {
			if side.call == nil {
				continue
			}
			b.Run(c.name+"/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				var cold []float64
				for b.Loop() {
					var t time.Time
					if evict != nil {
						for j := 0; j < len(evict); j += 64 {
							evict[j]++
						}
						t = time.Now()
					}
					if err := side.call(); err != nil {
						b.Fatal(err)
					}
					if evict != nil && len(cold) < 1<<20 {
						cold = append(cold, float64(time.Since(t).Nanoseconds()))
					}
					// A row with a drain (a launch, a record) drains
					// every slice, the clock stopped, as the paired one.
					if i++; c.drain != nil && i%c.n == 0 {
						b.StopTimer()
						if err := c.drain(); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
				}
				if c.drain != nil {
					if err := c.drain(); err != nil {
						b.Fatal(err)
					}
				}
				if evict != nil {
					b.ReportMetric(trimmedMean(cold), "cold-ns/op")
				}
			})
		}
	}
}

// trimmedMean is the mean of x without its largest 1% (calls that a
// preemption or an interrupt made long).
func trimmedMean(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	s = s[:len(s)-len(s)/100]
	var sum float64
	for _, v := range s {
		sum += v
	}
	return sum / float64(len(s))
}
