//go:build gpu

package cuda

import "testing"

// BenchmarkGPUSides runs each of BenchmarkGPUPaired's rows one side at a
// time, in a plain loop: the Go backend (go) and, where the test binary is
// built with cgo, the Go floor (gofloor). It needs no C floor, so it runs
// against the fake libcuda too (scripts/bench-ratio.sh fake). It is the
// benchmark to profile (-cpuprofile, perf record) and to compare with
// benchstat; the paired one, whose sides rotate within a second, stays the
// measure of record on a GPU, whose own cost drifts between seconds.
func BenchmarkGPUSides(b *testing.B) {
	be := gpuBackend(b)
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
				for b.Loop() {
					if err := side.call(); err != nil {
						b.Fatal(err)
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
			})
		}
	}
}
