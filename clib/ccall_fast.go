//go:build amd64 && linux && !purego

package clib

import (
	"runtime"
	"unsafe"
)

// CallList and CallThen (a device made current, a synchronize, a launch) go
// through a trampoline of this package's own (ccall_amd64.s) instead of
// purego.SyscallN, which copies 64 words and takes a pooled block per call:
// on the reference H200 that overhead was most of what separated a driver's
// Synchronize from the C floor. It runs the same way purego's does, through
// runtime.cgocall, with cgo (runtime/cgo) or without it (purego's runtime
// support makes cgocall usable then). Built with cgo, purego's path costs
// twice the trampoline's on the fake libcuda (Synchronize 110-128 against
// 53 ns, Launch3Args 208-285 against 100-120 ns on a 2-vCPU machine), so a
// program built where a C compiler is installed gets the same hot path as
// one built with CGO_ENABLED=0. The build tag purego (the usual "no
// assembly" tag) and other platforms use purego.SyscallN (ccall_purego.go).

// cblock is the trampoline's argument block; its layout is the assembly's.
type cblock struct {
	fn     uintptr
	then   uintptr // called after fn succeeds; 0: none
	args   [11]uintptr
	r1     uintptr
	r2     uintptr // then's result
	pre    uintptr // called before fn, which runs only when it succeeds; 0: none
	preArg uintptr
	r0     uintptr // pre's result
}

var ctrampABI0 uintptr // the trampoline's address, set in ccall_amd64.s

// StackLists reports whether CallList, CallThen and CallAfter keep their
// argument lists where the caller made them (this package's trampoline
// copies them into its block, and a tracer traces a copy), so that a list
// on the caller's stack stays there and the call allocates nothing. Where
// it is false (purego.SyscallN), a list escapes to the heap unless it is
// already there or in C memory.
const StackLists = true

//go:linkname runtime_cgocall runtime.cgocall
//go:noescape
func runtime_cgocall(fn uintptr, arg unsafe.Pointer) int32

// ccall calls fn with at most 11 integer arguments that are values or C
// addresses (never addresses of Go memory) and returns its result register.
// It allocates nothing: the block stays on the goroutine's stack. That
// stack may move during the call when the C function calls back into Go
// and the callback grows it; the trampoline then finds the block again
// from the top of the stack before it writes a result (ccall_amd64.s), as
// cgo's wrappers do.
func ccall(fn uintptr, args []uintptr) uintptr {
	var b cblock
	b.fn = fn
	copy(b.args[:], args)
	runtime_cgocall(ctrampABI0, unsafe.Pointer(&b))
	return b.r1
}

// ccallThen is ccall, then, when fn returned 0, a call of then with no
// arguments, both on one OS thread in one transition to C; r2 is 0 when
// then did not run. A device's context made current by fn is thus current
// for then without locking the goroutine to its thread.
func ccallThen(fn uintptr, args []uintptr, then uintptr) (r1, r2 uintptr) {
	var b cblock
	b.fn, b.then = fn, then
	copy(b.args[:], args)
	runtime_cgocall(ctrampABI0, unsafe.Pointer(&b))
	return b.r1, b.r2
}

// ccallAfter calls pre(preArgs...) and, when it returned 0, fn with args, both
// on one OS thread in one transition to C; r1 is 0 when fn did not run. A
// device's context made current by pre is thus current for fn (a launch)
// without locking the goroutine to its thread.
func ccallAfter(pre uintptr, preArgs []uintptr, fn uintptr, args []uintptr) (r0, r1 uintptr) {
	if len(preArgs) > 1 { // the trampoline passes pre one argument: two calls on one thread
		return ccallAfterLocked(pre, preArgs, fn, args)
	}
	var b cblock
	b.pre, b.fn = pre, fn
	if len(preArgs) == 1 {
		b.preArg = preArgs[0]
	}
	copy(b.args[:], args)
	runtime_cgocall(ctrampABI0, unsafe.Pointer(&b))
	return b.r0, b.r1
}

// ccallAfterLocked is ccallAfter for a pre of several arguments: two calls
// on one locked thread (out of line: its defer would keep ccallAfter from
// being inlined).
func ccallAfterLocked(pre uintptr, preArgs []uintptr, fn uintptr, args []uintptr) (r0, r1 uintptr) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r0 = ccall(pre, preArgs); Code(r0) == 0 {
		r1 = ccall(fn, args)
	}
	return r0, r1
}

// prepBlock is cprep's block; its layout is the assembly's.
type prepBlock struct {
	fn, pre, preArg uintptr
	a0, a1          uintptr
	r0, r1          uintptr
}

var cprepABI0 uintptr // cprep's address, set in ccall_amd64.s

// ccallPrepared makes p's call with a0 as fn's first argument, in one
// transition to C, through cprep: the block is p's few words, nothing
// else.
func ccallPrepared(p *Prepared, a0 uintptr) (r0, r1 uintptr) {
	b := prepBlock{fn: p.fn, pre: p.pre, preArg: p.preArg, a0: a0, a1: p.args[1]}
	runtime_cgocall(cprepABI0, unsafe.Pointer(&b))
	return b.r0, b.r1
}

// ccallPreparedArgs makes p's call with args as fn's arguments.
func ccallPreparedArgs(p *Prepared, args []uintptr) (r0, r1 uintptr) {
	var b cblock
	b.fn, b.pre, b.preArg = p.fn, p.pre, p.preArg
	copy(b.args[:], args)
	runtime_cgocall(ctrampABI0, unsafe.Pointer(&b))
	return b.r0, b.r1
}

// pblock is cparams's block; its layout is the assembly's.
type pblock struct {
	fn, pre, preArg uintptr
	args            *[11]uintptr
	vals            *[MaxParams]uint64
	n, at           uintptr
	r0, r1          uintptr
}

var cparamsABI0 uintptr // cparams's address, set in ccall_amd64.s

// ccallParams makes p's call with args, args[at] replaced by the address
// of pointers to vals laid out by the trampoline on the system stack. The
// block points to the caller's arrays, which the trampoline reads before
// any C call: nothing is copied here.
func ccallParams(p *Prepared, args *[11]uintptr, at int, vals *[MaxParams]uint64, n int) (r0, r1 uintptr) {
	b := pblock{fn: p.fn, pre: p.pre, preArg: p.preArg, args: args, vals: vals, n: uintptr(n), at: uintptr(at)}
	runtime_cgocall(cparamsABI0, unsafe.Pointer(&b))
	return b.r0, b.r1
}
