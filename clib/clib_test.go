package clib

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/flagos-ai/flagshim/device"
)

// libc is the C library every test process has loaded: its functions have
// known shapes, so the kit can be proven without a fake.
var libc = Library{Name: "libc", Sonames: []string{"libc.so.6"}}

type libcSyms struct{ strlen, abs, getpid, missing Func }

func openLibc(t testing.TB) (*Handle, *libcSyms) {
	t.Helper()
	h, err := libc.Open(nil)
	if err != nil {
		t.Skipf("libc.so.6 cannot be opened here (not a glibc system?): %v", err)
	}
	var s libcSyms
	require.NoError(t, h.Resolve("libc", []Sym{
		{Fn: &s.strlen, Names: []string{"strlen"}, Required: true, Sig: "p"},
		{Fn: &s.abs, Names: []string{"no_such_abs", "abs"}, Required: true, Sig: "i"},
		{Fn: &s.getpid, Names: []string{"getpid"}, Required: true},
		{Fn: &s.missing, Names: []string{"flagshim_no_such_function"}},
	}))
	return h, &s
}

func TestResolveAndCall(t *testing.T) {
	h, s := openLibc(t)
	assert.True(t, strings.HasPrefix(h.Path(), "/"), "opened by an absolute path: %s", h.Path())
	assert.NotEmpty(t, h.Attempts())
	assert.Equal(t, "abs", s.abs.Name(), "the fallback name is the one found")
	assert.False(t, s.missing.OK(), "a missing optional function stays unresolved")
	assert.Equal(t, "", s.missing.Name())

	b := []byte("flagshim\x00")
	assert.Equal(t, 8, s.strlen.CallCode(uintptr(unsafe.Pointer(&b[0]))))
	assert.Equal(t, 5, s.abs.CallCode(neg(5)))
	assert.Equal(t, os.Getpid(), Code(s.getpid.CallList(nil)))

	r1, r2 := s.abs.CallThen([]uintptr{0}, &s.getpid)
	assert.Equal(t, 0, Code(r1))
	assert.Equal(t, os.Getpid(), Code(r2), "then runs after a 0 result")
	r1, r2 = s.abs.CallThen([]uintptr{3}, &s.getpid)
	assert.Equal(t, 3, Code(r1))
	assert.Zero(t, r2, "then does not run after a failure")
}

// CallAfter: pre runs first, and fn (here with eleven arguments, five of
// them on the C stack) only after pre returned 0, all in one call.
func TestCallAfter(t *testing.T) {
	h, s := openLibc(t)
	var snprintf Func
	require.NoError(t, h.Resolve("libc", []Sym{{Fn: &snprintf, Names: []string{"snprintf"}, Required: true}}))
	buf := make([]byte, 64)
	zero := []uintptr{0}
	format := []byte("%d %d %d %d %d %d %d %d\x00")
	args := []uintptr{uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(unsafe.Pointer(&format[0])), 1, 2, 3, 4, 5, 6, 7, 8}
	r0, r1 := snprintf.CallAfter(&s.abs, zero, args)
	assert.Equal(t, 0, Code(r0))
	assert.Equal(t, 15, Code(r1), "snprintf ran after pre's 0")
	assert.Equal(t, "1 2 3 4 5 6 7 8", CString(buf))

	clear(buf)
	r0, r1 = snprintf.CallAfter(&s.abs, []uintptr{neg(7)}, args)
	assert.Equal(t, 7, Code(r0))
	assert.Zero(t, r1, "fn does not run after pre's failure")
	assert.Equal(t, "", CString(buf))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { snprintf.CallAfter(&s.abs, zero, args) }), "CallAfter")
}

func TestResolveMissingRequired(t *testing.T) {
	h, err := libc.Open(nil)
	if err != nil {
		t.Skipf("libc.so.6 cannot be opened here: %v", err)
	}
	var a, b, c Func
	err = h.Resolve("libc", []Sym{
		{Fn: &a, Names: []string{"strlen"}, Required: true},
		{Fn: &b, Names: []string{"flagshim_nope_v2", "flagshim_nope"}, Required: true},
		{Fn: &c, Names: []string{"flagshim_other"}, Required: true},
	})
	var me *MissingSymbolError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, ErrMissingSymbol)
	assert.Equal(t, [][]string{{"flagshim_nope_v2", "flagshim_nope"}, {"flagshim_other"}}, me.Missing)
	assert.Contains(t, err.Error(), "lacks the required symbols flagshim_nope_v2 / flagshim_nope, flagshim_other")
	assert.Contains(t, err.Error(), h.Path())
}

func TestOpenNotFound(t *testing.T) {
	lib := Library{Name: "libflagshim-absent", EnvVar: "FLAGSHIM_TEST_ABSENT_PATH", Sonames: []string{"libflagshim-absent.so.9"}}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	_, err := lib.Open(getenv)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, Tried(err), "libflagshim-absent.so.9")
	_, _, err = lib.Find(getenv)
	assert.ErrorIs(t, err, ErrNotFound)

	env["FLAGSHIM_TEST_ABSENT_PATH"] = "relative/lib.so"
	_, err = lib.Open(getenv)
	assert.ErrorIs(t, err, ErrRelativeOverride)
	assert.Equal(t, "nothing", Tried(errors.New("not an open error")))
}

func TestCode(t *testing.T) {
	// The upper half of the return register is not defined for a C enum.
	assert.Equal(t, 100, Code(0xdeadbeef_00000064))
	assert.Equal(t, 0, Code(0xffffffff_00000000))
	assert.Equal(t, -1, Code(0xffffffff))
}

func TestError(t *testing.T) {
	e := NewError("cuda", "cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", device.ErrOutOfMemory)
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"whole", e, "cuda: cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"},
		{"no function", NewError("NVML", "", 9, "NVML_ERROR_DRIVER_NOT_LOADED", ""), "NVML: NVML_ERROR_DRIVER_NOT_LOADED (9)"},
		{"no name", NewError("nvshmem", "nvshmemx_init_status", 42, "", ""), "nvshmem: nvshmemx_init_status returned unknown code (42)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.err.Error()) })
	}
	wrapped := fmt.Errorf("alloc: %w", e)
	assert.ErrorIs(t, wrapped, device.ErrOutOfMemory)
	assert.NotErrorIs(t, wrapped, device.ErrNotFound)
	assert.ErrorIs(t, wrapped, &Error{Library: "cuda", Code: 2})
	assert.NotErrorIs(t, wrapped, &Error{Library: "musa", Code: 2}, "another library's code is another error")
	assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory", e.Detail())
}

func TestCodes(t *testing.T) {
	c := &Codes{Library: "NVML", Names: map[int]string{9: "NVML_ERROR_DRIVER_NOT_LOADED"},
		Is: map[int][]error{9: {device.ErrNotAvailable}}, Message: func(code int) string { return fmt.Sprintf("text %d", code) }}
	assert.NoError(t, c.Check("nvmlInit_v2", 0))
	err := c.Check("nvmlInit_v2", 9)
	assert.EqualError(t, err, "NVML: nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9): text 9")
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	assert.Equal(t, "NVML: nvmlShutdown returned unknown code (77): text 77", c.Err("nvmlShutdown", 77).Error())
}

func TestTrace(t *testing.T) {
	_, s := openLibc(t)
	core, logs := observer.New(zap.InfoLevel)
	SetTracer(zap.New(core))
	t.Cleanup(func() { SetTracer(nil) })
	require.True(t, Tracing())

	b := []byte("abc\x00")
	assert.Equal(t, 3, s.strlen.CallCode(uintptr(unsafe.Pointer(&b[0]))))
	assert.Equal(t, 7, Code(s.abs.CallList([]uintptr{neg(7)})))
	r1, r2 := s.abs.CallThen([]uintptr{0}, &s.getpid)
	assert.Equal(t, 0, Code(r1))
	assert.Equal(t, os.Getpid(), Code(r2))

	entries := logs.AllUntimed()
	require.Len(t, entries, 4)
	first := entries[0].ContextMap()
	assert.Equal(t, "libc", first["lib"])
	assert.Equal(t, "strlen", first["func"])
	assert.Equal(t, "*", first["args"], "a pointer to data is never shown")
	assert.EqualValues(t, 3, first["result"])
	assert.Contains(t, first, "duration")
	assert.Equal(t, "-7", entries[1].ContextMap()["args"])
	assert.Equal(t, "getpid", entries[3].ContextMap()["func"])

	SetTracer(nil)
	assert.False(t, Tracing())
	s.getpid.CallList(nil)
	assert.Len(t, logs.AllUntimed(), 4, "nothing is logged once tracing is off")
}

func TestFormatArgs(t *testing.T) {
	assert.Equal(t, "", formatArgs("", nil))
	assert.Equal(t, "-1, 4294967295, 0xff, *, 0x10", formatArgs("iuhp", []uintptr{0xffffffff, 0xffffffff, 0xff, 0x1234, 0x10}))
}

func FuzzCString(f *testing.F) {
	f.Add([]byte("NVIDIA H200\x00garbage"))
	f.Add([]byte("no terminator"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := CString(b)
		if strings.IndexByte(s, 0) >= 0 || len(s) > len(b) || !strings.HasPrefix(string(b), s) {
			t.Fatalf("CString(%q) = %q", b, s)
		}
	})
}

func BenchmarkCallList(b *testing.B) {
	_, s := openLibc(b)
	args := []uintptr{0}
	b.ReportAllocs()
	for b.Loop() {
		s.abs.CallList(args)
	}
}

func BenchmarkCallCode(b *testing.B) {
	_, s := openLibc(b)
	b.ReportAllocs()
	for b.Loop() {
		s.abs.CallCode(0)
	}
}

// neg is -n as a C int argument.
func neg(n int32) uintptr { return uintptr(uint32(-n)) }

// With tracing off (the default), the hot calls allocate nothing: the one
// atomic load of the tracer is all FLAGOS_TRACE costs them.
func TestTraceOffAllocatesNothing(t *testing.T) {
	_, s := openLibc(t)
	SetTracer(nil)
	args := []uintptr{neg(3)}
	assert.Zero(t, testing.AllocsPerRun(1000, func() { s.abs.CallList(args) }), "CallList")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { s.abs.CallThen(args, &s.getpid) }), "CallThen")
}

// BenchmarkTraceOff is what tracing adds to a call while it is off: the
// atomic load of the tracer and the branch that CallList, CallCode and
// CallThen start with (BenchmarkCallList measures the whole call). Eight
// checks an iteration, so that the loop's own cost is spread: ns/check is
// the figure.
func BenchmarkTraceOff(b *testing.B) {
	SetTracer(nil)
	on := 0
	for range b.N {
		for range 8 {
			if tracer.Load() != nil {
				on++
			}
		}
	}
	if on != 0 {
		b.Fatal("tracing is on")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(8*b.N), "ns/check")
}

// BenchmarkCallListTraced is a traced call (FLAGOS_TRACE=1), to a logger
// that writes nothing: the formatting and the clock.
func BenchmarkCallListTraced(b *testing.B) {
	_, s := openLibc(b)
	SetTracer(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)))
	b.Cleanup(func() { SetTracer(nil) })
	args := []uintptr{0}
	b.ReportAllocs()
	for b.Loop() {
		s.abs.CallList(args)
	}
}
