package cuda

import (
	"testing"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libcuda.so.1 (testdata/fake_libcuda.c: the kit's fake_cufamily.c), each
// in a child process.
var suite = &drivertest.Suite{Vendor: Vendor(), NewBackend: New, Version: [2]int{13, 0}, Presence: nvmlPresence}

func TestMain(m *testing.M) { drivertest.Main(m) }

func TestFakes(t *testing.T) { suite.Test(t) }

func BenchmarkCurrent(b *testing.B)                    { suite.BenchCurrent(b) }
func BenchmarkSetCurrent(b *testing.B)                 { suite.BenchSetCurrent(b) }
func BenchmarkSynchronize(b *testing.B)                { suite.BenchSynchronize(b) }
func BenchmarkSynchronizeRegisterLibFunc(b *testing.B) { suite.BenchSynchronizeRegisterLibFunc(b) }

func BenchmarkLaunch3Args(b *testing.B) {
	suite.BenchLaunch(b, "nop3", func(p device.Ptr) []any { return []any{p, p + 8, uint32(1000)} })
}

func BenchmarkLaunch8Args(b *testing.B) {
	suite.BenchLaunch(b, "nop8", func(p device.Ptr) []any {
		return []any{p, p + 8, uint32(1000), uint32(7), uint64(1 << 40), uint64(3), float32(0.5), float64(2.5)}
	})
}

func BenchmarkLaunchParallel(b *testing.B)           { suite.BenchLaunchParallel(b, "") }
func BenchmarkLaunchParallelOwnStreams(b *testing.B) { suite.BenchLaunchParallel(b, "own") }
func BenchmarkLaunchParallelOneStream(b *testing.B)  { suite.BenchLaunchParallel(b, "one") }
func BenchmarkCopyHtoD4K(b *testing.B)               { suite.BenchCopy(b, 4096, true) }
func BenchmarkCopyDtoH4K(b *testing.B)               { suite.BenchCopy(b, 4096, false) }
func BenchmarkStreamSynchronize(b *testing.B)        { suite.BenchStreamSynchronize(b) }
func BenchmarkEventRecord(b *testing.B)              { suite.BenchEventRecord(b) }
