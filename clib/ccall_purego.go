//go:build !(amd64 && linux) || purego

package clib

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// StackLists is false here: purego.SyscallN keeps its list, which thus
// escapes (see ccall_fast.go's).
const StackLists = false

// ccall calls fn through purego.SyscallN where the package has no
// trampoline of its own (other platforms than linux/amd64), or where the
// build tag purego asks for no assembly (see ccall_fast.go).
func ccall(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// ccallThen calls fn and, when it returns 0, then, on one locked OS thread
// (see ccall_fast.go's; here they are two calls).
func ccallThen(fn uintptr, args []uintptr, then uintptr) (r1, r2 uintptr) {
	runtime.LockOSThread()
	r1 = ccall(fn, args)
	if Code(r1) == 0 {
		r2 = ccall(then, nil)
	}
	runtime.UnlockOSThread()
	return r1, r2
}

// ccallAfter calls pre(preArg) and, when it returns 0, fn, on one locked
// OS thread (see ccall_fast.go's; here they are two calls).
func ccallAfter(pre uintptr, preArgs []uintptr, fn uintptr, args []uintptr) (r0, r1 uintptr) {
	runtime.LockOSThread()
	r0 = ccall(pre, preArgs)
	if Code(r0) == 0 {
		r1 = ccall(fn, args)
	}
	runtime.UnlockOSThread()
	return r0, r1
}

// ccallPrepared is never reached here: Prepare prepares nothing where
// StackLists is false.
func ccallPrepared(p *Prepared, a0 uintptr) (r0, r1 uintptr) {
	panic("clib: a Prepared call on a platform without the trampoline")
}

// ccallPreparedArgs is never reached here either.
func ccallPreparedArgs(p *Prepared, args []uintptr) (r0, r1 uintptr) {
	panic("clib: a Prepared call on a platform without the trampoline")
}

// ccallParams is never reached here either.
func ccallParams(p *Prepared, args *[11]uintptr, at int, vals *[MaxParams]uint64, n int) (r0, r1 uintptr) {
	panic("clib: a Prepared call on a platform without the trampoline")
}
