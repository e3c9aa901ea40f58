package clib

import (
	"slices"
	"strconv"
	"time"
)

// Prepared is one hot call built once, for a handle that makes it again
// and again (a stream's synchronize, its event records): pre(preArg) where
// pre is set and then, when it returned 0, fn with at most two arguments,
// in one transition to C (as CallAfter). Its call reads the prepared
// block alone (a few words, in the handle's own cache lines) instead of a
// binding's tables, so a call that finds the caches cold, as a real
// driver's long calls leave them, pays for fewer lines. The zero Prepared
// is not OK: its owner calls another way.
type Prepared struct {
	fn, pre, preArg uintptr
	args            [2]uintptr
	n               int   // how many args fn takes
	f, p            *Func // for a tracer
}

// Prepare builds f's call with args (values or addresses of C memory,
// never of Go memory) after pre(preArg), or alone where pre is nil. It is
// not OK (the zero Prepared) where f or pre is unresolved, args are more
// than two, or this platform has no trampoline of this package's
// (StackLists false: its calls would build lists on the heap).
func (f *Func) Prepare(pre *Func, preArg uintptr, args ...uintptr) Prepared {
	if !StackLists || !f.OK() || (pre != nil && !pre.OK()) || len(args) > 2 {
		return Prepared{}
	}
	p := Prepared{fn: f.addr, preArg: preArg, n: len(args), f: f, p: pre}
	if pre != nil {
		p.pre = pre.addr
	}
	copy(p.args[:], args)
	return p
}

// OK reports whether the call was prepared.
func (p Prepared) OK() bool { return p.fn != 0 }

// Call makes the prepared call: pre's result (0 without pre) and fn's (0
// when fn did not run). It allocates nothing.
func (p *Prepared) Call() (r0, r1 uintptr) {
	if tracer.Load() != nil {
		return p.traced(p.args[0])
	}
	return ccallPrepared(p, p.args[0])
}

// CallWith is Call with a0 as fn's first argument instead of the prepared
// one: a record of the caller's event on the prepared stream.
func (p *Prepared) CallWith(a0 uintptr) (r0, r1 uintptr) {
	if tracer.Load() != nil {
		return p.traced(a0)
	}
	return ccallPrepared(p, a0)
}

// CallArgs is Call with args (at most 11, values or addresses of C
// memory) as fn's arguments in place of the prepared ones: a launch,
// whose eleven arguments change with each call while its function and
// its device's selection stay. args stays where its caller made it (the
// trampoline copies it), so a list on the caller's stack costs nothing.
func (p *Prepared) CallArgs(args []uintptr) (r0, r1 uintptr) {
	if tracer.Load() != nil {
		return p.tracedList(slices.Clone(args))
	}
	return ccallPreparedArgs(p, args)
}

// MaxParams is the most values CallParams lays out.
const MaxParams = 16

// CallParams is CallArgs with args (fn's eleven words; the ones past fn's
// own are ignored) in place of the prepared ones and args[at] replaced by
// the address of an array of pointers to vals[:n] (n at most MaxParams),
// each in an 8-byte slot, or by 0 when n is 0: a kernel's parameters,
// cuLaunchKernel's kernelParams. The values and the array are laid out
// for the call in C memory of the trampoline's own (the calling thread's
// system stack, as a C caller's locals are) and are gone when it returns,
// so the C function must not keep them. cuLaunchKernel's kernelParams are
// such: cuda.h says each pointer is to "a region of memory from which the
// actual kernel parameter will be copied", and C callers pass arrays of
// their own locals that end with the call; this path passed every GPU
// test on an H100 (launches, graphs captured from launches) before it was
// kept. The trampoline reads args and vals where the caller keeps them
// (nothing is copied on the way), no Go memory reaches C, nothing is
// allocated and no buffer is shared.
func (p *Prepared) CallParams(args *[11]uintptr, at int, vals *[MaxParams]uint64, n int) (r0, r1 uintptr) {
	if uint(n) > MaxParams || uint(at) >= uint(len(args)) || args == nil || vals == nil {
		panic("clib: CallParams: " + strconv.Itoa(n) + " values for argument " + strconv.Itoa(at) + " (arguments or values missing, or out of range)")
	}
	if t := tracer.Load(); t != nil {
		return p.tracedParams(t, args, at, vals, n)
	}
	return ccallParams(p, args, at, vals, n)
}

// tracedParams makes CallParams's call and traces it: pre's call, where
// there is one, and fn's, the laid-out argument shown as a pointer.
//
//go:noinline
func (p *Prepared) tracedParams(t *traceLog, args *[11]uintptr, at int, vals *[MaxParams]uint64, n int) (r0, r1 uintptr) {
	start := time.Now()
	r0, r1 = ccallParams(p, args, at, vals, n)
	d := time.Since(start)
	if p.p != nil {
		t.logged(p.p, []uintptr{p.preArg}, r0, d)
		if Code(r0) != 0 {
			return r0, r1
		}
	}
	shown := args[:] // the laid-out argument as the caller gave it: its Sig shows a pointer as "*"
	if k := len(p.f.sig); k > 0 && k < len(shown) {
		shown = shown[:k] // fn's own arguments
	}
	t.logged(p.f, shown, r1, d)
	return r0, r1
}

// traced makes the call through CallList or CallAfter, which trace it.
//
//go:noinline
func (p *Prepared) traced(a0 uintptr) (r0, r1 uintptr) {
	return p.tracedList([]uintptr{a0, p.args[1]}[:p.n])
}

//go:noinline
func (p *Prepared) tracedList(args []uintptr) (r0, r1 uintptr) {
	if p.p == nil {
		return 0, p.f.CallList(args)
	}
	return p.f.CallAfter(p.p, []uintptr{p.preArg}, args)
}
