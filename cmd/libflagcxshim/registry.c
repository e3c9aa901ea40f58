//go:build cgo

/*
 * The registry (registry.h): open addressing, linear probing, tombstones.
 * Readers take no lock; writers (insert, forget, take, mark, and the
 * rebuild an insert may start) hold fx_mu, so there is one writer at a time.
 *
 * The rules that make lock-free reads safe:
 *
 * 1. A slot's life within one table block: 0 (empty) -> obj (live) -> 1
 *    (tombstone), never back. The entry's handle, dev and kind are written
 *    before its obj word is published with a release store, and never
 *    change while the block is in service, except kind's extra bits
 *    (FX_WRAPPED, fx_reg_mark), which readers do not test. A reader loads
 *    obj with acquire; seeing its object there, it sees the fields written
 *    before (release/acquire). A slot is never given to another object
 *    (nor to the same address again) except by a rebuild; an insert skips
 *    tombstones, so churn fills the table with them, and an insert that
 *    would fill it past half rebuilds it.
 * 2. A rebuild copies the live entries into another block, at least four
 *    times their number (64 at least: churn never grows the table), and
 *    publishes that block's address with a release store to fx_tab; a
 *    reader loads fx_tab with acquire and sees the block complete.
 * 3. Blocks are never freed: a reader may still be reading the block it
 *    loaded when the writer retires it, and nothing cheap tells the writer
 *    when the last such reader has left. A retired block goes on a list,
 *    and a later rebuild to the same capacity rewrites it instead of
 *    allocating. Each block has a sequence number, odd while the block is
 *    out of service (retired, or being rewritten): the writer makes it odd
 *    (a relaxed store, then a release fence) before anything in the block
 *    is rewritten, and even (a release store) once the rewrite is done,
 *    before it publishes the block. A reader reads the sequence (acquire)
 *    before probing and again after (behind an acquire fence), and keeps
 *    its answer only when both reads are the same even number: had any of
 *    its loads seen a value written after the writer's fence, the
 *    fence-to-fence synchronization would make the second read see the odd
 *    number or a later one (the seqlock argument: H.-J. Boehm, "Can seqlocks
 *    get along with programming language memory models?", MSPC 2012). It
 *    then reloads fx_tab and tries again; after FX_TRIES tries it reads
 *    under fx_mu, so a reader always finishes. Every word of a block that
 *    a reader loads is loaded and stored with atomics (relaxed where the
 *    sequence orders it), so a race with a rewrite is no undefined
 *    behavior, only a retry; the probe loop is bounded by the capacity,
 *    which never changes for a block.
 * 4. Memory: at most two blocks of each capacity ever exist (one in
 *    service, one retired: a rebuild allocates only when none of its
 *    capacity is retired), so the blocks are bounded by four times the
 *    largest table the live objects ever needed (24 bytes an entry). They
 *    are kept for the process's life: the plugin is a Go c-shared library,
 *    linked nodelete, never unloaded, and freeing them at exit could race
 *    readers still running on other threads.
 *
 * With FX_POISON defined (the registry's C test), a retired block's
 * handles and devices are overwritten with poison at once, so that a reader
 * that kept an answer from a retired block would return poison and fail the
 * test (ThreadSanitizer, which that test runs under, also reports any read
 * of a block that was freed).
 */
#include <pthread.h>
#include <stdlib.h>

#include "registry.h"

#define LD(p, mo) __atomic_load_n(p, __ATOMIC_##mo)
#define ST(p, v, mo) __atomic_store_n(p, v, __ATOMIC_##mo)

enum { FX_EMPTY = 0, FX_TOMB = 1, FX_TRIES = 8, FX_MIN_CAP = 64 };

struct fx_entry {
	uintptr_t obj; /* FX_EMPTY, FX_TOMB or the object's address */
	uintptr_t handle;
	int dev, kind;
};

struct fx_table {
	size_t cap;           /* a power of two; fixed for the block's life */
	uint64_t seq;         /* odd while out of service (rule 3) */
	struct fx_table *next; /* the retired list (writer only) */
	struct fx_entry e[];
};

static pthread_mutex_t fx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fx_table *fx_tab;     /* in service; atomic */
static struct fx_table *fx_retired; /* writer only */
static size_t fx_used;              /* live entries and tombstones in fx_tab; writer only */
static uint64_t fx_rebuilds, fx_blocks, fx_retries, fx_locked;

static size_t fx_hash(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull); }

/* fx_live is obj's live entry in t (writer, or a reader validating), or
 * NULL. */
static struct fx_entry *fx_live(struct fx_table *t, uintptr_t obj) {
	size_t mask = t->cap - 1, i = fx_hash(obj) & mask;
	for (size_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t o = LD(&t->e[i].obj, ACQUIRE);
		if (o == obj) return &t->e[i];
		if (o == FX_EMPTY) return NULL;
	}
	return NULL;
}

static int fx_match(struct fx_entry *e, int mask, int want, struct fx_hit *out) {
	struct fx_hit h = {LD(&e->handle, RELAXED), LD(&e->dev, RELAXED), LD(&e->kind, RELAXED)};
	if ((h.kind & mask) != want) return 0;
	if (out) *out = h;
	return 1;
}

int fx_reg_find(uintptr_t obj, int mask, int want, struct fx_hit *out) {
	if (obj <= FX_TOMB) return 0;
	for (int try = 0; try < FX_TRIES; try++) {
		struct fx_table *t = LD(&fx_tab, ACQUIRE);
		if (t == NULL) return 0;
		uint64_t s = LD(&t->seq, ACQUIRE);
		if (s & 1) { /* retired since we loaded fx_tab: load it again */
			__atomic_fetch_add(&fx_retries, 1, __ATOMIC_RELAXED);
			continue;
		}
		struct fx_hit h;
		struct fx_entry *e = fx_live(t, obj);
		int ok = e != NULL && fx_match(e, mask, want, &h);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(&t->seq, RELAXED) == s) {
			if (ok && out) *out = h;
			return ok;
		}
		__atomic_fetch_add(&fx_retries, 1, __ATOMIC_RELAXED);
	}
	/* rebuilds kept overtaking this reader: read as a writer would */
	__atomic_fetch_add(&fx_locked, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fx_mu);
	struct fx_table *t = LD(&fx_tab, RELAXED);
	struct fx_entry *e = t ? fx_live(t, obj) : NULL;
	int ok = e != NULL && fx_match(e, mask, want, out);
	pthread_mutex_unlock(&fx_mu);
	return ok;
}

/* fx_put writes an entry into t's first empty slot from obj's hash; a live
 * entry of the same address on the way is replaced (a tombstone: the new
 * one goes in another slot, rule 1). The caller publishes (t is private,
 * or order is a release). */
static void fx_put(struct fx_table *t, uintptr_t obj, uintptr_t handle, int dev, int kind, int order) {
	size_t mask = t->cap - 1, i = fx_hash(obj) & mask;
	for (uintptr_t o; (o = LD(&t->e[i].obj, RELAXED)) != FX_EMPTY; i = (i + 1) & mask)
		if (o == obj) ST(&t->e[i].obj, FX_TOMB, RELEASE);
	ST(&t->e[i].handle, handle, RELAXED);
	ST(&t->e[i].dev, dev, RELAXED);
	ST(&t->e[i].kind, kind, RELAXED);
	__atomic_store_n(&t->e[i].obj, obj, order);
}

/* fx_retire takes old out of service (rule 3) and lists it. */
static void fx_retire(struct fx_table *old) {
	ST(&old->seq, LD(&old->seq, RELAXED) + 1, RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
#ifdef FX_POISON
	for (size_t i = 0; i < old->cap; i++) {
		ST(&old->e[i].handle, (uintptr_t)0xdeadbeefdeadbeefull, RELAXED);
		ST(&old->e[i].dev, -7, RELAXED);
	}
#endif
	old->next = fx_retired;
	fx_retired = old;
}

/* fx_rebuild moves the live entries into a block of at least four times
 * their number, a retired one of that capacity if any (rule 2, 3). */
static int fx_rebuild(void) {
	struct fx_table *old = LD(&fx_tab, RELAXED), *t = NULL;
	size_t live = 1, cap = FX_MIN_CAP;
	for (size_t i = 0; old && i < old->cap; i++) live += LD(&old->e[i].obj, RELAXED) > FX_TOMB;
	while (cap < 4 * live) cap *= 2;
	for (struct fx_table **p = &fx_retired; *p; p = &(*p)->next)
		if ((*p)->cap == cap) {
			t = *p;
			*p = t->next;
			break;
		}
	if (t != NULL) { /* odd since it was retired; an empty slot's other words are never read */
		for (size_t i = 0; i < cap; i++) ST(&t->e[i].obj, FX_EMPTY, RELAXED);
	} else {
		t = calloc(1, sizeof *t + cap * sizeof t->e[0]);
		if (t == NULL) return 0;
		t->cap = cap;
		fx_blocks++;
	}
	size_t n = 0;
	for (size_t i = 0; old && i < old->cap; i++) {
		struct fx_entry *e = &old->e[i];
		uintptr_t o = LD(&e->obj, RELAXED);
		if (o > FX_TOMB) {
			fx_put(t, o, LD(&e->handle, RELAXED), LD(&e->dev, RELAXED), LD(&e->kind, RELAXED), __ATOMIC_RELAXED);
			n++;
		}
	}
	uint64_t s = LD(&t->seq, RELAXED);
	if (s & 1) ST(&t->seq, s + 1, RELEASE);
	ST(&fx_tab, t, RELEASE);
	fx_used = n;
	fx_rebuilds++;
	if (old) fx_retire(old);
	return 1;
}

int fx_reg_insert(uintptr_t obj, uintptr_t handle, int dev, int kind) {
	int ok = 1;
	if (obj <= FX_TOMB) return 0;
	pthread_mutex_lock(&fx_mu);
	struct fx_table *t = LD(&fx_tab, RELAXED);
	if (t == NULL || (fx_used + 1) * 2 > t->cap) {
		ok = fx_rebuild();
		t = LD(&fx_tab, RELAXED);
	}
	if (ok) {
		fx_put(t, obj, handle, dev, kind, __ATOMIC_RELEASE);
		fx_used++;
	}
	pthread_mutex_unlock(&fx_mu);
	return ok;
}

/* fx_change finds obj's matching live entry under the mutex: 1 with the
 * entry copied out, after tombstoning it (tomb) and oring bits into it. */
static int fx_change(uintptr_t obj, int mask, int want, int tomb, int bits, struct fx_hit *out) {
	int ok = 0;
	if (obj <= FX_TOMB) return 0;
	pthread_mutex_lock(&fx_mu);
	struct fx_table *t = LD(&fx_tab, RELAXED);
	struct fx_entry *e = t ? fx_live(t, obj) : NULL;
	if (e != NULL && fx_match(e, mask, want, out)) {
		ok = 1;
		if (bits) __atomic_fetch_or(&e->kind, bits, __ATOMIC_RELAXED);
		if (tomb) ST(&e->obj, FX_TOMB, RELEASE);
	}
	pthread_mutex_unlock(&fx_mu);
	return ok;
}

void fx_reg_forget(uintptr_t obj) { fx_change(obj, 0, 0, 1, 0, NULL); }

int fx_reg_take(uintptr_t obj, int mask, int want, struct fx_hit *out) { return fx_change(obj, mask, want, 1, 0, out); }

int fx_reg_mark(uintptr_t obj, int mask, int want, int bits, struct fx_hit *out) {
	return fx_change(obj, mask, want, 0, bits, out);
}

void fx_reg_stats(struct fx_reg_stats *out) {
	pthread_mutex_lock(&fx_mu);
	struct fx_table *t = LD(&fx_tab, RELAXED);
	out->cap = t ? t->cap : 0;
	out->rebuilds = fx_rebuilds;
	out->blocks = fx_blocks;
	out->retries = LD(&fx_retries, RELAXED);
	out->locked = LD(&fx_locked, RELAXED);
	pthread_mutex_unlock(&fx_mu);
}
