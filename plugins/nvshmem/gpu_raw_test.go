//go:build gpu || nvshmem_raw

package nvshmem

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// rawCUDA is a test-only binding of the few driver calls the scenario needs,
// so the plugin's proof does not wait for drivers/cuda's module API. Every
// call runs on the test's locked thread, with device 0's primary context
// current, as a driver would load modules.
type rawCUDA struct {
	t                                                  *testing.T
	loadData, getGlobal, getFunction, unload           uintptr
	memAlloc, memFree, htod, dtoh, launch, synchronize uintptr
}

func (c *rawCUDA) check(fn string, r uintptr) {
	c.t.Helper()
	require.Zerof(c.t, int32(uint32(r)), "%s returned CUresult %d", fn, int32(uint32(r)))
}

func openRawCUDA(t *testing.T) *rawCUDA {
	l := cuda.Vendor().Library // the very search drivers/cuda makes
	lib, err := dl.Open(dl.Spec{Name: l.Name, EnvVar: l.EnvVar, Sonames: l.Sonames, Dirs: l.Dirs})
	require.NoError(t, err)
	sym := func(names ...string) uintptr {
		a, _, err := lib.SymAny(names...)
		require.NoError(t, err)
		return a
	}
	c := &rawCUDA{t: t,
		loadData: sym("cuModuleLoadData"), getGlobal: sym("cuModuleGetGlobal_v2"), getFunction: sym("cuModuleGetFunction"),
		unload: sym("cuModuleUnload"), memAlloc: sym("cuMemAlloc_v2"), memFree: sym("cuMemFree_v2"),
		htod: sym("cuMemcpyHtoD_v2"), dtoh: sym("cuMemcpyDtoH_v2"), launch: sym("cuLaunchKernel"), synchronize: sym("cuCtxSynchronize"),
	}
	var dev int32
	var ctx uintptr
	c.check("cuInit", call1(sym("cuInit"), 0))
	c.check("cuDeviceGet", call1(sym("cuDeviceGet"), uintptr(unsafe.Pointer(&dev)), 0))
	c.check("cuDevicePrimaryCtxRetain", call1(sym("cuDevicePrimaryCtxRetain"), uintptr(unsafe.Pointer(&ctx)), uintptr(dev)))
	c.check("cuCtxSetCurrent", call1(sym("cuCtxSetCurrent"), ctx))
	return c
}

// rawModule is a loaded module as hooks see it.
type rawModule struct {
	c      *rawCUDA
	handle uintptr
	label  string
}

func (m *rawModule) Backend() device.Type { return device.CUDA }
func (m *rawModule) Handle() uintptr      { return m.handle }
func (m *rawModule) Label() string        { return m.label }
func (m *rawModule) Global(name string) (uintptr, uint64, bool, error) {
	var addr uintptr
	var size uint64
	cname := append([]byte(name), 0)
	r := int32(uint32(call1(m.c.getGlobal, uintptr(unsafe.Pointer(&addr)), uintptr(unsafe.Pointer(&size)), m.handle, uintptr(unsafe.Pointer(&cname[0])))))
	switch r {
	case 0:
		return addr, size, true, nil
	case 500: // CUDA_ERROR_NOT_FOUND
		return 0, 0, false, nil
	}
	return 0, 0, false, fmt.Errorf("cuModuleGetGlobal(%s) returned %d", name, r)
}

// load loads image and applies hooks, unloading again if they fail, as the
// driver does.
func (c *rawCUDA) load(hs *hooks.Hooks, image []byte, label string) *rawModule {
	c.t.Helper()
	img := append(append([]byte(nil), image...), 0) // PTX must end in NUL
	m := &rawModule{c: c, label: label}
	c.check("cuModuleLoadData "+label, call1(c.loadData, uintptr(unsafe.Pointer(&m.handle)), uintptr(unsafe.Pointer(&img[0]))))
	if err := hs.Apply(m); err != nil {
		call1(c.unload, m.handle)
		require.NoError(c.t, err)
	}
	return m
}

func (c *rawCUDA) unloadModule(hs *hooks.Hooks, m *rawModule) {
	c.t.Helper()
	require.NoError(c.t, hs.Release(m))
	c.check("cuModuleUnload", call1(c.unload, m.handle))
}

func (c *rawCUDA) function(m *rawModule, name string) uintptr {
	var f uintptr
	cname := append([]byte(name), 0)
	c.check("cuModuleGetFunction "+name, call1(c.getFunction, uintptr(unsafe.Pointer(&f)), m.handle, uintptr(unsafe.Pointer(&cname[0]))))
	return f
}

func (c *rawCUDA) alloc(n int) uintptr {
	var p uintptr
	c.check("cuMemAlloc", call1(c.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)))
	return p
}

// run launches f with 64-bit or 32-bit arguments on one grid, synchronously.
func (c *rawCUDA) run(f uintptr, grid, block uint32, args ...any) {
	c.t.Helper()
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case uintptr:
			vals[i] = uint64(v)
		case uint32:
			vals[i] = uint64(v) // little-endian: the low 4 bytes are the value
		default:
			c.t.Fatalf("argument %d: %T", i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	var params uintptr
	if len(ptrs) > 0 {
		params = uintptr(unsafe.Pointer(&ptrs[0]))
	}
	c.check("cuLaunchKernel", call1(c.launch, f, uintptr(grid), 1, 1, uintptr(block), 1, 1, 0, 0, params, 0))
	runtime.KeepAlive(vals)
	runtime.KeepAlive(ptrs)
	c.check("cuCtxSynchronize", call1(c.synchronize))
}

func (c *rawCUDA) readInts(p uintptr, n int) []int32 {
	out := make([]int32, n)
	c.check("cuMemcpyDtoH", call1(c.dtoh, uintptr(unsafe.Pointer(&out[0])), p, uintptr(4*n)))
	return out
}

// TestGPURawScenario is the proof with the plugin alone: one PE,
// (a) a plain PTX kernel runs and the hook is not called, (b) the control,
// (c) the NVSHMEM module gets its hook and writes my_pe 0 and n_pes 1, (d)
// reloads in a loop, then another module.
func TestGPURawScenario(t *testing.T) {
	if !dltest.IsChild(t) {
		runGPUChild(t, t.Name())
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := openRawCUDA(t)
	lib, err := Open()
	require.NoError(t, err)
	major, minor, patch, _ := lib.Version()
	t.Logf("NVSHMEM %d.%d.%d from %s", major, minor, patch, lib.Path)
	uid, err := lib.GetUniqueID()
	require.NoError(t, err)
	require.NoError(t, lib.InitUniqueID(0, 1, uid))
	require.Equal(t, StatusInitialized, lib.InitStatus())
	require.Equal(t, 0, lib.MyPE())
	require.Equal(t, 1, lib.NPEs())
	hs := hooks.NewHooks()
	_, err = lib.Register(hs)
	require.NoError(t, err)

	// (a) the plain kernel.
	plain := c.load(hs, fixture(t, "add.ptx"), "add.ptx")
	assert.Nil(t, hs.Applied(plain), "the NVSHMEM hook is not applied to a plain module")
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i)+0.5
	}
	da, db, dc := c.alloc(4*n), c.alloc(4*n), c.alloc(4*n)
	c.check("cuMemcpyHtoD", call1(c.htod, da, uintptr(unsafe.Pointer(&a[0])), 4*n))
	c.check("cuMemcpyHtoD", call1(c.htod, db, uintptr(unsafe.Pointer(&b[0])), 4*n))
	c.run(c.function(plain, "add"), (n+255)/256, 256, da, db, dc, uint32(n))
	raw := c.readInts(dc, n)
	for i, v := range raw {
		got := math.Float32frombits(uint32(v))
		if got != a[i]+b[i] {
			t.Fatalf("add: c[%d] = %v, want %v", i, got, a[i]+b[i])
		}
	}

	// (b) the control: what a global post-load hook would do to it.
	fmt.Fprintln(os.Stderr, controlStart)
	rc, err := lib.CumoduleInit(plain.Handle())
	fmt.Fprintln(os.Stderr, controlEnd)
	require.NoError(t, err)
	assert.Equal(t, 7, rc, "nvshmemx_cumodule_init on a plain module")
	c.unloadModule(hs, plain)

	// (c) and (d): the NVSHMEM module, loaded and unloaded in a loop, then
	// another one, then the first again.
	out := c.alloc(8)
	expect := func(m *rawModule, kernel string, want []int32, what string) {
		t.Helper()
		assert.Equal(t, []string{HookName}, hs.Applied(m), what)
		c.check("cuMemcpyHtoD", call1(c.htod, out, uintptr(unsafe.Pointer(&[]int32{-7, -7}[0])), 8))
		c.run(c.function(m, kernel), 1, 1, out)
		assert.Equal(t, want, c.readInts(out, 2), what)
	}
	for round := range 5 {
		m := c.load(hs, fixture(t, "pe.cubin"), "pe.cubin")
		expect(m, "write_pe", []int32{0, 1}, fmt.Sprint("pe.cubin round ", round))
		c.unloadModule(hs, m)
		assert.Nil(t, hs.Applied(m))
	}
	m2 := c.load(hs, fixture(t, "pe2.cubin"), "pe2.cubin")
	expect(m2, "write_pe2", []int32{100, 101}, "pe2.cubin after the reloads")
	m1 := c.load(hs, fixture(t, "pe.cubin"), "pe.cubin")
	expect(m1, "write_pe", []int32{0, 1}, "pe.cubin beside pe2.cubin")
	c.unloadModule(hs, m1)
	expect(m2, "write_pe2", []int32{100, 101}, "pe2.cubin after pe.cubin's unload")
	c.unloadModule(hs, m2)
	for _, p := range []uintptr{da, db, dc, out} {
		c.check("cuMemFree", call1(c.memFree, p))
	}
	require.NoError(t, lib.Finalize())
}

// call1 calls a C function with pointer arguments written as
// uintptr(unsafe.Pointer(&x)) in the call: go:uintptrescapes keeps each x
// alive and in place until the call returns, as it does for SyscallN.
//
//go:uintptrescapes
func call1(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
