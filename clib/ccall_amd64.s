//go:build linux && !purego

#include "textflag.h"

// ctramp calls block.fn(block.args[0..10]) with the C calling convention
// and stores the integer result in block.r1. When block.pre is not 0, it
// first calls block.pre(block.preArg), stores that result in block.r0 and
// goes on only when its 32-bit result is 0: "make this device's context
// current, then launch" in one transition. When block.then is not 0 and
// fn's 32-bit result is 0 (success), it then calls block.then() on the same
// thread, in the same transition to C, and stores its result in block.r2:
// "make this device's context current, then synchronize" costs one
// runtime.cgocall and needs no locked OS thread. The block (ccall_fast.go):
//	0   fn
//	8   then (0: none)
//	16  args[0] .. 96 args[10]
//	104 r1 (0 when fn did not run)
//	112 r2 (0 when then did not run)
//	120 pre (0: none)
//	128 preArg
//	136 r0 (pre's result)
// runtime.cgocall runs it on the system stack with the block's address in
// DI.
//
// The block lives in the calling goroutine's frame, and a C function may
// call back into Go (purego.NewCallback): the callback runs on that
// goroutine, whose stack may then grow and move, block included. So the
// trampoline never uses the block's address after a C call: it reads
// everything the calls need into its own frame (on the system stack,
// which does not move) first, keeps the results there, and writes them
// once at the end into the block found again from the top of the
// goroutine's stack (the block's distance below it survives a move), as
// cgo's own wrappers do (cmd/cgo/out.go: _cgo_topofstack() before and
// after). _cgo_topofstack is the runtime's g.m.curg.stack.hi, written for
// C callers (runtime/asm_amd64.s; it clobbers AX and CX only). Two such
// lookups a call, whatever the chain.
//
// The frame (144 bytes and the saved BP) keeps SP 16-byte aligned at each
// CALL:
//	0..32   args[6..10], fn's arguments on the C stack (pre takes none, so
//	        they survive its call)
//	40      the block's distance below the top of the goroutine's stack
//	48      r0, 56 r1, 64 r2 (0 for a call that did not run)
//	72      then
//	80      fn, 88..128 args[0..5] (kept across pre's call)
GLOBL ·ctrampABI0(SB), NOPTR|RODATA, $8
DATA ·ctrampABI0(SB)/8, $ctramp<>(SB)
TEXT ctramp<>(SB), NOSPLIT, $144
	MOVQ DI, R11
	CALL _cgo_topofstack(SB)
	SUBQ R11, AX
	MOVQ AX, 40(SP)
	XORL AX, AX
	MOVQ AX, 48(SP)
	MOVQ AX, 56(SP)
	MOVQ AX, 64(SP)
	MOVQ 64(R11), AX
	MOVQ AX, 0(SP)
	MOVQ 72(R11), AX
	MOVQ AX, 8(SP)
	MOVQ 80(R11), AX
	MOVQ AX, 16(SP)
	MOVQ 88(R11), AX
	MOVQ AX, 24(SP)
	MOVQ 96(R11), AX
	MOVQ AX, 32(SP)
	MOVQ 8(R11), AX
	MOVQ AX, 72(SP)
	MOVQ 120(R11), R10
	TESTQ R10, R10
	JEQ direct
	MOVQ 0(R11), AX
	MOVQ AX, 80(SP)
	MOVQ 16(R11), AX
	MOVQ AX, 88(SP)
	MOVQ 24(R11), AX
	MOVQ AX, 96(SP)
	MOVQ 32(R11), AX
	MOVQ AX, 104(SP)
	MOVQ 40(R11), AX
	MOVQ AX, 112(SP)
	MOVQ 48(R11), AX
	MOVQ AX, 120(SP)
	MOVQ 56(R11), AX
	MOVQ AX, 128(SP)
	MOVQ 128(R11), DI
	XORL AX, AX
	CALL R10
	MOVQ AX, 48(SP)
	TESTL AX, AX
	JNE done
	MOVQ 88(SP), DI
	MOVQ 96(SP), SI
	MOVQ 104(SP), DX
	MOVQ 112(SP), CX
	MOVQ 120(SP), R8
	MOVQ 128(SP), R9
	MOVQ 80(SP), R10
	JMP call
direct:
	MOVQ 16(R11), DI
	MOVQ 24(R11), SI
	MOVQ 32(R11), DX
	MOVQ 40(R11), CX
	MOVQ 48(R11), R8
	MOVQ 56(R11), R9
	MOVQ 0(R11), R10
call:
	XORL AX, AX
	CALL R10
	MOVQ AX, 56(SP)
	MOVQ 72(SP), R10
	TESTQ R10, R10
	JEQ done
	TESTL AX, AX
	JNE done
	XORL AX, AX
	CALL R10
	MOVQ AX, 64(SP)
done:
	CALL _cgo_topofstack(SB)
	SUBQ 40(SP), AX
	MOVQ 48(SP), CX
	MOVQ CX, 136(AX)
	MOVQ 56(SP), CX
	MOVQ CX, 104(AX)
	MOVQ 64(SP), CX
	MOVQ CX, 112(AX)
	RET

// cprep makes a Prepared call (prepared.go): block.pre(block.preArg)
// where pre is not 0 and, when its 32-bit result is 0, block.fn(a0, a1),
// as ctramp does with a pre, but moving the five words such a call has
// instead of ctramp's fourteen: the hot calls (a device's or a stream's
// synchronize, an event's record) pay for nothing they do not use. As
// ctramp, it reads the block before any C call and writes the results
// into the block found again from the top of the goroutine's stack. The
// block (ccall_fast.go prepBlock):
//	0 fn, 8 pre (0: none), 16 preArg, 24 a0, 32 a1, 40 r0, 48 r1
// The frame (48 bytes and the saved BP; SP 16-byte aligned at each CALL):
//	0 the block's distance below the top of the goroutine's stack
//	8 fn, 16 a0, 24 a1 (kept across pre's call), 32 r0, 40 r1
GLOBL ·cprepABI0(SB), NOPTR|RODATA, $8
DATA ·cprepABI0(SB)/8, $cprep<>(SB)
TEXT cprep<>(SB), NOSPLIT, $48
	MOVQ DI, R11
	CALL _cgo_topofstack(SB)
	SUBQ R11, AX
	MOVQ AX, 0(SP)
	MOVQ 0(R11), AX
	MOVQ AX, 8(SP)
	MOVQ 24(R11), AX
	MOVQ AX, 16(SP)
	MOVQ 32(R11), AX
	MOVQ AX, 24(SP)
	XORL AX, AX
	MOVQ AX, 32(SP)
	MOVQ AX, 40(SP)
	MOVQ 8(R11), R10
	TESTQ R10, R10
	JEQ prepcall
	MOVQ 16(R11), DI
	XORL AX, AX
	CALL R10
	MOVQ AX, 32(SP)
	TESTL AX, AX
	JNE prepdone
prepcall:
	MOVQ 16(SP), DI
	MOVQ 24(SP), SI
	MOVQ 8(SP), R10
	XORL AX, AX
	CALL R10
	MOVQ AX, 40(SP)
prepdone:
	CALL _cgo_topofstack(SB)
	SUBQ 0(SP), AX
	MOVQ 32(SP), CX
	MOVQ CX, 40(AX)
	MOVQ 40(SP), CX
	MOVQ CX, 48(AX)
	RET

// cparams calls block.fn(args[0..10]) after block.pre(block.preArg) as
// ctramp does, args being the caller's eleven words (block.args points to
// them), with one argument, args[block.at], replaced by the address of an
// array of pointers to block.n 8-byte values (a kernel's parameters:
// cuLaunchKernel's kernelParams), or by 0 when n is 0. The values and the
// array are laid out in this frame, on the system stack, which is neither
// Go's heap nor a goroutine's stack: memory that C may read for the call
// as a C caller's locals, and gone after it (the driver copies a launch's
// parameters before cuLaunchKernel returns). The arguments and the values
// are read from the caller's arrays (on its goroutine's stack) before any
// C call, so a stack that moves during one does not matter; the results
// are written as ctramp writes them. The block (ccall_fast.go pblock):
//	0   fn
//	8   pre (0: none)
//	16  preArg
//	24  args (a pointer to eleven words)
//	32  vals (a pointer to at most 16 values)
//	40  n
//	48  at (0..10)
//	56  r0, 64 r1
// The frame (384 bytes and the saved BP; SP 16-byte aligned at each CALL):
//	0..32     args[6..10] on the C stack
//	40        the block's distance below the top of the goroutine's stack
//	48 r0, 56 r1, 64 fn
//	72..112   args[0..5]
//	120..248  the pointers (16)
//	248..376  the values (16)
GLOBL ·cparamsABI0(SB), NOPTR|RODATA, $8
DATA ·cparamsABI0(SB)/8, $cparams<>(SB)
TEXT cparams<>(SB), NOSPLIT, $384
	MOVQ DI, R11
	CALL _cgo_topofstack(SB)
	SUBQ R11, AX
	MOVQ AX, 40(SP)
	XORL AX, AX
	MOVQ AX, 48(SP)
	MOVQ AX, 56(SP)
	MOVQ 0(R11), AX
	MOVQ AX, 64(SP)
	MOVQ 24(R11), SI
	MOVQ 0(SI), AX
	MOVQ AX, 72(SP)
	MOVQ 8(SI), AX
	MOVQ AX, 80(SP)
	MOVQ 16(SI), AX
	MOVQ AX, 88(SP)
	MOVQ 24(SI), AX
	MOVQ AX, 96(SP)
	MOVQ 32(SI), AX
	MOVQ AX, 104(SP)
	MOVQ 40(SI), AX
	MOVQ AX, 112(SP)
	MOVQ 48(SI), AX
	MOVQ AX, 0(SP)
	MOVQ 56(SI), AX
	MOVQ AX, 8(SP)
	MOVQ 64(SI), AX
	MOVQ AX, 16(SP)
	MOVQ 72(SI), AX
	MOVQ AX, 24(SP)
	MOVQ 80(SI), AX
	MOVQ AX, 32(SP)
	// The values and their addresses.
	MOVQ 32(R11), SI
	MOVQ 40(R11), CX
	XORL BX, BX
	XORL DX, DX
	TESTQ CX, CX
	JEQ placed
copy:
	MOVQ (SI)(BX*8), AX
	MOVQ AX, 248(SP)(BX*8)
	LEAQ 248(SP)(BX*8), AX
	MOVQ AX, 120(SP)(BX*8)
	INCQ BX
	CMPQ BX, CX
	JLT copy
	LEAQ 120(SP), DX
placed:
	// DX (the array, or 0) into argument at: a register's slot
	// (72 + 8*at) or a stack slot (8*(at-6)).
	MOVQ 48(R11), BX
	LEAQ 72(SP)(BX*8), AX
	CMPQ BX, $6
	JLT slot
	LEAQ -48(SP)(BX*8), AX
slot:
	MOVQ DX, (AX)
	MOVQ 8(R11), R10
	TESTQ R10, R10
	JEQ call
	MOVQ 16(R11), DI
	XORL AX, AX
	CALL R10
	MOVQ AX, 48(SP)
	TESTL AX, AX
	JNE done
call:
	MOVQ 72(SP), DI
	MOVQ 80(SP), SI
	MOVQ 88(SP), DX
	MOVQ 96(SP), CX
	MOVQ 104(SP), R8
	MOVQ 112(SP), R9
	MOVQ 64(SP), R10
	XORL AX, AX
	CALL R10
	MOVQ AX, 56(SP)
done:
	CALL _cgo_topofstack(SB)
	SUBQ 40(SP), AX
	MOVQ 48(SP), CX
	MOVQ CX, 56(AX)
	MOVQ 56(SP), CX
	MOVQ CX, 64(AX)
	RET
