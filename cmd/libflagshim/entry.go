//go:build cgo

package main

// The library's entry points are C: each public function of flagshim.h is
// defined below and calls its Go side (flagshim_go_NAME, export.go) unless
// the process is the child of a fork. The Go runtime does not survive
// fork(): the child has only the thread that forked, and the runtime's
// other threads, its locks and its scheduler state are copies of a moment
// of the parent's. Entering it there may hang or crash the child, so a
// forked child never enters it: the library records the fork itself with
// pthread_atfork (whoever forks: C code, Python's os.fork, ctypes' libc
// fork), and every entry point answers FLAGSHIM_EFORK at once, but
// flagshim_info_json (ABI 1.3), which answers from the parent's copy where
// there is one (below). flagshim_abi_version, a constant, answers there
// too. A fork that skips the atfork handlers (a raw clone, vfork,
// posix_spawn) is followed by an exec, so nothing of the library runs in it.
//
// The fork copy. A forked child's flagshim_info_json answers, with plain
// C, the last info answer its parent built: Go publishes every answer it
// builds into C memory (flagshim_publish_info, from fork.go), so the
// child, a snapshot of the parent's memory, finds it there. Nothing builds
// an answer at the fork: the prepare handler runs while glibc (2.28 up to
// the fix of bug 24595) and musl hold their atfork lock, and building the answer runs every
// vendor's presence probe, which may dlopen a management library whose
// constructor calls pthread_atfork, or dlclose one that registered
// handlers: both take that lock, and the fork would hang for ever (glibc
// bug 24595). Where the parent built no answer, the child answers
// FLAGSHIM_EFORK: a host that forks calls flagshim_info_json first if its
// children need the answer (the Python package does so in an
// os.register_at_fork hook, outside that lock).
//
// This file has no //export, so its preamble may define functions (cgo
// copies the preambles of files that export into _cgo_export.c).

/*
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "flagshim.h"

extern int flagshim_go_ready(void);
extern int flagshim_go_resolve(char *device, char *out, int out_len);
extern int flagshim_go_alias_active(void);
extern int flagshim_go_info_json(char *out, int out_len);
extern int flagshim_go_select_json(char *type, char *devices, char *out, int out_len);
extern int flagshim_go_error(char *out, int out_len);
extern int flagshim_go_module_loaded(char *backend, unsigned long long module, char *out, int out_len);
extern int flagshim_go_module_unloading(char *backend, unsigned long long module);
extern int flagshim_go_nvshmem_attach(int device);
extern int flagshim_go_nvshmem_init(int device);
extern int flagshim_go_device_json(char *device, char *out, int out_len);
extern int flagshim_go_mem_get_info(char *device, unsigned long long *free_bytes, unsigned long long *total_bytes);

// Set in the child of a fork made after the library was loaded, by the
// child handler (the child has one thread then); read by every entry point.
static volatile int flagshim_in_forked_child;

// Set once the Go runtime is known to be up (flagshim_ready or the prepare
// handler waited for it, or Init ran); read by the prepare handler.
static int flagshim_go_up;

__attribute__((visibility("hidden"))) void flagshim_note_init(void) {
	__atomic_store_n(&flagshim_go_up, 1, __ATOMIC_RELEASE);
}

// How many flagshim calls this thread is inside (0 or 1, more where a
// vendor library calls back): the prepare handler enters Go only at 0.
static __thread int flagshim_depth;

#define FLAGSHIM_CALL(call) __extension__({ \
	flagshim_depth++; \
	int flagshim_rc_ = (call); \
	flagshim_depth--; \
	flagshim_rc_; \
})

// An info answer kept for forked children: its length, then its bytes and
// a NUL, in one malloc'ed block.
struct flagshim_answer {
	int len;
	char text[];
};

// The last answer Go published (NULL before the first); the parent never
// reads it, a forked child does.
static struct flagshim_answer *flagshim_fork_info;

__attribute__((visibility("hidden"))) void *flagshim_answer_alloc(int len) {
	struct flagshim_answer *a = malloc(sizeof *a + (size_t)len + 1);
	if (a != NULL) a->len = len;
	return a;
}

__attribute__((visibility("hidden"))) char *flagshim_answer_text(void *a) { return ((struct flagshim_answer *)a)->text; }

// flagshim_publish_info makes a, filled (text and NUL written), the
// answer forked children give, and frees the one it replaces. Freeing is
// safe: only a forked child reads the pointer, and a child is a snapshot
// of this process's memory at one instant. The swap comes before the
// free, so at any instant the pointer names a live buffer: a child forked
// before the swap holds the old buffer, not yet freed in its copy of the
// memory (the free happens later, in the parent only); a child forked
// after it holds the new one. A fork cannot cut the free in half: glibc's
// fork takes malloc's locks. The release store makes a's bytes visible
// with the pointer, on this machine and in a child's snapshot.
__attribute__((visibility("hidden"))) void flagshim_publish_info(void *a) {
	struct flagshim_answer *old = __atomic_exchange_n(&flagshim_fork_info, (struct flagshim_answer *)a, __ATOMIC_ACQ_REL);
	free(old);
}

// The prepare handler runs in the parent, on the forking thread, before
// the fork, with libc's atfork lock held (see above): it builds nothing
// and enters no presence work. It only waits, once, for the Go runtime's
// start where no call has shown it done: a fork while the start (on its
// own thread, from the library's load) is half done would leave it so in
// the child, so a host need not call flagshim_ready before forking. That
// wait cannot take the atfork lock: flagshim_go_ready does nothing but
// enter Go, which waits for the runtime's init and the Go packages' init
// functions, and none of those loads or unloads a library or registers a
// fork handler (they register vendor descriptions and device.Default's
// initializer: vendors/builtin.go, flagshim.go). It is skipped inside a
// flagshim call on this thread (a vendor library forking there: the
// runtime is up, and the call may hold Go's locks).
static void flagshim_fork_prepare(void) {
	if (flagshim_in_forked_child || flagshim_depth > 0) return;
	if (!__atomic_load_n(&flagshim_go_up, __ATOMIC_ACQUIRE)) {
		flagshim_go_ready();
		__atomic_store_n(&flagshim_go_up, 1, __ATOMIC_RELEASE);
	}
}

static void flagshim_fork_child(void) { flagshim_in_forked_child = 1; }

__attribute__((constructor)) static void flagshim_watch_forks(void) {
	pthread_atfork(flagshim_fork_prepare, NULL, flagshim_fork_child);
}

static const char flagshim_fork_message[] =
	"FLAGSHIM_EFORK: called in the child of a fork: the Go runtime inside libflagshim does not survive "
	"fork(), so no flagshim function runs in this process; call flagshim in the parent only, exec a new "
	"program in the child, or start children with a spawn method (posix_spawn, multiprocessing's "
	"'spawn' or 'forkserver')";

// forked writes "" to a usable out and says whether this is a forked child.
static int flagshim_forked(char *out, int out_len) {
	if (!flagshim_in_forked_child) return 0;
	if (out && out_len > 0) out[0] = 0;
	return 1;
}

int flagshim_abi_version(void) { return FLAGSHIM_ABI_VERSION; }

int flagshim_ready(void) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	int rc = FLAGSHIM_CALL(flagshim_go_ready());
	__atomic_store_n(&flagshim_go_up, 1, __ATOMIC_RELEASE);
	return rc;
}

int flagshim_resolve(const char *device, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_resolve((char *)device, out, out_len));
}

int flagshim_alias_active(void) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_alias_active());
}

// In a forked child: the parent's copy, under the size protocol, with
// plain C; FLAGSHIM_EFORK where the parent kept none.
static int flagshim_fork_answer(char *out, int out_len) {
	const struct flagshim_answer *a = __atomic_load_n(&flagshim_fork_info, __ATOMIC_ACQUIRE);
	if (a == NULL) {
		if (out && out_len > 0) out[0] = 0;
		return FLAGSHIM_EFORK;
	}
	int n = a->len;
	if (out == NULL && out_len == 0) return n;
	if (out == NULL || out_len <= 0) return FLAGSHIM_EINVAL;
	if (n > out_len - 1) {
		out[0] = 0;
		return FLAGSHIM_ERANGE;
	}
	memcpy(out, a->text, (size_t)n + 1);
	return n;
}

int flagshim_info_json(char *out, int out_len) {
	if (flagshim_in_forked_child) return flagshim_fork_answer(out, out_len);
	return FLAGSHIM_CALL(flagshim_go_info_json(out, out_len));
}

int flagshim_select_json(const char *type, const char *devices, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_select_json((char *)type, (char *)devices, out, out_len));
}

// In a forked child, the last error of every thread is the fork: the
// message, under the size protocol (NULL, 0 asks for the length; a longer
// message is cut to fit).
int flagshim_error(char *out, int out_len) {
	if (!flagshim_in_forked_child) return FLAGSHIM_CALL(flagshim_go_error(out, out_len));
	int n = (int)(sizeof flagshim_fork_message - 1);
	if (out == NULL && out_len == 0) return n;
	if (out == NULL || out_len <= 0) return FLAGSHIM_EINVAL;
	if (n > out_len - 1) n = out_len - 1;
	memcpy(out, flagshim_fork_message, (size_t)n);
	out[n] = 0;
	return n;
}

int flagshim_module_loaded(const char *backend, unsigned long long module, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_module_loaded((char *)backend, module, out, out_len));
}

int flagshim_module_unloading(const char *backend, unsigned long long module) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_module_unloading((char *)backend, module));
}

int flagshim_nvshmem_attach(int device) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_nvshmem_attach(device));
}

int flagshim_nvshmem_init(int device) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_nvshmem_init(device));
}

int flagshim_device_json(const char *device, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_device_json((char *)device, out, out_len));
}

int flagshim_mem_get_info(const char *device, unsigned long long *free_bytes, unsigned long long *total_bytes) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return FLAGSHIM_CALL(flagshim_go_mem_get_info((char *)device, free_bytes, total_bytes));
}
*/
import "C"
