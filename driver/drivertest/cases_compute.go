package drivertest

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// AddImage is a fake module (see fake_common.h): a global, the float add
// kernel with the parameters of plugins/nvshmem/testdata/add.cu (a, b, c,
// n), inc(p, n) adding 1 to n 32-bit counters, an echo of every argument
// type Launch takes, no-op kernels of 3 and 8 parameters and a kernel whose
// launch fails. No trailing NUL: LoadModule must add it.
const AddImage = `fake-module
global flagshim_marker 4
function add add
function inc inc
function echo echo ptr i32 u32 i64 u64 f32 f64 ptr ptr
function nop3 nop ptr ptr u32
function nop8 nop ptr ptr u32 u32 u64 u64 f32 f64
function boom fail
`

// oneLoader skips the case of a library without the Ex loader for a vendor
// that binds only one.
func oneLoader(s *Suite) string {
	if s.binds(driver.OpModuleLoadDataEx) && s.binds(driver.OpModuleLoadData) {
		return ""
	}
	return fmt.Sprintf("%s has one module loader (%s), no Ex form to go without", s.typ(), s.sym(driver.OpModuleLoadData))
}

// roundTrip is AddRoundTrip where the vendor binds launches; for a vendor
// without them, Launch of the add kernel reports device.ErrNotSupported
// and the data makes its round trip through device memory alone.
func (s *Suite) roundTrip(t *testing.T, c interface {
	device.Memory
	device.Compute
}, m device.LoadedModule, dev, n int) {
	t.Helper()
	if s.launches() {
		AddRoundTrip(t, c, m, dev, n)
		return
	}
	add, err := m.Function("add")
	require.NoError(t, err)
	p, err := c.Alloc(dev, uint64(4*n))
	require.NoError(t, err)
	in := Floats(n, func(i int) float32 { return float32(i) })
	require.NoError(t, c.CopyHtoD(dev, p, in))
	err = c.Launch(dev, add, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, p, p, p, uint32(n))
	assert.ErrorIs(t, err, device.ErrNotSupported)
	out := make([]byte, 4*n)
	require.NoError(t, c.CopyDtoH(dev, out, p))
	assert.Equal(t, in, out)
	require.NoError(t, c.Free(dev, p))
}

// counter calls an exported int(void) of the fake the child loaded.
func counter(t *testing.T, name string) func() int {
	t.Helper()
	lib, err := purego.Dlopen(os.Getenv(libEnv), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	sym, err := purego.Dlsym(lib, name)
	require.NoError(t, err)
	return func() int {
		r, _, _ := purego.SyscallN(sym)
		return int(int32(uint32(r)))
	}
}

// Floats encodes n float32 values f(i), little-endian.
func Floats(n int, f func(i int) float32) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f(i)))
	}
	return b
}

// AddRoundTrip allocates, copies, launches the add kernel of m on device dev
// over n floats, reads the result back, checks it and frees. c is any
// backend serving m (the vendor's, or flagos routing to it); the GPU tests
// use it too.
func AddRoundTrip(t *testing.T, c interface {
	device.Memory
	device.Compute
}, m device.LoadedModule, dev, n int) {
	t.Helper()
	add, err := m.Function("add")
	require.NoError(t, err)
	assert.Equal(t, "add", add.Name())
	ha := Floats(n, func(i int) float32 { return float32(i) })
	hb := Floats(n, func(i int) float32 { return float32(2*i) + 0.5 })
	var ptrs [3]device.Ptr
	for i := range ptrs {
		ptrs[i], err = c.Alloc(dev, uint64(4*n))
		require.NoError(t, err)
	}
	require.NoError(t, c.CopyHtoD(dev, ptrs[0], ha))
	require.NoError(t, c.CopyHtoD(dev, ptrs[1], hb))
	block := uint32(256)
	grid := (uint32(n) + block - 1) / block
	require.NoError(t, c.Launch(dev, add, [3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, ptrs[0], ptrs[1], ptrs[2], uint32(n)))
	hc := make([]byte, 4*n)
	require.NoError(t, c.CopyDtoH(dev, hc, ptrs[2]))
	CheckAdd(t, hc, n)
	for _, p := range ptrs {
		require.NoError(t, c.Free(dev, p))
	}
}

// CheckAdd checks that hc holds i + (2i + 0.5) for i < n.
func CheckAdd(t *testing.T, hc []byte, n int) {
	t.Helper()
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(hc[4*i:]))
		if want := float32(i) + float32(2*i) + 0.5; got != want {
			t.Fatalf("add: c[%d] = %v, want %v", i, got, want)
		}
	}
}

// EchoArgs launches echo(out, int32, uint32, int64, uint64, float32,
// float64, Ptr, uintptr), which stores each argument in an 8-byte slot of
// out, and checks every value came through. The GPU tests use it too (with
// a PTX echo that stores the first six).
func EchoArgs(t *testing.T, c interface {
	device.Memory
	device.Compute
}, m device.LoadedModule, dev int, slots int) {
	t.Helper()
	echo, err := m.Function("echo")
	require.NoError(t, err)
	out, err := c.Alloc(dev, 64)
	require.NoError(t, err)
	require.NoError(t, c.CopyHtoD(dev, out, make([]byte, 64)))
	args := []any{out, int32(-5), uint32(0xfffffff0), int64(-1 << 40), uint64(1<<63 + 5), float32(1.5), float64(-2.25),
		device.Ptr(0x1234_5678_9abc), uintptr(0x5678)}
	require.NoError(t, c.Launch(dev, echo, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, args[:1+slots]...))
	got := make([]byte, 64)
	require.NoError(t, c.CopyDtoH(dev, got, out))
	slot := func(i int) uint64 { return binary.LittleEndian.Uint64(got[8*i:]) }
	want := []uint64{uint64(uint32(0xfffffffb)), 0xfffffff0, uint64(1<<64 - 1<<40), 1<<63 + 5,
		uint64(math.Float32bits(1.5)), math.Float64bits(-2.25), 0x1234_5678_9abc, 0x5678}
	for i := range slots {
		assert.Equalf(t, want[i], slot(i), "argument %d (%T)", i+1, args[i+1])
	}
	require.NoError(t, c.Free(dev, out))
}

func moduleRoundTrip(t *testing.T, s *Suite, b *driver.Backend) {
	live, allocs := counter(t, "fake_live_modules"), counter(t, "fake_live_allocs")
	require.True(t, b.Available().Available)

	// A rejected image: the driver's code, and the JIT log when the library
	// has the Ex form.
	_, err := b.LoadModule(0, []byte("fake-module\nerror ptxas fatal : Unresolved extern function 'x'\n"), "bad.ptx")
	var e *clib.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.code(218), e.Code)
	assert.ErrorIs(t, err, device.ErrInvalidImage)
	assert.Contains(t, err.Error(), `"bad.ptx"`)
	if os.Getenv("DRIVERTEST_NO_EX") == "" && s.Vendor.JIT != (driver.JITOptions{}) {
		assert.Contains(t, err.Error(), s.sym(driver.OpModuleLoadDataEx))
		assert.Contains(t, err.Error(), "JIT log: ptxas fatal : Unresolved extern function 'x' (line 2)")
	}
	_, err = b.LoadModule(0, []byte("\x7fELF not a fake"), "x.cubin")
	assert.ErrorIs(t, err, device.ErrInvalidImage)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.code(200), e.Code)
	_, err = b.LoadModule(0, nil, "")
	assert.ErrorIs(t, err, device.ErrInvalidImage)
	assert.ErrorContains(t, err, "empty image")
	_, err = b.LoadModule(5, []byte(AddImage), "x")
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	assert.Zero(t, live())

	lm, err := b.LoadModule(1, []byte(AddImage), "add.fake")
	require.NoError(t, err)
	m := lm.(*driver.Module)
	assert.Equal(t, 1, live())
	assert.Equal(t, 1, m.Device())
	assert.Equal(t, "add.fake", m.Label())
	assert.Equal(t, s.typ(), m.Backend())
	assert.NotZero(t, m.Handle())
	assert.Nil(t, m.Applied())
	require.NoError(t, b.SetCurrent(0))
	anon, err := b.LoadModule(-1, []byte(AddImage+"\x00"), "")
	require.NoError(t, err)
	assert.Regexp(t, `^module#\d+$`, anon.Label())
	assert.Equal(t, 0, anon.(*driver.Module).Device(), "-1 is the current device")

	// Globals are device memory of the module's context.
	addr, size, ok, err := m.Global("flagshim_marker")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, uint64(4), size)
	assert.NotZero(t, addr)
	require.NoError(t, b.CopyHtoD(1, device.Ptr(addr), []byte{7, 0, 0, 0}))
	got := make([]byte, 4)
	require.NoError(t, b.CopyDtoH(1, got, device.Ptr(addr)))
	assert.Equal(t, []byte{7, 0, 0, 0}, got)
	_, _, ok, err = m.Global("nvshmemi_device_state_d")
	assert.NoError(t, err, "a missing global is not an error")
	assert.False(t, ok)
	_, _, _, err = m.Global("a\x00b")
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	_, err = m.Function("nope")
	assert.ErrorIs(t, err, device.ErrNotFound)
	assert.ErrorContains(t, err, `module "add.fake" (device 1) has no function "nope"`)

	s.roundTrip(t, b, m, 1, 1000)
	s.roundTrip(t, b, anon, 0, 3)
	if s.launches() {
		EchoArgs(t, b, m, 1, 8)
	}
	assert.Zero(t, allocs())

	add, err := m.Function("add")
	require.NoError(t, err)
	one := [3]uint32{1, 1, 1}
	p, err := b.Alloc(1, 16)
	require.NoError(t, err)
	if s.launches() {
		launchErrors(t, s, b, m, p)
	}
	assert.Error(t, b.CopyHtoD(1, device.Ptr(16), []byte{1}))
	assert.NoError(t, b.CopyHtoD(1, device.Ptr(16), nil), "an empty copy does nothing")
	assert.ErrorIs(t, b.CopyHtoD(5, p, []byte{1}), device.ErrInvalidIndex)
	require.NoError(t, b.Free(1, p))
	assert.ErrorIs(t, b.Free(1, p), device.ErrInvalidValue, "double free")
	assert.Zero(t, allocs())

	// Unload: idempotent; the module is unusable afterwards.
	require.NoError(t, m.Unload())
	assert.True(t, m.Unloaded())
	require.NoError(t, m.Unload())
	assert.Equal(t, 1, live())
	_, err = m.Function("add")
	assert.ErrorIs(t, err, device.ErrReleased)
	_, _, _, err = m.Global("flagshim_marker")
	assert.ErrorIs(t, err, device.ErrReleased)
	released := device.ErrReleased
	if !s.launches() {
		released = device.ErrNotSupported
	}
	assert.ErrorIs(t, b.Launch(1, add, one, one, 0, p, p, p, uint32(1)), released)
	require.NoError(t, anon.Unload())
	assert.Zero(t, live())
}

// launchErrors: Launch refuses what cannot run, and a kernel's failure is
// the driver's code.
func launchErrors(t *testing.T, s *Suite, b *driver.Backend, m device.LoadedModule, p device.Ptr) {
	var e *clib.Error
	add, err := m.Function("add")
	require.NoError(t, err)
	one := [3]uint32{1, 1, 1}
	err = b.Launch(0, add, one, one, 0, p, p, p, uint32(1))
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "loaded on device 1")
	assert.ErrorIs(t, b.Launch(3, add, one, one, 0, p, p, p, uint32(1)), device.ErrInvalidIndex)
	assert.ErrorIs(t, b.Launch(1, nil, one, one, 0), device.ErrInvalidValue)
	assert.ErrorIs(t, b.Launch(1, &driver.Function{}, one, one, 0), device.ErrInvalidValue)
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, p, p, p, 4), "int32")
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, p, p, p, "4"), "string")
	many := make([]any, driver.MaxLaunchArgs+1)
	assert.ErrorContains(t, b.Launch(1, add, one, one, 0, many...), "at most")
	boom, err := m.Function("boom")
	require.NoError(t, err)
	err = b.Launch(1, boom, one, one, 0)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.code(719), e.Code)
	assert.ErrorIs(t, err, device.ErrLaunchFailed)
	assert.ErrorContains(t, err, `"boom"`)
	// The fake checks pointers at launch (a GPU reports it later).
	err = b.Launch(1, add, one, one, 0, p, p, device.Ptr(16), uint32(4))
	assert.ErrorIs(t, err, device.ErrLaunchFailed)
}

func noModules(t *testing.T, s *Suite, b *driver.Backend) {
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	_, err := b.Properties(0)
	require.NoError(t, err)
	require.NoError(t, b.Synchronize(1))
	_, err = b.LoadModule(0, []byte(AddImage), "x")
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, s.sym(driver.OpModuleUnload))
	_, err = b.Alloc(0, 8)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, s.sym(driver.OpMemAlloc))
	assert.ErrorIs(t, b.CopyDtoH(0, []byte{1}, 1), device.ErrNotSupported)
	assert.ErrorIs(t, b.Launch(0, &driver.Function{}, [3]uint32{}, [3]uint32{}, 0), device.ErrNotSupported)
	_, err = b.NewStream(0)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	extra := b.Describe().Extra
	assert.Contains(t, extra, "missing.modules")
	assert.Contains(t, extra, "missing.launches")
	assert.Contains(t, extra, "missing.device memory")
}

// memory: allocation and its accounting; where the vendor binds no memory
// information (MemInfo is device.ErrNotSupported), the fake's total (the
// case's FAKE_TOTAL_MEM) stands for it.
func memory(t *testing.T, s *Suite, b *driver.Backend) {
	info := s.binds(driver.OpMemGetInfo)
	p, err := b.Properties(0)
	require.NoError(t, err)
	free0, total := uint64(0), uint64(1<<30)
	if info {
		free0, total, err = b.MemInfo(0)
		require.NoError(t, err)
		assert.Equal(t, p.TotalMemory, total)
	} else {
		_, _, err = b.MemInfo(0)
		assert.ErrorIs(t, err, device.ErrNotSupported)
	}
	const n = 64 << 20
	ptr, err := b.Alloc(0, n)
	require.NoError(t, err)
	if info {
		free1, _, err := b.MemInfo(0)
		require.NoError(t, err)
		assert.Equal(t, free0-n, free1, "MemInfo drops by what was allocated")
		other, _, err := b.MemInfo(1)
		require.NoError(t, err)
		assert.Equal(t, free0, other, "another device is untouched")
	}

	_, err = b.Alloc(0, total)
	onlyKind(t, err, device.ErrOutOfMemory, "an allocation past the device's free memory")
	var e *clib.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.Vendor.ResultName(s.code(2)), e.Name)
	assert.ErrorContains(t, err, s.sym(driver.OpMemAlloc))

	require.NoError(t, b.Free(0, ptr))
	if info {
		free2, _, err := b.MemInfo(0)
		require.NoError(t, err)
		assert.Equal(t, free0, free2, "Free gives it back")
	}
	// A copy to an address no allocation holds: the driver's invalid value
	// (the fake's 1), that alone.
	err = b.CopyHtoD(0, device.Ptr(16), []byte{1})
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.code(1), e.Code)
	if _, ok := s.Vendor.Results[s.code(1)]; ok {
		onlyKind(t, err, device.ErrInvalidValue, "a copy to memory no allocation holds")
	}
	_, err = b.Alloc(2, 8)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	_, err = b.Alloc(-7, 8)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
}
