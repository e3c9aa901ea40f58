/*
 * The plugin's direct calls (fast.c): the hot fields served in C with the
 * driver functions flagshim's core resolved and checked (fast.go hands
 * their addresses over when the backend is chosen), without entering Go.
 */
#ifndef FLAGCXSHIM_FAST_H
#define FLAGCXSHIM_FAST_H

#include <stdint.h>

#include "flagcx_v1.h"

/* The operations, in the order fast.go hands them over (fxOps). */
enum {
	FX_SELECT, /* makes a device current: cuCtxSetCurrent(ctx) / hipSetDevice(ordinal) */
	FX_STREAM_SYNC,
	FX_STREAM_QUERY,
	FX_EVENT_RECORD,
	FX_EVENT_SYNC,
	FX_EVENT_QUERY,
	FX_HTOD_ASYNC,
	FX_DTOH_ASYNC,
	FX_DTOD_ASYNC,
	FX_MEM_ALLOC,
	FX_MEM_FREE,
	FX_STREAM_CREATE,
	FX_STREAM_DESTROY,
	FX_NOPS
};

/* What a registered object is (the low two bits), and, for a stream:
 * FX_OWNED, made by fast.c's streamCreate (no Go object until the Go path
 * needs one: flagcxshim_fast_adopt, which sets FX_WRAPPED). */
enum { FX_STREAM = 1, FX_EVENT = 2, FX_OWNED = 4, FX_WRAPPED = 8 };

/* Called from Go (fast.go). */
void flagcxshim_fast_enable(const uintptr_t *fns, const int *ops, uintptr_t current, int notReady, int ndev, unsigned nonBlocking);
void flagcxshim_fast_publish(int dev, uintptr_t sel);
int flagcxshim_fast_register(void *obj, uintptr_t handle, int dev, int kind);
void flagcxshim_fast_forget(void *obj);
int flagcxshim_fast_adopt(void *obj, uintptr_t *handle, int *dev);

/* Called from adaptor.c: 1 when the call was served (*r its result), 0 when
 * the Go path must serve it (anything but a live object of this plugin on a
 * device whose context is known, with the direct calls enabled). */
int fx_fast_streamSynchronize(flagcxStream_t s, flagcxResult_t *r);
int fx_fast_streamQuery(flagcxStream_t s, flagcxResult_t *r);
int fx_fast_eventRecord(flagcxEvent_t e, flagcxStream_t s, flagcxResult_t *r);
int fx_fast_eventSynchronize(flagcxEvent_t e, flagcxResult_t *r);
int fx_fast_eventQuery(flagcxEvent_t e, flagcxResult_t *r);
int fx_fast_memcpy(void *dst, void *src, size_t size, int kind, flagcxStream_t s, flagcxResult_t *r);
int fx_fast_malloc(int dev, void **ptr, size_t size, int kind, flagcxStream_t s, flagcxResult_t *r);
int fx_fast_streamCreate(int dev, flagcxStream_t *out, flagcxResult_t *r);
int fx_fast_streamDestroy(flagcxStream_t s, flagcxResult_t *r);
int fx_fast_free(int dev, void *ptr, int kind, flagcxStream_t s, flagcxResult_t *r);

/* Counts the plugin's entries into Go from its fields (adaptor.c's GO). */
extern uint64_t flagcxshim_go_entries_n;
#define GO(x) (__atomic_fetch_add(&flagcxshim_go_entries_n, 1, __ATOMIC_RELAXED), (x))

#endif
