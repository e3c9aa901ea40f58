package gpudrv

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

var testVendor = &Vendor{Pkg: "cuda", ErrPrefix: "CUDA_", Errors: NewErrors("cuda")}
var otherVendor = &Vendor{Pkg: "musa", ErrPrefix: "MUSA_", Errors: NewErrors("musa")}

func TestErrorMessage(t *testing.T) {
	e := &Error{Code: 100, Name: "CUDA_ERROR_NO_DEVICE", Message: "no CUDA-capable device is detected", v: testVendor}
	assert.Equal(t, "cuda: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected", e.Error())
	e.Message = ""
	assert.Equal(t, "cuda: CUDA_ERROR_NO_DEVICE (100)", e.Error())
}

func TestErrorIs(t *testing.T) {
	s := testVendor.Errors
	for code, want := range map[int][]error{
		34:  {s.StubLibrary, s.NotAvailable},
		35:  {s.DriverMismatch, s.NotAvailable},
		100: {s.NoDevice, s.NotAvailable},
		101: {s.InvalidDevice},
		201: {s.InvalidContext},
		3:   {s.NotInitialized},
		4:   {s.NotInitialized},
		500: {s.NotFound},
		801: {s.NotSupported},
		803: {s.DriverMismatch, s.NotAvailable},
		804: {s.DriverMismatch, s.NotAvailable},
		999: {s.Unknown, s.NotAvailable},
		700: nil,
	} {
		e := fmt.Errorf("wrapped: %w", &Error{Code: code, v: testVendor})
		all := []error{s.NotAvailable, s.NoDevice, s.StubLibrary, s.InvalidDevice, s.NotFound, s.NotSupported, s.DriverMismatch, s.NotInitialized, s.InvalidContext, s.Unknown}
		for _, target := range all {
			wanted := false
			for _, w := range want {
				wanted = wanted || w == target
			}
			assert.Equal(t, wanted, errors.Is(e, target), "code %d vs %v", code, target)
		}
		// Another vendor's sentinels never match.
		assert.False(t, errors.Is(e, otherVendor.Errors.NoDevice))
		assert.True(t, errors.Is(e, &Error{Code: code, v: testVendor}))
		assert.False(t, errors.Is(e, &Error{Code: code, v: otherVendor}))
	}
}

func TestResultName(t *testing.T) {
	assert.Equal(t, "CUDA_ERROR_STUB_LIBRARY", testVendor.ResultName(34))
	assert.Equal(t, "MUSA_ERROR_SYSTEM_DRIVER_MISMATCH", otherVendor.ResultName(803))
	assert.Equal(t, "CUDA_ERROR_UNKNOWN_CODE_12345", testVendor.ResultName(12345))
	for code, n := range resultNames {
		assert.Regexp(t, `^(SUCCESS|ERROR_[A-Z0-9_]+)$`, n, "code %d", code)
	}
}

func TestDecodeVersion(t *testing.T) {
	for _, c := range []struct{ v, base, major, minor int }{
		{13000, 1000, 13, 0},
		{12040, 1000, 12, 4},
		{12090, 1000, 12, 9},
		{11080, 1000, 11, 8},
		{30100, 10000, 3, 1},
		{40203, 10000, 4, 2},
		{0, 1000, 0, 0},
		{-1, 1000, 0, 0},
		{13000, 7, 0, 0},
	} {
		major, minor := DecodeVersion(c.v, c.base)
		assert.Equal(t, [2]int{c.major, c.minor}, [2]int{major, minor}, "%d base %d", c.v, c.base)
	}
	assert.Equal(t, "13.0", FormatVersion(13000, 1000))
	assert.Equal(t, "3.1", FormatVersion(30100, 10000))
}

func FuzzDecodeVersion(f *testing.F) {
	for _, v := range []int{0, 13000, 12040, 30100, -5, 1 << 31} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int) {
		for _, base := range []int{1000, 10000} {
			major, minor := DecodeVersion(v, base)
			if v < 0 {
				if major != 0 || minor != 0 {
					t.Fatalf("negative %d decoded to %d.%d", v, major, minor)
				}
				continue
			}
			if minor < 0 || minor > 99 || major < 0 {
				t.Fatalf("%d base %d: %d.%d out of range", v, base, major, minor)
			}
			// Re-encoding gives v back up to the patch digits.
			step := base / 100
			if got := major*base + minor*step; got != v-v%step {
				t.Fatalf("%d base %d: %d.%d re-encodes to %d", v, base, major, minor, got)
			}
			if s := FormatVersion(v, base); !regexp.MustCompile(`^\d+\.\d+$`).MatchString(s) {
				t.Fatalf("FormatVersion(%d) = %q", v, s)
			}
		}
	})
}

func TestFormatUUID(t *testing.T) {
	u := [16]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}
	assert.Equal(t, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", FormatUUID("GPU-", u))
	assert.Equal(t, "00000000-0000-0000-0000-000000000000", FormatUUID("", [16]byte{}))
}

func FuzzFormatUUID(f *testing.F) {
	f.Add([]byte("0123456789abcdef"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var u [16]byte
		copy(u[:], b)
		s := FormatUUID("GPU-", u)
		if !regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(s) {
			t.Fatalf("%q", s)
		}
	})
}

func FuzzCString(f *testing.F) {
	f.Add([]byte("NVIDIA H200\x00garbage"))
	f.Add([]byte("no terminator"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := cString(b)
		if strings.IndexByte(s, 0) >= 0 || len(s) > len(b) || !strings.HasPrefix(string(b), s) {
			t.Fatalf("cString(%q) = %q", b, s)
		}
	})
}

func TestResultTruncates(t *testing.T) {
	// The upper half of the return register is not defined for a C enum.
	assert.Equal(t, 100, result(0xdeadbeef_00000064))
	assert.Equal(t, 0, result(0xffffffff_00000000))
}

func TestModuleImage(t *testing.T) {
	ptx := []byte(".version 8.0")
	got := moduleImage(ptx)
	assert.Equal(t, append([]byte(".version 8.0"), 0), got, "PTX gets a NUL")
	assert.Equal(t, ".version 8.0", string(ptx), "the caller's bytes are not touched")
	withNul := []byte("x\x00")
	assert.Same(t, &withNul[0], &moduleImage(withNul)[0])
	elf := []byte("\x7fELF\x02\x01")
	assert.Same(t, &elf[0], &moduleImage(elf)[0], "a cubin is passed as is")
	fat := []byte{0x50, 0xed, 0x55, 0xba, 1, 0}
	assert.Same(t, &fat[0], &moduleImage(fat)[0], "a fatbin is passed as is")
}

func TestLaunchArgs(t *testing.T) {
	lb := launchPool.Get().(*launchBuf) // on the heap: a stack may move
	for i, c := range []struct {
		arg  any
		want uint64
	}{
		{DevicePtr(1 << 40), 1 << 40},
		{uintptr(7), 7},
		{int32(-1), 0xffffffff},
		{uint32(5), 5},
		{int64(-2), 1<<64 - 2},
		{uint64(9), 9},
		{float32(1), 0x3f800000},
		{float64(1), 0x3ff0000000000000},
	} {
		assert.NoError(t, lb.set(i, c.arg))
		assert.Equal(t, c.want, lb.vals[i], "%T", c.arg)
		assert.Equal(t, uintptr(unsafe.Pointer(&lb.vals[i])), lb.ptrs[i])
	}
	assert.ErrorContains(t, lb.set(0, 3), "Go int")
	assert.ErrorContains(t, lb.set(0, uint(3)), "Go uint")
	assert.ErrorContains(t, lb.set(0, "x"), "type string")
	assert.ErrorContains(t, lb.set(0, lb), "type *gpudrv.launchBuf")
}

func TestUnavailableNote(t *testing.T) {
	u := &unavailable{reason: "cuda: no devices", sentinel: testVendor.Errors.NotAvailable}
	assert.Equal(t, "cuda: no devices", u.Error())
	u.note = "the alias is off; unset it"
	assert.Equal(t, "cuda: no devices. The alias is off; unset it.", u.Error())
	u.reason, u.note = "x failed.", "Done!"
	assert.Equal(t, "x failed. Done!", u.Error())
	assert.ErrorIs(t, u, testVendor.Errors.NotAvailable)
	b := &Backend{v: testVendor, note: func() string { return "note" }}
	s := &state{err: u}
	assert.NotSame(t, u, b.unavail(s), "a copy carries the note")
	assert.Equal(t, "x failed.", u.reason, "the state's error is left alone")
}
