//go:build gpu && cgo

package gofloor

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fn0)(void);
typedef int (*fn1)(uintptr_t);
typedef int (*fn2)(uintptr_t, uintptr_t);
typedef int (*fn_htod)(unsigned long long, const void *, size_t);
typedef int (*fn_dtoh)(void *, unsigned long long, size_t);
typedef int (*fn_launch)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	uintptr_t, void **, void **);

static int gofloor_call1(uintptr_t f, uintptr_t a) { return ((fn1)f)(a); }

static int gofloor_set_then0(uintptr_t set, uintptr_t ctx, uintptr_t f) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn0)f)();
}

static int gofloor_set_then1(uintptr_t set, uintptr_t ctx, uintptr_t f, uintptr_t a) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn1)f)(a);
}

// gofloor_pad_then1 is gofloor_set_then1 with the C stack moved down by
// pad bytes first: where the callee's frames fall against cache lines and
// pages, the one thing a caller's own frame changes for the driver.
static int gofloor_pad_then1(uintptr_t pad, uintptr_t set, uintptr_t ctx, uintptr_t f, uintptr_t a) {
	volatile char *p = __builtin_alloca(pad + 1);
	p[0] = 0;
	return gofloor_set_then1(set, ctx, f, a);
}

static int gofloor_set_then2(uintptr_t set, uintptr_t ctx, uintptr_t f, uintptr_t a, uintptr_t b) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn2)f)(a, b);
}

static int gofloor_set_htod(uintptr_t set, uintptr_t ctx, uintptr_t f, unsigned long long dst, const void *src, size_t n) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn_htod)f)(dst, src, n);
}

static int gofloor_set_dtoh(uintptr_t set, uintptr_t ctx, uintptr_t f, void *dst, unsigned long long src, size_t n) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn_dtoh)f)(dst, src, n);
}

static int gofloor_set_launch(uintptr_t set, uintptr_t ctx, uintptr_t f, uintptr_t kernel, uintptr_t stream, void **params) {
	int r = ((fn1)set)(ctx);
	return r ? r : ((fn_launch)f)(kernel, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
}

// gofloor_params lays n 8-byte values out as a kernel's parameters: an
// array of n pointers, each to its value's slot, in one C allocation.
static void **gofloor_params(const unsigned long long *vals, int n) {
	void **p = malloc((size_t)n * (sizeof(void *) + 8));
	if (!p) return NULL;
	unsigned long long *slots = (unsigned long long *)(p + n);
	for (int i = 0; i < n; i++) {
		slots[i] = vals[i];
		p[i] = &slots[i];
	}
	return p;
}
*/
import "C"

import "unsafe"

// Call1 is f(a): cuCtxSetCurrent(ctx), cuCtxSynchronize_v2(ctx).
func Call1(f, a uintptr) int { return int(C.gofloor_call1(C.uintptr_t(f), C.uintptr_t(a))) }

// SetThen0 is set(ctx), then f() where it returned 0: cuCtxSetCurrent and
// cuCtxSynchronize.
func SetThen0(set, ctx, f uintptr) int {
	return int(C.gofloor_set_then0(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f)))
}

// SetThen1 is set(ctx), then f(a): cuStreamSynchronize(stream).
func SetThen1(set, ctx, f, a uintptr) int {
	return int(C.gofloor_set_then1(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f), C.uintptr_t(a)))
}

// PadThen1 is SetThen1 with the C stack moved down by pad bytes first.
func PadThen1(pad, set, ctx, f, a uintptr) int {
	return int(C.gofloor_pad_then1(C.uintptr_t(pad), C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f), C.uintptr_t(a)))
}

// SetThen2 is set(ctx), then f(a, b): cuEventRecord(event, stream).
func SetThen2(set, ctx, f, a, b uintptr) int {
	return int(C.gofloor_set_then2(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f), C.uintptr_t(a), C.uintptr_t(b)))
}

// SetThenHtoD is set(ctx), then f(dst, src, len(src)): cuMemcpyHtoD_v2 of
// Go memory, passed as cgo passes it (the pointer checked by cgocheck).
func SetThenHtoD(set, ctx, f uintptr, dst uint64, src []byte) int {
	return int(C.gofloor_set_htod(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f), C.ulonglong(dst),
		unsafe.Pointer(&src[0]), C.size_t(len(src))))
}

// SetThenDtoH is set(ctx), then f(dst, src, len(dst)): cuMemcpyDtoH_v2 into
// Go memory.
func SetThenDtoH(set, ctx, f uintptr, dst []byte, src uint64) int {
	return int(C.gofloor_set_dtoh(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f),
		unsafe.Pointer(&dst[0]), C.ulonglong(src), C.size_t(len(dst))))
}

// Params are a kernel's parameters in C memory, laid out once (NewParams).
type Params struct{ p *unsafe.Pointer }

// NewParams lays vals out as a kernel's parameters, each in an 8-byte slot
// (the driver copies each parameter's own size from its slot's start, as
// flagshim's launch buffers are laid out). They are never freed: a
// benchmark makes a few.
func NewParams(vals ...uint64) Params {
	if len(vals) == 0 {
		return Params{}
	}
	return Params{C.gofloor_params((*C.ulonglong)(unsafe.Pointer(&vals[0])), C.int(len(vals)))}
}

// SetThenLaunch is set(ctx), then f(kernel, grid 1x1x1, block 1x1x1, no
// shared memory, stream, params, no extra): cuLaunchKernel.
func SetThenLaunch(set, ctx, f, kernel, stream uintptr, params Params) int {
	return int(C.gofloor_set_launch(C.uintptr_t(set), C.uintptr_t(ctx), C.uintptr_t(f), C.uintptr_t(kernel),
		C.uintptr_t(stream), params.p))
}
