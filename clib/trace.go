package clib

import (
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// tracer is the trace logger; nil (the default) traces nothing, and a call
// then pays one atomic load for it.
var tracer atomic.Pointer[traceLog]

type traceLog struct{ log *zap.Logger }

// SetTracer logs every call made through a Func from now on to l, at info
// level: the library, the function, the arguments that are not pointers to
// data, the result and the duration. nil turns tracing off. It is for
// diagnosis (flagshim's FLAGOS_TRACE=1): a traced call allocates and is
// slower.
func SetTracer(l *zap.Logger) {
	if l == nil {
		tracer.Store(nil)
		return
	}
	tracer.Store(&traceLog{log: l})
}

// Tracing reports whether calls are being traced.
func Tracing() bool { return tracer.Load() != nil }

func (t *traceLog) call(f *Func, args []uintptr, _ *Func) uintptr {
	start := time.Now()
	r := syscallN(f.addr, args)
	t.logged(f, args, r, time.Since(start))
	return r
}

// logged traces a call made elsewhere: f with args returned r in d.
func (t *traceLog) logged(f *Func, args []uintptr, r uintptr, d time.Duration) {
	t.log.Info("call", zap.String("lib", f.lib), zap.String("func", f.name), zap.String("args", formatArgs(f.sig, args)),
		zap.Int("result", Code(r)), zap.Duration("duration", d))
}

func (t *traceLog) callThen(f *Func, args []uintptr, then *Func) (r1, r2 uintptr) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r1 = t.call(f, args, nil)
	if Code(r1) == 0 {
		r2 = t.call(then, nil, nil)
	}
	return r1, r2
}

func (t *traceLog) callAfter(pre *Func, preArgs []uintptr, f *Func, args []uintptr) (r0, r1 uintptr) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r0 = t.call(pre, preArgs, nil)
	if Code(r0) == 0 {
		r1 = t.call(f, args, nil)
	}
	return r0, r1
}

// formatArgs shows args as sig describes them (see Sym.Sig).
func formatArgs(sig string, args []uintptr) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		kind := byte('h')
		if i < len(sig) {
			kind = sig[i]
		}
		switch kind {
		case 'i':
			b.WriteString(strconv.Itoa(Code(a)))
		case 'u':
			b.WriteString(strconv.FormatUint(uint64(a), 10))
		case 'p':
			b.WriteString("*")
		default:
			b.WriteString("0x" + strconv.FormatUint(uint64(a), 16))
		}
	}
	return b.String()
}
