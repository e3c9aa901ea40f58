package clib

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

// traced makes the call through CallList or CallAfter, which trace it.
//
//go:noinline
func (p *Prepared) traced(a0 uintptr) (r0, r1 uintptr) {
	args := []uintptr{a0, p.args[1]}[:p.n]
	if p.p == nil {
		return 0, p.f.CallList(args)
	}
	return p.f.CallAfter(p.p, []uintptr{p.preArg}, args)
}
