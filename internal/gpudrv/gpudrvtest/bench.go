package gpudrvtest

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/internal/gpudrv"
)

// The benchmarks load the fake in the benchmark's own process, through an
// absolute override handed to the backend's spec (never the environment), so
// no other test of the process is affected. The library is built once per
// process into a private temporary folder that Cleanup removes.
var bench struct {
	once sync.Once
	dir  string
	path string
	b    Backend
	err  string

	modOnce sync.Once
	mod     *gpudrv.Module
	modErr  error
}

func (h *Harness) benchBackend(b *testing.B) (Backend, string) {
	b.Helper()
	bench.once.Do(func() {
		dir, err := os.MkdirTemp("", "gpudrvbench")
		if err != nil {
			bench.err = err.Error()
			return
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			bench.err = err.Error()
			return
		}
		bench.dir = dir
		bench.path = filepath.Join(dir, h.Lib+".so.1")
		h.buildAt(b, bench.path)
		spec := h.Spec
		spec.Dirs = nil
		spec.Getenv = func(k string) string {
			if k == h.EnvVar {
				return bench.path
			}
			return ""
		}
		bench.b = h.New(spec)
		if r := bench.b.Available(); !r.Available {
			bench.err = r.Reason
		}
	})
	if bench.err != "" {
		b.Fatal(bench.err)
	}
	if bench.b == nil {
		b.Skip("no fake library")
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
func (h *Harness) BenchCurrent(b *testing.B) {
	be, _ := h.benchBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Current(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchSetCurrent measures SetCurrent, alternating devices.
func (h *Harness) BenchSetCurrent(b *testing.B) {
	be, _ := h.benchBackend(b)
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
func (h *Harness) BenchSynchronize(b *testing.B) {
	be, _ := h.benchBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Synchronize(-1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchSynchronizeRegisterLibFunc does what Synchronize does through
// purego.RegisterLibFunc's reflection-built functions, for comparison.
func (h *Harness) BenchSynchronizeRegisterLibFunc(b *testing.B) {
	_, path := h.benchBackend(b)
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		b.Fatal(err)
	}
	var (
		deviceGet  func(dev *int32, ordinal int32) int32
		retain     func(ctx *uintptr, dev int32) int32
		setCurrent func(ctx uintptr) int32
		synchron   func() int32
	)
	purego.RegisterLibFunc(&deviceGet, lib, h.sym("DeviceGet"))
	purego.RegisterLibFunc(&retain, lib, h.sym("DevicePrimaryCtxRetain"))
	purego.RegisterLibFunc(&setCurrent, lib, h.sym("CtxSetCurrent"))
	purego.RegisterLibFunc(&synchron, lib, h.sym("CtxSynchronize"))
	var dev int32
	var ctx uintptr
	if r := deviceGet(&dev, 0); r != 0 {
		b.Fatal(r)
	}
	if r := retain(&ctx, dev); r != 0 {
		b.Fatal(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		runtime.LockOSThread()
		r := setCurrent(ctx)
		if r == 0 {
			r = synchron()
		}
		runtime.UnlockOSThread()
		if r != 0 {
			b.Fatal(r)
		}
	}
}

func (h *Harness) buildAt(tb testing.TB, out string) {
	tb.Helper()
	dltestBuild(tb, h, out)
}

// BenchLaunch measures launch, which calls Launch on the package's
// concrete *Backend (so the arguments stay on the caller's stack as in real
// use; a call through the Backend interface would move them to the heap),
// on the fake's no-op kernel fn ("nop3", "nop8") with a 64-byte buffer p. The
// fake runs kernels synchronously, so this is the binding's own cost:
// marshalling into the pinned buffer, thread lock, context, call.
func (h *Harness) BenchLaunch(b *testing.B, fn string, launch func(be Backend, fn gpudrv.Function, p gpudrv.DevicePtr) error) {
	be, _ := h.benchBackend(b)
	bench.modOnce.Do(func() {
		bench.mod, bench.modErr = be.LoadModule(0, []byte(AddImage), "bench")
	})
	if bench.modErr != nil {
		b.Fatal(bench.modErr)
	}
	f, err := bench.mod.Function(fn)
	if err != nil {
		b.Fatal(err)
	}
	p, err := be.Alloc(0, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(0, p)
	b.ReportAllocs()
	for b.Loop() {
		if err := launch(be, f, p); err != nil {
			b.Fatal(err)
		}
	}
}
