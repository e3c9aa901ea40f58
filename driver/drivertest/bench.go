package drivertest

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The benchmarks load the fake in the benchmark's own process, through an
// absolute override handed to the backend's getenv (never the environment),
// so no other test of the process is affected. The library is built once
// per process into a private temporary folder that Cleanup removes.
var bench struct {
	once sync.Once
	dir  string
	path string
	b    *driver.Backend
	err  string

	modOnce sync.Once
	mod     device.LoadedModule
	modErr  error
}

func (s *Suite) benchBackend(b *testing.B) (*driver.Backend, string) {
	b.Helper()
	bench.once.Do(func() {
		dir, err := os.MkdirTemp("", "drivertestbench")
		if err != nil {
			bench.err = err.Error()
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			bench.err = err.Error()
			return
		}
		bench.dir = dir
		bench.path = filepath.Join(dir, s.soname())
		s.buildAt(b, bench.path)
		lib := s.Vendor.Library
		lib.Dirs = nil
		env := s.Vendor.Library.EnvVar
		bench.b = driver.New(s.Vendor, driver.WithLibrary(lib), driver.WithGetenv(func(k string) string {
			if k == env {
				return bench.path
			}
			return ""
		}))
		if r := bench.b.Available(); !r.Available {
			bench.err = r.Reason
		}
	})
	if bench.err != "" {
		b.Fatal(bench.err)
	}
	if bench.b == nil {
		b.Skip("no fake library (no C compiler)")
	}
	return bench.b, bench.path
}

// Cleanup removes the benchmarks' temporary folder; call it from TestMain.
func Cleanup() {
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
}

// BenchCurrent measures Current.
func (s *Suite) BenchCurrent(b *testing.B) {
	be, _ := s.benchBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Current(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchSetCurrent measures SetCurrent, alternating devices.
func (s *Suite) BenchSetCurrent(b *testing.B) {
	be, _ := s.benchBackend(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := be.SetCurrent(i & 1); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchSynchronize measures Synchronize of the current device.
func (s *Suite) BenchSynchronize(b *testing.B) {
	be, _ := s.benchBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Synchronize(-1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchSynchronizeRegisterLibFunc does what Synchronize does through
// purego.RegisterLibFunc's reflection-built functions, for comparison: make
// the device current (a retained primary context, or hipSetDevice for a
// CurrentDevice vendor), then synchronize.
func (s *Suite) BenchSynchronizeRegisterLibFunc(b *testing.B) {
	_, path := s.benchBackend(b)
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		b.Fatal(err)
	}
	var synchron func() int32
	purego.RegisterLibFunc(&synchron, lib, s.sym(driver.OpSynchronize))
	selectDev := s.registerSelect(b, lib)
	b.ReportAllocs()
	for b.Loop() {
		runtime.LockOSThread()
		r := selectDev()
		if r == 0 {
			r = synchron()
		}
		runtime.UnlockOSThread()
		if r != 0 {
			b.Fatal(r)
		}
	}
}

// registerSelect returns a function that makes device 0 current through
// RegisterLibFunc'd symbols, the way the vendor's context model does.
func (s *Suite) registerSelect(b *testing.B, lib uintptr) func() int32 {
	if s.Vendor.Context == driver.CurrentDevice {
		var setDevice func(ordinal int32) int32
		purego.RegisterLibFunc(&setDevice, lib, s.sym(driver.OpSetDevice))
		return func() int32 { return setDevice(0) }
	}
	var (
		deviceGet  func(dev *int32, ordinal int32) int32
		retain     func(ctx *uintptr, dev int32) int32
		setCurrent func(ctx uintptr) int32
	)
	purego.RegisterLibFunc(&deviceGet, lib, s.sym(driver.OpDeviceGet))
	purego.RegisterLibFunc(&retain, lib, s.sym(driver.OpPrimaryCtxRetain))
	purego.RegisterLibFunc(&setCurrent, lib, s.sym(driver.OpCtxSetCurrent))
	var dev int32
	var ctx uintptr
	if r := deviceGet(&dev, 0); r != 0 {
		b.Fatal(r)
	}
	if r := retain(&ctx, dev); r != 0 {
		b.Fatal(r)
	}
	return func() int32 { return setCurrent(ctx) }
}

// BenchLaunch measures Launch of the fake's no-op kernel fn ("nop3",
// "nop8") with arguments built once (args(p)), on the concrete
// *driver.Backend. The fake runs kernels synchronously, so this is the
// binding's own cost: marshalling, thread lock, context, call.
func (s *Suite) BenchLaunch(b *testing.B, fn string, args func(p device.Ptr) []any) {
	be, _ := s.benchBackend(b)
	f, err := benchModule(b, be).Function(fn)
	if err != nil {
		b.Fatal(err)
	}
	p, err := be.Alloc(0, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(0, p)
	a := args(p)
	one := [3]uint32{1, 1, 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Launch(0, f, one, one, 0, a...); err != nil {
			b.Fatal(err)
		}
	}
}

// benchModule is the fake's add image loaded once for the benchmarks.
func benchModule(b *testing.B, be *driver.Backend) device.LoadedModule {
	b.Helper()
	bench.modOnce.Do(func() {
		bench.mod, bench.modErr = be.LoadModule(0, []byte(AddImage), "bench")
	})
	if bench.modErr != nil {
		b.Fatal(bench.modErr)
	}
	return bench.mod
}

// BenchLaunchParallel measures Launch from b.RunParallel's goroutines
// (GOMAXPROCS of them: -cpu 1,2,...): on the default stream (Backend.Launch,
// stream ""), each on a stream of its own ("own") or all on one ("one").
// It shows what launches from several goroutines cost each other in the
// binding (the launch buffers, the backend's state). The fake takes one
// lock per launch and runs a stream's work on a thread of its own, so the
// binding's contention is what grows beyond the fake's; driver's
// BenchmarkLaunchBufParallel measures the buffers alone.
func (s *Suite) BenchLaunchParallel(b *testing.B, stream string) {
	be, _ := s.benchBackend(b)
	f, err := benchModule(b, be).Function("nop3")
	if err != nil {
		b.Fatal(err)
	}
	p, err := be.Alloc(0, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(0, p)
	var shared device.Stream
	if stream == "one" {
		if shared, err = be.NewStream(0); err != nil {
			b.Fatal(err)
		}
		defer shared.Destroy()
	}
	dims := [3]uint32{1, 1, 1}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		st := shared
		if stream == "own" {
			var err error
			if st, err = be.NewStream(0); err != nil {
				b.Error(err)
				return
			}
			defer st.Destroy()
		}
		a := []any{p, p + 8, uint32(1000)}
		for pb.Next() {
			var err error
			if st == nil {
				err = be.Launch(0, f, dims, dims, 0, a...)
			} else {
				err = st.Launch(f, dims, dims, 0, a...)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchCopy measures a synchronous copy of size bytes of Go memory to the
// device (toDevice) or back.
func (s *Suite) BenchCopy(b *testing.B, size int, toDevice bool) {
	be, _ := s.benchBackend(b)
	p, err := be.Alloc(0, uint64(size))
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(0, p)
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if toDevice {
			err = be.CopyHtoD(0, p, buf)
		} else {
			err = be.CopyDtoH(0, buf, p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchStreamSynchronize measures Synchronize of an idle stream.
func (s *Suite) BenchStreamSynchronize(b *testing.B) {
	be, _ := s.benchBackend(b)
	st, err := be.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Destroy()
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchEventRecord measures recording an event on a stream.
func (s *Suite) BenchEventRecord(b *testing.B) {
	be, _ := s.benchBackend(b)
	st, err := be.NewStream(0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Destroy()
	ev, err := be.NewEvent(0)
	if err != nil {
		b.Fatal(err)
	}
	defer ev.Destroy()
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Record(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// Main runs a vendor package's tests and removes the benchmarks' folder;
// call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}
