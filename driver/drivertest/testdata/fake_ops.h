/*
 * More of the shared fake driver (included at the end of fake_common.h):
 * memset (8/16/32-bit, now and on a stream), device-to-device copies,
 * managed memory, stream-ordered allocation, pinned memory's device address,
 * stream and event queries, 64-bit value waits and writes, host functions,
 * IPC memory handles, device lookup by PCI bus id and dma-buf export. Each
 * does what it says, so the kit judges by effect:
 *   - a memset sets the bytes, a copy copies; every range must lie inside
 *     one tracked allocation (*_ERROR_INVALID_VALUE, 1, otherwise);
 *   - work queued on a stream runs when something waits for it (fake_common.h);
 *     a query runs what can run without waiting and answers 600
 *     (*_ERROR_NOT_READY) while work is left, so a stream held by an unmet
 *     value wait stays "not ready" until the value is written; FAKE_QUERY_BUSY=N
 *     makes the first N queries of a stream or event with work queued answer
 *     600 without running anything;
 *   - a value wait (flags 0: GEQ, 1: EQ) holds its stream's later work until
 *     the 64-bit word at its address (device memory, or pinned host memory)
 *     holds such a value: a synchronize of the held stream first runs the
 *     other streams' work (a write there may release it), then polls, at most
 *     10 s, with the lock released (a host thread may write it), then
 *     returns 999 (*_ERROR_UNKNOWN);
 *   - a host function runs on a thread of the fake's own, created for it and
 *     joined, as the drivers run them on a thread of theirs; later work on its
 *     stream waits for it;
 *   - an IPC handle is 64 bytes: a magic, this process's id, the allocation's
 *     base and size, and a checksum. Open checks all of them (garbage is 1, a
 *     freed allocation 400) and maps the allocation again: it returns its
 *     base and counts the mapping; close needs an open mapping (1 otherwise).
 *     Unlike the drivers, the fake lets a process open its own handles;
 *   - a PCI bus id lookup accepts "domain:bus:device.function" and
 *     "bus:device.function" in hex, any case, and answers a device handle
 *     (CUDA, MUSA) or the ordinal (HIP, fake_device_get_by_pci_bus_id's
 *     ordinal argument); an id of no device is 101 (*_ERROR_INVALID_DEVICE);
 *   - the dma-buf attribute (CUDA's 124, HIP's 93 in the HIP fake) answers
 *     FAKE_DMA_BUF (default 1); with it 0, an export returns 801
 *     (*_ERROR_NOT_SUPPORTED); an export opens /dev/null as the descriptor,
 *     which the caller closes.
 * fake_host_funcs_run(), fake_ipc_mappings() and fake_dma_fds() count, for
 * checks.
 */
#include <sys/stat.h>

enum { OP_MEMSET = 16, OP_DTOD, OP_FREE, OP_WAIT64, OP_WRITE64, OP_HOSTFN };

static int fake_query_busy, fake_dma_buf, fake_nhostfns, fake_nipc, fake_ndma;

__attribute__((constructor)) static void fake_ops_load(void) {
	fake_query_busy = fake_env_int("QUERY_BUSY", 0);
	fake_dma_buf = fake_env_int("DMA_BUF", 1);
}

static int fake_dma_buf_supported(void) { return fake_dma_buf != 0; }

FAKE_EXPORT int fake_host_funcs_run(void) { return __atomic_load_n(&fake_nhostfns, __ATOMIC_SEQ_CST); }
FAKE_EXPORT int fake_ipc_mappings(void) { return __atomic_load_n(&fake_nipc, __ATOMIC_SEQ_CST); }
FAKE_EXPORT int fake_dma_fds(void) { return __atomic_load_n(&fake_ndma, __ATOMIC_SEQ_CST); }

/* fake_word_ok: [p, p+8) lies in device memory or pinned host memory;
 * fake_smu held. */
static int fake_word_ok(uintptr_t p) { return fake_valid(p, 8) || fake_host_ok(p, 8); }

static int fake_op_blocked(const struct fake_op *op) {
	if (op->kind != OP_WAIT64) return 0;
	unsigned long long v = __atomic_load_n((unsigned long long *)op->dst, __ATOMIC_SEQ_CST);
	return op->threads == 1 ? v != op->vals[0] : v < op->vals[0];
}

static void *fake_host_thread(void *arg) {
	struct fake_op *op = arg;
	((void (*)(void *))op->src)((void *)op->dst);
	return NULL;
}

static int fake_run_op(struct fake_op *op) {
	switch (op->kind) {
	case OP_MEMSET: {
		unsigned char *p = (unsigned char *)op->dst;
		for (size_t i = 0; i < op->n; i++) {
			switch (op->threads) {
			case 1: p[i] = (unsigned char)op->vals[0]; break;
			case 2: ((unsigned short *)p)[i] = (unsigned short)op->vals[0]; break;
			case 4: ((unsigned int *)p)[i] = (unsigned int)op->vals[0]; break;
			}
		}
		return 0;
	}
	case OP_DTOD:
		memmove((void *)op->dst, (const void *)op->src, op->n);
		return 0;
	case OP_FREE: {
		pthread_mutex_lock(&fake_mu);
		int ok = fake_untrack(op->dst, 0);
		pthread_mutex_unlock(&fake_mu);
		if (!ok) return 1;
		free((void *)op->dst);
		return 0;
	}
	case OP_WRITE64:
		__atomic_store_n((unsigned long long *)op->dst, op->vals[0], __ATOMIC_SEQ_CST);
		return 0;
	case OP_HOSTFN: {
		pthread_t t;
		if (pthread_create(&t, NULL, fake_host_thread, op) != 0) return 999;
		pthread_join(t, NULL);
		__atomic_add_fetch(&fake_nhostfns, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	}
	return 0;
}

/* fake_unblock makes progress while s's head waits: it runs the other
 * streams' work that can run, then polls with the lock released. 0 when the
 * head may run now; 999 after 10 s. fake_smu held. */
static int fake_unblock(struct fake_stream *s) {
	for (int i = 0; i < 10000; i++) {
		for (struct fake_stream *o = fake_streams; o; o = o->next)
			if (o != s && o->live) (void)fake_flush_to(o, 0);
		if (!s->head || !fake_op_blocked(s->head)) return 0;
		pthread_mutex_unlock(&fake_smu);
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&fake_smu);
		if (!s->head || !fake_op_blocked(s->head)) return 0;
	}
	return 999;
}

/* fake_enqueue queues op on a live stream of the current context; NULL
 * runs it now. The caller checked its arguments. */
static int fake_enqueue(void *stream, struct fake_op *op) {
	pthread_mutex_lock(&fake_smu);
	int r = stream ? fake_stream_ok(stream) : (fake_current ? 0 : 201);
	if (!r && stream) {
		fake_push(stream, op);
		op = NULL;
	} else if (!r) {
		if (fake_op_blocked(op)) r = 999; /* a wait on the NULL stream: the fake cannot hold it */
		else r = fake_run_op(op);
	}
	pthread_mutex_unlock(&fake_smu);
	free(op);
	return r;
}

static struct fake_op *fake_new_op(int kind) {
	struct fake_op *op = calloc(1, sizeof *op);
	op->kind = kind;
	return op;
}

/* ---- memset and device copies ---- */

static int fake_memset_any(unsigned long long dst, unsigned value, int width, size_t count, void *stream, int async) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!count) return 0;
	if (count > SIZE_MAX / (size_t)width || !fake_valid(dst, count * (size_t)width)) return 1;
	struct fake_op *op = fake_new_op(OP_MEMSET);
	op->dst = dst;
	op->n = count;
	op->threads = (unsigned long long)width;
	op->vals[0] = value;
	return fake_enqueue(async ? stream : NULL, op);
}

static int fake_memcpy_dtod(unsigned long long dst, unsigned long long src, size_t n, void *stream, int async) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!n) return 0;
	if (!fake_valid(dst, n) || !fake_valid(src, n)) return 1;
	struct fake_op *op = fake_new_op(OP_DTOD);
	op->dst = dst;
	op->src = src;
	op->n = n;
	return fake_enqueue(async ? stream : NULL, op);
}

/* ---- managed and stream-ordered memory ---- */

static int fake_mem_alloc_managed(unsigned long long *dptr, size_t n, unsigned flags) {
	if (flags != 1 && flags != 2) return 1; /* CU_MEM_ATTACH_GLOBAL or _HOST */
	return fake_mem_alloc(dptr, n);
}

static int fake_mem_alloc_async(unsigned long long *dptr, size_t n, void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = stream ? fake_stream_ok(stream) : (fake_current ? 0 : 201);
	pthread_mutex_unlock(&fake_smu);
	if (r) return r;
	return fake_mem_alloc(dptr, n);
}

static int fake_mem_free_async(unsigned long long p, void *stream) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	pthread_mutex_lock(&fake_mu);
	int known = 0;
	for (struct fake_alloc *a = fake_allocs; a; a = a->next)
		if (a->p == p && !a->global) { known = 1; break; }
	pthread_mutex_unlock(&fake_mu);
	if (!known) return 1;
	struct fake_op *op = fake_new_op(OP_FREE);
	op->dst = p;
	return fake_enqueue(stream, op);
}

/* fake_host_get_device_pointer: pinned memory's device address is its host
 * address (unified addressing). */
static int fake_host_get_device_pointer(unsigned long long *dptr, void *host, unsigned flags) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!dptr || !host || flags) return 1;
	pthread_mutex_lock(&fake_smu);
	int ok = fake_host_ok((uintptr_t)host, 1);
	pthread_mutex_unlock(&fake_smu);
	if (!ok) return 1;
	*dptr = (uintptr_t)host;
	return 0;
}

/* ---- queries ---- */

static int fake_busy(int *n) {
	if (*n >= fake_query_busy) return 0;
	(*n)++;
	return 1;
}

static int fake_nbusy_streams, fake_nbusy_events;

static int fake_stream_query(void *stream) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = stream ? fake_stream_ok(stream) : (fake_current ? 0 : 201);
	struct fake_stream *s = stream;
	if (!r && s && s->head && fake_busy(&fake_nbusy_streams)) r = 600;
	else if (!r && s) {
		r = fake_flush_to(s, 0);
		if (r == FAKE_BLOCKED) r = 600;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

static int fake_event_query(void *event) {
	FAKE_GUARD();
	pthread_mutex_lock(&fake_smu);
	int r = fake_event_ok(event);
	struct fake_event *e = event;
	if (!r && e->pending && e->on && fake_busy(&fake_nbusy_events)) r = 600;
	else if (!r && e->pending && e->on) {
		r = fake_flush_to(e->on, 0);
		if (r == FAKE_BLOCKED) r = 0;
		if (!r && e->pending) r = 600;
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

/* ---- value waits and writes, host functions ---- */

static int fake_stream_value64(int kind, void *stream, unsigned long long addr, unsigned long long value, unsigned flags) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (kind == OP_WAIT64 ? flags > 1 : flags != 0) return 1;
	if (addr % 8) return 1;
	pthread_mutex_lock(&fake_smu);
	int ok = fake_word_ok(addr);
	pthread_mutex_unlock(&fake_smu);
	if (!ok) return 1;
	struct fake_op *op = fake_new_op(kind);
	op->dst = addr;
	op->vals[0] = value;
	op->threads = flags;
	return fake_enqueue(stream, op);
}

static int fake_launch_host_func(void *stream, void (*fn)(void *), void *data) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!fn) return 1;
	struct fake_op *op = fake_new_op(OP_HOSTFN);
	op->src = (uintptr_t)fn;
	op->dst = (uintptr_t)data;
	return fake_enqueue(stream, op);
}

/* ---- IPC memory handles ---- */

struct fake_ipc { char magic[8]; unsigned long long pid, base, size, sum; char pad[24]; };
_Static_assert(sizeof(struct fake_ipc) == 64, "an IPC handle is 64 bytes");
struct fake_mapping { uintptr_t base; int refs; struct fake_mapping *next; };
static struct fake_mapping *fake_mappings;

static unsigned long long fake_ipc_sum(const struct fake_ipc *h) {
	return (h->pid * 0x9E3779B97F4A7C15ULL) ^ (h->base + 0x632BE59BD9B4E019ULL) ^ (h->size << 7);
}

static int fake_ipc_get(void *handle, unsigned long long p) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!handle) return 1;
	struct fake_ipc h;
	memset(&h, 0, sizeof h);
	int found = 0;
	pthread_mutex_lock(&fake_mu);
	for (struct fake_alloc *a = fake_allocs; a; a = a->next)
		if (!a->global && p >= a->p && p < a->p + a->n) { h.base = a->p; h.size = a->n; found = 1; break; }
	pthread_mutex_unlock(&fake_mu);
	if (!found) return 1;
	memcpy(h.magic, "FKIPC01", 8);
	h.pid = (unsigned long long)getpid();
	h.sum = fake_ipc_sum(&h);
	memcpy(handle, &h, sizeof h);
	return 0;
}

static int fake_ipc_open(unsigned long long *dptr, const void *handle, unsigned flags) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!dptr || !handle || flags > 1) return 1;
	struct fake_ipc h;
	memcpy(&h, handle, sizeof h);
	if (memcmp(h.magic, "FKIPC01", 8) || h.sum != fake_ipc_sum(&h) || h.pid != (unsigned long long)getpid()) return 1;
	if (!fake_valid(h.base, h.size)) return 400;
	pthread_mutex_lock(&fake_smu);
	struct fake_mapping *m = fake_mappings;
	while (m && m->base != h.base) m = m->next;
	if (!m) {
		m = calloc(1, sizeof *m);
		m->base = h.base;
		m->next = fake_mappings;
		fake_mappings = m;
	}
	m->refs++;
	pthread_mutex_unlock(&fake_smu);
	__atomic_add_fetch(&fake_nipc, 1, __ATOMIC_SEQ_CST);
	*dptr = h.base;
	return 0;
}

static int fake_ipc_close(unsigned long long p) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	pthread_mutex_lock(&fake_smu);
	struct fake_mapping *m = fake_mappings;
	while (m && (m->base != p || m->refs == 0)) m = m->next;
	int r = 1;
	if (m) {
		m->refs--;
		r = 0;
		__atomic_sub_fetch(&fake_nipc, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&fake_smu);
	return r;
}

/* ---- PCI bus ids, dma-buf ---- */

static int fake_device_get_by_pci_bus_id(int *dev, const char *id, int ordinal) {
	FAKE_GUARD();
	if (!dev || !id) return 1;
	unsigned dom = 0, bus = 0, d = 0, fn = 0;
	char extra;
	if (sscanf(id, "%x:%x:%x.%x%c", &dom, &bus, &d, &fn, &extra) != 4) {
		dom = 0;
		if (sscanf(id, "%x:%x.%x%c", &bus, &d, &fn, &extra) != 3) return 1;
	}
	int i = (int)bus - 0x18;
	if (dom != 0 || d != 0 || fn != 0 || i < 0 || i >= fake.count) return 101;
	*dev = ordinal ? i : i + FAKE_HANDLE_BASE;
	return 0;
}

static int fake_get_handle_for_range(void *handle, unsigned long long p, size_t n, int type, unsigned long long flags) {
	FAKE_GUARD();
	if (!fake_current) return 201;
	if (!fake_dma_buf) return 801;
	if (!handle || type != 1 || flags || !n || !fake_valid(p, n)) return 1;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0) return 999;
	*(int *)handle = fd;
	__atomic_add_fetch(&fake_ndma, 1, __ATOMIC_SEQ_CST);
	return 0;
}
