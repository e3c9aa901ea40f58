//go:build gpu

package clib

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The raw benchmarks take the backend away: they call the real libcuda's
// functions through the kit's transition (ccall, ccallThen) or
// purego.SyscallN on a context made current once, so that what Synchronize
// costs over the C floor can be split into the transition and the rest
// (scripts/bench-ratio.sh runs them next to scripts/cfloor.c's same loops).

// rawCUDA is libcuda opened directly, initialized, with device 0's primary
// context retained.
type rawCUDA struct {
	setCurrent, synchronize uintptr
	ctx                     uintptr
}

func openRawCUDA(b *testing.B) *rawCUDA {
	b.Helper()
	path := os.Getenv("FLAGOS_LIBCUDA_PATH")
	if path == "" {
		path = "libcuda.so.1"
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		b.Skipf("raw benchmarks need the real CUDA driver: %v", err)
	}
	sym := func(name string) uintptr {
		p, err := purego.Dlsym(lib, name)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return p
	}
	r := &rawCUDA{setCurrent: sym("cuCtxSetCurrent"), synchronize: sym("cuCtxSynchronize")}
	must := func(what string, rc uintptr) {
		if int32(rc) != 0 {
			b.Fatalf("%s returned %d", what, int32(rc))
		}
	}
	var dev int32
	rc, _, _ := purego.SyscallN(sym("cuInit"), 0)
	must("cuInit", rc)
	rc, _, _ = purego.SyscallN(sym("cuDeviceGet"), uintptr(unsafe.Pointer(&dev)), 0)
	must("cuDeviceGet", rc)
	rc, _, _ = purego.SyscallN(sym("cuDevicePrimaryCtxRetain"), uintptr(unsafe.Pointer(&r.ctx)), uintptr(dev))
	must("cuDevicePrimaryCtxRetain", rc)
	return r
}

// BenchmarkGPURawSetThenSync is Synchronize's transition alone: one
// ccallThen making the context current, then synchronizing.
func BenchmarkGPURawSetThenSync(b *testing.B) {
	r := openRawCUDA(b)
	args := []uintptr{r.ctx}
	b.ReportAllocs()
	for b.Loop() {
		if r1, r2 := ccallThen(r.setCurrent, args, r.synchronize); r1|r2 != 0 {
			b.Fatal(r1, r2)
		}
	}
}

// BenchmarkGPURawSyncLocked is cuCtxSynchronize alone through ccall, on a
// locked thread whose context was made current once.
func BenchmarkGPURawSyncLocked(b *testing.B) {
	r := openRawCUDA(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if rc := ccall(r.setCurrent, []uintptr{r.ctx}); rc != 0 {
		b.Fatal(rc)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rc := ccall(r.synchronize, nil); rc != 0 {
			b.Fatal(rc)
		}
	}
}

// BenchmarkGPURawSetCurrent is cuCtxSetCurrent alone through ccall: the
// transition's own cost plus the driver's cheapest call.
func BenchmarkGPURawSetCurrent(b *testing.B) {
	r := openRawCUDA(b)
	args := []uintptr{r.ctx}
	b.ReportAllocs()
	for b.Loop() {
		if rc := ccall(r.setCurrent, args); rc != 0 {
			b.Fatal(rc)
		}
	}
}

// BenchmarkGPURawSyscallNPair is the two calls through purego.SyscallN on a
// locked thread (the path before ccall existed), for comparison.
func BenchmarkGPURawSyscallNPair(b *testing.B) {
	r := openRawCUDA(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	for b.Loop() {
		r1, _, _ := purego.SyscallN(r.setCurrent, r.ctx)
		r2, _, _ := purego.SyscallN(r.synchronize)
		if r1|r2 != 0 {
			b.Fatal(r1, r2)
		}
	}
}
