package clib

import (
	"io"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// A C function may call back into Go (a binding of a fourth party may pass
// a callback), and the callback may grow its goroutine's stack, which then
// moves. Every call path must still return what the C function returned:
// the fast path once kept its result block's address on the moved stack and
// wrote the result into the old one (a function returning 12345 read as 0).
// These tests run under every build CI makes: cgo, CGO_ENABLED=0, -race and
// -tags purego.

// growDepth frames of about 1 KiB each: far past a new goroutine's 8 KiB
// stack, so the stack is copied several times during the callback.
const growDepth = 256

// grow recurses n frames deep, each with a 1 KiB array the compiler must
// keep, and returns n.
//
//go:noinline
func grow(n int64) int64 {
	var pad [1024]byte
	pad[n%1024] = 1
	if n == 0 {
		return 0
	}
	return grow(n-1) + int64(pad[n%1024])
}

// growCallback is the C-callable callback; purego keeps a limited number of
// them for the life of the process, so the tests share one.
var growCallback = sync.OnceValue(func() uintptr {
	return purego.NewCallback(func(depth int64) int64 { return grow(depth) })
})

type callbackSyms struct{ value, zero, eleven, save, saved, pre, preFail, params, paramsFirst Func }

var callbackLib struct {
	once sync.Once
	syms *callbackSyms
	err  error
}

// openCallbackLib builds testdata/callback.c and resolves its functions,
// once per process (a loaded library stays loaded).
func openCallbackLib(t *testing.T) *callbackSyms {
	t.Helper()
	dir := dltest.PrivateDir(t)
	so := filepath.Join(dir, "libflagshim-callback.so")
	dltest.BuildLib(t, so, "libflagshim-callback.so", []string{dltest.Abs(t, "testdata/callback.c")})
	callbackLib.once.Do(func() {
		lib := Library{Name: "callback", EnvVar: "FLAGSHIM_TEST_CALLBACK_PATH", Sonames: []string{"libflagshim-callback.so"}}
		h, err := lib.Open(func(k string) string {
			if k == lib.EnvVar {
				return so
			}
			return ""
		})
		if err != nil {
			callbackLib.err = err
			return
		}
		var s callbackSyms
		callbackLib.err = h.Resolve("callback", []Sym{
			{Fn: &s.value, Names: []string{"flagshim_cb_value"}, Required: true},
			{Fn: &s.zero, Names: []string{"flagshim_cb_zero"}, Required: true},
			{Fn: &s.eleven, Names: []string{"flagshim_cb_eleven"}, Required: true},
			{Fn: &s.save, Names: []string{"flagshim_cb_save"}, Required: true},
			{Fn: &s.saved, Names: []string{"flagshim_cb_saved"}, Required: true},
			{Fn: &s.pre, Names: []string{"flagshim_cb_pre"}, Required: true},
			{Fn: &s.preFail, Names: []string{"flagshim_cb_pre_fail"}, Required: true},
			{Fn: &s.params, Names: []string{"flagshim_params_eleven"}, Required: true, Sig: "iiiiiiiiipi"},
			{Fn: &s.paramsFirst, Names: []string{"flagshim_params_first"}, Required: true, Sig: "pi"},
		})
		callbackLib.syms = &s
	})
	require.NoError(t, callbackLib.err)
	return callbackLib.syms
}

// onFreshStack runs f on a new goroutine, whose stack starts small, and
// reports whether that stack moved while f ran (else the test proves
// nothing).
func onFreshStack(f func()) (moved bool) {
	done := make(chan bool)
	go func() {
		var mark byte
		before := uintptr(unsafe.Pointer(&mark))
		f()
		done <- uintptr(unsafe.Pointer(&mark)) != before
	}()
	return <-done
}

func TestCallbackGrowsStack(t *testing.T) {
	s := openCallbackLib(t)
	cb := growCallback()
	const d = growDepth
	s.save.CallList([]uintptr{cb, d})
	cases := []struct {
		name string
		call func() []uintptr
		want []uintptr
	}{
		{"CallList", func() []uintptr { return []uintptr{s.value.CallList([]uintptr{cb, d})} }, []uintptr{12345 + d}},
		{"CallList eleven arguments", func() []uintptr {
			return []uintptr{s.eleven.CallList([]uintptr{cb, d, 2, 3, 4, 5, 6, 7, 8, 9, 10})}
		}, []uintptr{12345 + d + 54}},
		{"Call", func() []uintptr { return []uintptr{s.value.Call(cb, d)} }, []uintptr{12345 + d}},
		{"CallCode", func() []uintptr { return []uintptr{uintptr(s.value.CallCode(cb, d))} }, []uintptr{12345 + d}},
		{"CallThen: fn calls back", func() []uintptr {
			r1, r2 := s.zero.CallThen([]uintptr{cb, d}, &s.saved)
			return []uintptr{r1 & 0xffffffff, r2}
		}, []uintptr{0, 54321 + d}},
		{"CallThen: fn calls back and fails", func() []uintptr {
			r1, r2 := s.value.CallThen([]uintptr{cb, d}, &s.saved)
			return []uintptr{r1, r2}
		}, []uintptr{12345 + d, 0}},
		{"CallAfter: pre of one argument calls back and fails", func() []uintptr {
			r0, r1 := s.eleven.CallAfter(&s.preFail, []uintptr{d}, []uintptr{cb, d, 2, 3, 4, 5, 6, 7, 8, 9, 10})
			return []uintptr{r0, r1}
		}, []uintptr{777 + d, 0}},
		{"CallAfter: pre of two arguments calls back and fails", func() []uintptr {
			r0, r1 := s.value.CallAfter(&s.value, []uintptr{cb, d}, []uintptr{cb, d})
			return []uintptr{r0, r1}
		}, []uintptr{12345 + d, 0}},
		{"CallAfter: pre of one argument calls back", func() []uintptr {
			r0, r1 := s.eleven.CallAfter(&s.pre, []uintptr{d}, []uintptr{cb, d, 2, 3, 4, 5, 6, 7, 8, 9, 10})
			return []uintptr{r0 & 0xffffffff, r1}
		}, []uintptr{0, 12345 + d + 54}},
		{"CallAfter: pre of two arguments calls back", func() []uintptr {
			r0, r1 := s.value.CallAfter(&s.zero, []uintptr{cb, d}, []uintptr{cb, d})
			return []uintptr{r0 & 0xffffffff, r1}
		}, []uintptr{0, 12345 + d}},
	}
	if StackLists { // Prepared calls (prepared.go) on the trampoline
		prepared := func(fn, pre *Func, preArg uintptr, args ...uintptr) func() []uintptr {
			return func() []uintptr {
				p := fn.Prepare(pre, preArg, args...)
				require.True(t, p.OK())
				r0, r1 := p.Call()
				return []uintptr{r0 & 0xffffffff, r1}
			}
		}
		cases = append(cases, []struct {
			name string
			call func() []uintptr
			want []uintptr
		}{
			{"Prepared: fn calls back", prepared(&s.value, nil, 0, cb, d), []uintptr{0, 12345 + d}},
			{"Prepared: pre and fn call back", prepared(&s.value, &s.pre, d, cb, d), []uintptr{0, 12345 + d}},
			{"Prepared: pre calls back and fails", prepared(&s.value, &s.preFail, d, cb, d), []uintptr{777 + d, 0}},
			// CallParams: the values are laid out before pre moves the stack.
			{"CallParams: pre calls back", func() []uintptr {
				p := s.params.Prepare(&s.pre, d)
				var vals [MaxParams]uint64
				vals[0], vals[1], vals[2] = 100, 1000, 10000
				r0, r1 := p.CallParams(&[11]uintptr{1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 3}, 9, &vals, 3)
				return []uintptr{r0 & 0xffffffff, r1}
			}, []uintptr{0, 45 + 100 + 2000 + 30000}},
			{"CallParams: pre calls back and fails", func() []uintptr {
				p := s.params.Prepare(&s.preFail, d)
				var vals [MaxParams]uint64
				r0, r1 := p.CallParams(&[11]uintptr{1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1}, 9, &vals, 1)
				return []uintptr{r0, r1}
			}, []uintptr{777 + d, 0}},
		}...)
	}
	for _, traced := range []bool{false, true} {
		if traced {
			SetTracer(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)))
		}
		for _, tc := range cases {
			name := tc.name
			if traced {
				name += " traced"
			}
			t.Run(name, func(t *testing.T) {
				var got []uintptr
				moved := onFreshStack(func() { got = tc.call() })
				assert.True(t, moved, "the callback did not move the caller's stack: the test proves nothing")
				assert.Equal(t, tc.want, got, "the C function's results, read after its callback moved the stack")
			})
		}
		SetTracer(nil)
	}
}
