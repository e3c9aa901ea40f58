package driver

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
)

// testVendor is a small vendor description for the tests that need no
// library.
func testVendor(t device.Type, prefix string) *Vendor {
	return &Vendor{
		Type:        t,
		ErrorPrefix: prefix,
		VersionBase: 1000,
		Library:     clib.Library{Name: "libtest", Sonames: []string{"libtest.so.1"}},
		Symbols: map[Op][]string{
			OpInit: {"tInit"}, OpDriverVersion: {"tV"}, OpDeviceCount: {"tC"}, OpDeviceGet: {"tG"}, OpDeviceName: {"tN"},
			OpDeviceTotalMem: {"tM_v2", "tM"}, OpDeviceAttribute: {"tA"}, OpSynchronize: {"tS"},
			OpPrimaryCtxRetain: {"tR"}, OpCtxSetCurrent: {"tSet"},
		},
		Results: map[int]Result{
			2:   {Name: prefix + "ERROR_OUT_OF_MEMORY", Is: []error{device.ErrOutOfMemory}},
			100: {Name: prefix + "ERROR_NO_DEVICE", Is: []error{ErrNoDevice, device.ErrNotAvailable}},
		},
	}
}

func TestErrorMessage(t *testing.T) {
	e := clib.NewError("cuda", "cuInit", 100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected")
	assert.Equal(t, "cuda: cuInit returned CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected", e.Error())
	e.Message = ""
	assert.Equal(t, "cuda: cuInit returned CUDA_ERROR_NO_DEVICE (100)", e.Error())
	assert.Equal(t, "CUDA_ERROR_NO_DEVICE (100)", bare(e))
	assert.Equal(t, "other", bare(errors.New("other")))
}

func TestErrorIs(t *testing.T) {
	v := testVendor(device.CUDA, "CUDA_")
	a := &api{v: v}
	e := fmt.Errorf("wrapped: %w", a.errorOf(OpInit, 100))
	assert.ErrorIs(t, e, ErrNoDevice)
	assert.ErrorIs(t, e, device.ErrNotAvailable)
	assert.NotErrorIs(t, e, device.ErrOutOfMemory)
	assert.ErrorIs(t, fmt.Errorf("x: %w", a.errorOf(OpInit, 2)), device.ErrOutOfMemory)
	assert.ErrorIs(t, e, &clib.Error{Library: "cuda", Code: 100})
	assert.NotErrorIs(t, e, &clib.Error{Library: "musa", Code: 100}, "another vendor's code is another error")
	assert.NotErrorIs(t, a.errorOf(OpInit, 700), device.ErrOutOfMemory, "a code the table lacks matches nothing")
	assert.Equal(t, "CUDA_ERROR_UNKNOWN_CODE_700", a.errorOf(OpInit, 700).Name)
}

func TestVendorValidate(t *testing.T) {
	require.NoError(t, testVendor(device.CUDA, "CUDA_").Validate())
	v := testVendor(device.CUDA, "CUDA_")
	delete(v.Symbols, OpCtxSetCurrent)
	assert.ErrorContains(t, v.Validate(), "OpCtxSetCurrent")
	v.Context = CurrentDevice
	assert.ErrorContains(t, v.Validate(), "OpSetDevice", "the context model decides what is required")
	v.Context = DeviceContext
	v.Symbols[OpCtxSetCurrent], v.Symbols[OpSetDevice] = []string{"tSet"}, []string{"tSetDev"}
	assert.ErrorContains(t, v.Validate(), "OpCtxGetCurrent", "DeviceContext reads the context a selection made current")
	v.Symbols[OpCtxGetCurrent] = []string{"tGet"}
	delete(v.Symbols, OpPrimaryCtxRetain)
	require.NoError(t, v.Validate(), "DeviceContext needs no primary-context retain")
	delete(v.Symbols, OpDeviceGet)
	assert.ErrorContains(t, v.Validate(), "OpDeviceGet")
	v.Adapters = map[Op]Adapter{OpDeviceGet: func(fn *clib.Func, args ...uintptr) int { return 0 }}
	require.NoError(t, v.Validate(), "an adapter alone serves a required operation without a C function")
	v = testVendor(device.CUDA, "CUDA_")
	v.UUIDForm = UUIDHexText + 1
	assert.ErrorContains(t, v.Validate(), "unknown UUID form")
	v = testVendor(device.CUDA, "CUDA_")
	delete(v.Symbols, OpDeviceTotalMem)
	assert.NoError(t, v.Validate(), "a vendor without a total-memory function names none (Properties reads OpMemGetInfo)")
	assert.NotContains(t, requiredOps(v), OpDeviceTotalMem)
	assert.Contains(t, requiredOps(testVendor(device.CUDA, "CUDA_")), OpDeviceTotalMem, "named: required")
	v = testVendor("CUDA", "CUDA_")
	assert.ErrorContains(t, v.Validate(), "type name")
	v = testVendor(device.CUDA, "CUDA_")
	v.Library.Sonames = nil
	assert.ErrorContains(t, v.Validate(), "soname")
	assert.Error(t, (*Vendor)(nil).Validate())
	assert.Panics(t, func() { New(&Vendor{}) }, "a broken description is a program bug")
}

func TestDecodeVersion(t *testing.T) {
	for _, c := range []struct{ v, base, major, minor int }{
		{13000, 1000, 13, 0},
		{12040, 1000, 12, 4},
		{11080, 1000, 11, 8},
		{30100, 10000, 3, 1},
		{40203, 10000, 4, 2},
		{60140092, 10000000, 6, 1},
		{70000000, 10000000, 7, 0},
		{0, 1000, 0, 0},
		{-1, 1000, 0, 0},
		{13000, 7, 0, 0},
	} {
		v := &Vendor{VersionBase: c.base}
		major, minor := v.DecodeVersion(c.v)
		assert.Equal(t, [2]int{c.major, c.minor}, [2]int{major, minor}, "%d base %d", c.v, c.base)
	}
	assert.Equal(t, "13.0", (&Vendor{VersionBase: 1000}).FormatVersion(13000))
	unknown := &Vendor{}
	assert.False(t, unknown.VersionKnown())
	assert.Equal(t, "30503", unknown.FormatVersion(30503), "an encoding that is not known: the number as it is")
	assert.Equal(t, "0.0", unknown.FormatVersion(0))
	assert.True(t, (&Vendor{VersionBase: 1000}).VersionKnown())
}

func FuzzDecodeVersion(f *testing.F) {
	for _, v := range []int{0, 13000, 12040, 30100, 60140092, -5, 1 << 31} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int) {
		for _, base := range []int{1000, 10000, 10000000} {
			major, minor := (&Vendor{VersionBase: base}).DecodeVersion(v)
			if v < 0 {
				if major != 0 || minor != 0 {
					t.Fatalf("negative %d decoded to %d.%d", v, major, minor)
				}
				continue
			}
			if minor < 0 || minor > 99 || major < 0 {
				t.Fatalf("%d base %d: %d.%d out of range", v, base, major, minor)
			}
			step := base / 100
			if got := major*base + minor*step; got != v-v%step {
				t.Fatalf("%d base %d: %d.%d re-encodes to %d", v, base, major, minor, got)
			}
		}
	})
}

func TestFormatUUID(t *testing.T) {
	u := [16]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}
	assert.Equal(t, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", FormatUUID("GPU-", u))
	assert.Equal(t, "00000000-0000-0000-0000-000000000000", FormatUUID("", [16]byte{}))
}

// A vendor's FormatUUID: the bytes in its form. ROCm's hold the 16 hex
// digits of ROCr's "GPU-<16 hex digits>" as characters (UUIDHexText).
func TestVendorFormatUUID(t *testing.T) {
	text := func(s string) (u [16]byte) {
		copy(u[:], s)
		return u
	}
	bin := [16]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}
	for _, tt := range []struct {
		name string
		form UUIDForm
		u    [16]byte
		want string
	}{
		{"binary, as CUDA", UUIDBinary, bin, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"},
		{"ROCm: 16 hex digits", UUIDHexText, text("1234abcd5678ef01"), "GPU-1234abcd5678ef01"},
		{"ROCm: upper case digits, as KFD's lower case", UUIDHexText, text("1234ABCD5678EF01"), "GPU-1234abcd5678ef01"},
		{"ROCm: leading zeros kept", UUIDHexText, text("00000000000000a1"), "GPU-00000000000000a1"},
		{"ROCm: an agent without a UUID (\"GPU-XX\")", UUIDHexText, text("XX"), ""},
		{"ROCm: all NUL", UUIDHexText, [16]byte{}, ""},
		{"ROCm: zero", UUIDHexText, text("0000000000000000"), ""},
		{"ROCm: fewer than 16 digits", UUIDHexText, text("1234abcd"), ""},
		{"ROCm: not hex", UUIDHexText, text("1234abcd5678ef0g"), ""},
		{"ROCm: binary bytes", UUIDHexText, bin, ""},
		{"ROCm: a sign", UUIDHexText, text("+234abcd5678ef01"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Vendor{UUIDPrefix: "GPU-", UUIDForm: tt.form}
			assert.Equal(t, tt.want, v.FormatUUID(tt.u))
		})
	}
}

func FuzzVendorFormatUUIDText(f *testing.F) {
	f.Add([]byte("0123456789abcdef"))
	f.Add([]byte("XX"))
	re := regexp.MustCompile(`^GPU-[0-9a-f]{16}$`)
	v := Vendor{UUIDPrefix: "GPU-", UUIDForm: UUIDHexText}
	f.Fuzz(func(t *testing.T, b []byte) {
		var u [16]byte
		copy(u[:], b)
		s := v.FormatUUID(u)
		if s == "" {
			return
		}
		if !re.MatchString(s) || !strings.EqualFold(s[4:], string(u[:])) {
			t.Fatalf("%q from %q", s, u)
		}
	})
}

func FuzzFormatUUID(f *testing.F) {
	f.Add([]byte("0123456789abcdef"))
	re := regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	f.Fuzz(func(t *testing.T, b []byte) {
		var u [16]byte
		copy(u[:], b)
		if s := FormatUUID("GPU-", u); !re.MatchString(s) {
			t.Fatalf("%q", s)
		}
	})
}

func TestModuleImage(t *testing.T) {
	ptx := []byte(".version 8.0")
	assert.Equal(t, append([]byte(".version 8.0"), 0), moduleImage(ptx), "PTX gets a NUL")
	assert.Equal(t, ".version 8.0", string(ptx), "the caller's bytes are not touched")
	withNul := []byte("x\x00")
	assert.Same(t, &withNul[0], &moduleImage(withNul)[0])
	elf := []byte("\x7fELF\x02\x01")
	assert.Same(t, &elf[0], &moduleImage(elf)[0], "a cubin is passed as is")
	fat := []byte{0x50, 0xed, 0x55, 0xba, 1, 0}
	assert.Same(t, &fat[0], &moduleImage(fat)[0], "a fatbin is passed as is")
	_, err := cName("function", "a\x00b")
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	_, err = cName("function", "")
	assert.ErrorIs(t, err, device.ErrInvalidValue)
}

func TestLaunchArgs(t *testing.T) {
	lb, err := getLaunchBuf(slotHere())
	require.NoError(t, err)
	defer putLaunchBuf(slotHere(), lb, MaxLaunchArgs)
	for i, c := range []struct {
		arg  any
		want uint64
	}{
		{device.Ptr(1 << 40), 1 << 40},
		{uintptr(7), 7},
		{int8(-1), 0xff},
		{uint8(200), 200},
		{int16(-2), 0xfffe},
		{uint16(9), 9},
		{int32(-1), 0xffffffff},
		{uint32(5), 5},
		{int64(-2), 1<<64 - 2},
		{uint64(9), 9},
		{float32(1), 0x3f800000},
		{float64(1), 0x3ff0000000000000},
	} {
		require.NoError(t, lb.set(i, c.arg, 0))
		assert.Equal(t, c.want, lb.vals[i], "%T", c.arg)
		assert.Equal(t, uintptr(unsafe.Pointer(&lb.vals[i])), lb.ptrs[i])
	}
	for _, bad := range []any{3, uint(3), "x", lb, nil} {
		err := lb.set(0, bad, 0)
		assert.ErrorIs(t, err, device.ErrInvalidValue, "%T", bad)
	}
	assert.ErrorContains(t, lb.set(0, 3, 0), "Go int")
	assert.ErrorContains(t, lb.set(0, "x", 0), "type string")
	// Where the kernel's parameter sizes are known, another size is refused.
	require.NoError(t, lb.set(0, float32(1), 4))
	err = lb.set(1, float64(1), 4)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "argument 1 is 8 byte(s) (float64) but the kernel's parameter 1 is 4 byte(s)")
}

// A buffer given back points every slot it used at the zero block again:
// the next launch's missing arguments read zeros, not these values.
func TestLaunchBufCleared(t *testing.T) {
	lb, err := getLaunchBuf(slotHere())
	require.NoError(t, err)
	zero, err := zeroArgsAddr()
	require.NoError(t, err)
	for i := range lb.ptrs {
		require.Equal(t, zero, lb.ptrs[i], "a fresh buffer's slot %d points at zeros", i)
	}
	require.NoError(t, lb.set(0, uint64(7), 0))
	require.NoError(t, lb.set(1, uint64(9), 0))
	putLaunchBuf(slotHere(), lb, 2)
	assert.Equal(t, [2]uintptr{zero, zero}, [2]uintptr{lb.ptrs[0], lb.ptrs[1]})
	assert.Equal(t, [2]uint64{0, 0}, [2]uint64{lb.vals[0], lb.vals[1]})
	assert.Zero(t, *(*uint64)(clib.Ptr(zero)), "the zero block reads zero")
}

func TestLaunchBufsReused(t *testing.T) {
	seen := map[*launchBuf]bool{}
	var held []*launchBuf
	for range launchSlab + 3 { // past one slab: a second mapping
		lb, err := getLaunchBuf(slotHere())
		require.NoError(t, err)
		assert.False(t, seen[lb], "a buffer in use is not handed out twice")
		seen[lb] = true
		held = append(held, lb)
	}
	for _, lb := range held {
		putLaunchBuf(slotHere(), lb, 0)
	}
	lb, err := getLaunchBuf(slotHere())
	require.NoError(t, err)
	assert.True(t, seen[lb], "a returned buffer is reused")
	putLaunchBuf(slotHere(), lb, 0)
}

// Launches on many goroutines at once never share a buffer, whether they
// take it from the one-buffer fast slot or the free list (-race checks the
// rest).
func TestLaunchBufsConcurrent(t *testing.T) {
	var mu sync.Mutex
	inUse := map[*launchBuf]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				lb, err := getLaunchBuf(slotHere())
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				shared := inUse[lb]
				inUse[lb] = true
				mu.Unlock()
				if !assert.False(t, shared, "a buffer handed to two launches at once") {
					return
				}
				lb.vals[0] = uint64(g<<32 | i)
				lb.ptrs[0] = uintptr(unsafe.Pointer(&lb.vals[0]))
				mu.Lock()
				delete(inUse, lb)
				mu.Unlock()
				putLaunchBuf(slotHere(), lb, 1)
			}
		})
	}
	wg.Wait()
}

// Goroutines that launch at once take their buffers from different slots
// (their stacks lie apart), and one goroutine from the same slot each time,
// so concurrent launches do not take turns on one cache line.
func TestLaunchSlotsSpread(t *testing.T) {
	const n = 16
	got := make([]*launchSlot, n)
	same := make([]bool, n)
	var computed, release, done sync.WaitGroup
	computed.Add(n)
	done.Add(n)
	release.Add(1)
	for g := range n {
		go func() {
			defer done.Done()
			got[g], same[g] = slotHere(), true
			for range 100 {
				same[g] = same[g] && slotHere() == got[g]
			}
			computed.Done()
			release.Wait() // alive until every goroutine has its slot: no stack is reused
		}()
	}
	computed.Wait()
	release.Done()
	done.Wait()
	distinct := map[*launchSlot]bool{}
	for g, sl := range got {
		assert.True(t, same[g], "goroutine %d got different slots", g)
		distinct[sl] = true
	}
	assert.GreaterOrEqual(t, len(distinct), n/2, "%d goroutines launching at once share %d slots", n, len(distinct))
}

// BenchmarkLaunchBufParallel is a launch's own use of the buffers, taken,
// filled with three arguments and given back, from GOMAXPROCS goroutines at
// once (-cpu 1,2,...): what concurrent launches cost each other there.
func BenchmarkLaunchBufParallel(b *testing.B) {
	args := []any{device.Ptr(1 << 40), device.Ptr(1<<40 + 8), uint32(1000)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sl := slotHere()
			lb, err := getLaunchBuf(sl)
			if err != nil {
				b.Error(err)
				return
			}
			for i, a := range args {
				if err := lb.set(i, a, 0); err != nil {
					b.Error(err)
				}
			}
			putLaunchBuf(sl, lb, len(args))
		}
	})
}

func TestPinnedSet(t *testing.T) {
	var ps pinnedSet
	ps.add(1000, 100)
	ps.add(5000, 10)
	ps.add(3000, 1)
	for _, c := range []struct {
		p    uintptr
		n    uint64
		want bool
	}{
		{1000, 100, true}, {1050, 50, true}, {1050, 51, false}, {999, 2, false},
		{5000, 10, true}, {5009, 1, true}, {5010, 1, false}, {3000, 1, true}, {3000, 2, false},
		{0, 1, false}, {^uintptr(0) - 1, 10, false},
	} {
		assert.Equal(t, c.want, ps.contains(c.p, c.n), "[%d, +%d)", c.p, c.n)
	}
	ps.remove(1000)
	assert.False(t, ps.contains(1000, 1))
	assert.True(t, ps.contains(5000, 1))
}

func TestUnavailableNote(t *testing.T) {
	u := &unavailable{reason: "cuda: no devices", cause: ErrNoDevice}
	assert.Equal(t, "cuda: no devices", u.Error())
	assert.ErrorIs(t, u, device.ErrNotAvailable)
	assert.ErrorIs(t, u, ErrNoDevice)
	u.note = "the alias is off; unset it"
	assert.Equal(t, "cuda: no devices. The alias is off; unset it.", u.Error())
	u.reason, u.note = "x failed.", "Done!"
	assert.Equal(t, "x failed. Done!", u.Error())
	b := &Backend{v: testVendor(device.CUDA, "CUDA_"), o: options{note: func() string { return "note" }}}
	s := &state{err: u}
	assert.NotSame(t, u, b.unavail(s), "a copy carries the note")
	assert.Equal(t, "x failed.", u.reason, "the state's error is left alone")
}

func TestOpNames(t *testing.T) {
	for op := Op(0); op < numOps; op++ {
		assert.Regexp(t, `^Op[A-Z][A-Za-z0-9]+$`, op.String())
	}
	assert.Equal(t, "Op(?)", Op(-1).String())
	assert.Equal(t, "Op(?)", numOps.String())
}

// An adapter gets CUDA's arguments, Go addresses included, and what it
// writes through them is what the checked call reads.
func TestAdapterShapes(t *testing.T) {
	v := testVendor(device.CUDA, "CUDA_")
	a := &api{v: v}
	var seen []uintptr
	a.adapt[OpDeviceCount] = func(fn *clib.Func, args ...uintptr) int {
		seen = append(seen, args...)
		*(*int32)(clib.Ptr(args[0])) = 7
		return 0
	}
	a.adapt[OpDeviceGet] = func(fn *clib.Func, args ...uintptr) int {
		*(*uint64)(clib.Ptr(args[0])) = 1<<40 | uint64(args[1]) // a 64-bit handle (Cambricon's CNdev)
		return 0
	}
	a.adapt[OpMemFree] = func(fn *clib.Func, args ...uintptr) int { return 2 }
	n, err := a.deviceCount()
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	require.Len(t, seen, 1, "the adapter got CUDA's one argument")
	h, err := a.deviceGet(3)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<40|3), h, "all 64 bits of the handle are kept")
	err = a.memFree(0x1000)
	assert.ErrorIs(t, err, device.ErrOutOfMemory, "the adapter's code is checked like the function's")
}
