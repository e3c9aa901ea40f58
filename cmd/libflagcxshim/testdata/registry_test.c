/*
 * The plugin's object registry (registry.c) alone, from many threads at
 * once: writer threads create and destroy objects as fast as they can
 * (every few dozen inserts rebuild the table, retiring a block), while
 * reader threads look up long-lived objects, which must always be found
 * with their own handle, device and kind, and objects of their own that
 * they register and forget (a forgotten object must never be found by the
 * thread that forgot it). Built with -DFX_POISON, a retired block is
 * overwritten with poison handles at once, so a lookup that kept an answer
 * read from a retired block fails here; run under ThreadSanitizer, a read
 * of a block that was freed is reported too. At the end: the churn rebuilt
 * the table many times without growing it or allocating more than one more
 * block.
 *
 * usage: registry_test ITERATIONS
 * Prints "ok ..." lines; "FAIL ..." and exit 1 at the first failure.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../registry.h"

enum { STABLE = 20, RING = 16, WRITERS = 2, READERS = 2, KEY = 0x5a5a };
enum { STREAM = 1, EVENT = 2, OWNED = 4, WRAPPED = 8 };

static long iterations;
static struct { uintptr_t w[2]; } stable[STABLE];

static void fail(const char *what, long i, uintptr_t got) {
	printf("FAIL %s (iteration %ld, got %#lx)\n", what, i, (unsigned long)got);
	fflush(stdout);
	exit(1);
}

static uintptr_t handle_of(uintptr_t obj) { return obj ^ (uintptr_t)KEY; }

/* xorshift: each thread's own sequence */
static unsigned next(unsigned *x) {
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void *writer(void *arg) {
	int id = (int)(uintptr_t)arg;
	uintptr_t ring[RING] = {0};
	unsigned x = 0x9e3779b9u + (unsigned)id;
	for (long i = 0; i < iterations; i++) {
		int k = (int)(i % RING);
		if (ring[k]) { /* the oldest goes: taken (as streamDestroy), or marked then forgotten (adopt, streamFree) */
			struct fx_hit h;
			if (next(&x) & 1) {
				if (!fx_reg_take(ring[k], STREAM | OWNED, STREAM | OWNED, &h)) fail("take a live object", i, ring[k]);
			} else {
				if (!fx_reg_mark(ring[k], STREAM | OWNED, STREAM | OWNED, WRAPPED, &h)) fail("mark a live object", i, ring[k]);
				if (!fx_reg_find(ring[k], 3, STREAM, &h) || !(h.kind & WRAPPED)) fail("the mark is seen", i, h.kind);
				fx_reg_forget(ring[k]);
			}
			if (h.handle != handle_of(ring[k]) || h.dev != 100 + id) fail("the writer's entry", i, h.handle);
			if (fx_reg_find(ring[k], 0, 0, NULL)) fail("a destroyed object is not found", i, ring[k]);
			free((void *)ring[k]); /* its address comes back from calloc soon: a new object there */
		}
		uintptr_t obj = (uintptr_t)calloc(2, sizeof(uintptr_t));
		if (!obj) fail("calloc", i, 0);
		if (!fx_reg_insert(obj, handle_of(obj), 100 + id, STREAM | OWNED)) fail("insert", i, obj);
		ring[k] = obj;
	}
	for (int k = 0; k < RING; k++) {
		fx_reg_forget(ring[k]);
		free((void *)ring[k]);
	}
	return NULL;
}

static void *reader(void *arg) {
	int id = (int)(uintptr_t)arg;
	unsigned x = 0x85ebca6bu + (unsigned)id;
	for (long i = 0; i < iterations; i++) {
		int s = (int)(next(&x) % STABLE);
		uintptr_t obj = (uintptr_t)&stable[s];
		int kind = s % 2 ? EVENT : STREAM;
		struct fx_hit h = {0, -1, -1};
		if (!fx_reg_find(obj, 3, kind, &h)) fail("a long-lived object is found", i, obj);
		if (h.handle != handle_of(obj)) fail("a long-lived object's handle (poison: a retired block was read)", i, h.handle);
		if (h.dev != s % 7 || h.kind != kind) fail("a long-lived object's device and kind", i, (uintptr_t)h.dev);
		if (fx_reg_find(obj, 3, kind ^ 3, NULL)) fail("not as the other kind", i, obj);
		if (i % 32 == 0) { /* an object of this thread's own: found while live, never after */
			uintptr_t own = (uintptr_t)calloc(2, sizeof(uintptr_t));
			if (!own) fail("calloc", i, 0);
			if (fx_reg_find(own, 0, 0, NULL)) fail("an unregistered object is not found", i, own);
			if (!fx_reg_insert(own, handle_of(own), 200 + id, EVENT)) fail("insert", i, own);
			if (!fx_reg_find(own, 3, EVENT, &h) || h.handle != handle_of(own) || h.dev != 200 + id) fail("the reader's own object", i, h.handle);
			fx_reg_forget(own);
			if (fx_reg_find(own, 0, 0, NULL)) fail("a forgotten object is not found by the thread that forgot it", i, own);
			free((void *)own);
		}
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2 || (iterations = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: %s ITERATIONS\n", argv[0]);
		return 2;
	}
	for (int s = 0; s < STABLE; s++) {
		uintptr_t obj = (uintptr_t)&stable[s];
		if (!fx_reg_insert(obj, handle_of(obj), s % 7, s % 2 ? EVENT : STREAM)) fail("insert a long-lived object", s, obj);
	}
	if (fx_reg_find(0, 0, 0, NULL) || fx_reg_find(1, 0, 0, NULL)) fail("NULL and the tombstone word are never found", 0, 0);
	struct fx_reg_stats before, after;
	fx_reg_stats(&before);
	pthread_t t[WRITERS + READERS];
	for (int i = 0; i < WRITERS + READERS; i++)
		if (pthread_create(&t[i], NULL, i < WRITERS ? writer : reader, (void *)(uintptr_t)i) != 0) fail("pthread_create", i, 0);
	for (int i = 0; i < WRITERS + READERS; i++) pthread_join(t[i], NULL);
	fx_reg_stats(&after);
	for (int s = 0; s < STABLE; s++) {
		struct fx_hit h;
		if (!fx_reg_take((uintptr_t)&stable[s], 3, s % 2 ? EVENT : STREAM, &h) || h.handle != handle_of((uintptr_t)&stable[s])) fail("take a long-lived object", s, h.handle);
	}
	uint64_t churned = after.rebuilds - before.rebuilds;
	printf("ok registry: %ld iterations, %llu rebuilds, capacity %zu -> %zu, blocks %llu -> %llu, %llu retried lookups, %llu under the lock\n",
		iterations, (unsigned long long)churned, before.cap, after.cap, (unsigned long long)before.blocks,
		(unsigned long long)after.blocks, (unsigned long long)after.retries, (unsigned long long)after.locked);
	/* at most STABLE + WRITERS * RING + READERS live at once: the table
	 * needs 4 times one more than that, a power of two (64 at least); and
	 * at most two blocks of each capacity up to it */
	size_t need = 64, classes = 1;
	while (need < 4 * (STABLE + WRITERS * RING + READERS + 1)) need *= 2, classes++;
	if (churned < (uint64_t)iterations / 256) fail("churn rebuilds the table", 0, churned);
	if (after.cap > need) fail("churn never grows the table past what the live objects need", 0, after.cap);
	if (after.blocks > 2 * classes) fail("churn reuses retired blocks", 0, after.blocks);
	printf("ok churn\n");
	return 0;
}
