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
// fork), and every entry point answers FLAGSHIM_EFORK at once.
// flagshim_abi_version, a constant, answers there too. A fork that skips
// the atfork handlers (a raw clone, vfork, posix_spawn) is followed by an
// exec, so nothing of the library runs in it.
//
// This file has no //export, so its preamble may define functions (cgo
// copies the preambles of files that export into _cgo_export.c).

/*
#include <pthread.h>
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

static void flagshim_fork_child(void) { flagshim_in_forked_child = 1; }

__attribute__((constructor)) static void flagshim_watch_forks(void) {
	pthread_atfork(NULL, NULL, flagshim_fork_child);
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
	return flagshim_go_ready();
}

int flagshim_resolve(const char *device, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return flagshim_go_resolve((char *)device, out, out_len);
}

int flagshim_alias_active(void) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return flagshim_go_alias_active();
}

int flagshim_info_json(char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return flagshim_go_info_json(out, out_len);
}

int flagshim_select_json(const char *type, const char *devices, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return flagshim_go_select_json((char *)type, (char *)devices, out, out_len);
}

// In a forked child, the last error of every thread is the fork: the
// message, under the size protocol (NULL, 0 asks for the length; a longer
// message is cut to fit).
int flagshim_error(char *out, int out_len) {
	if (!flagshim_in_forked_child) return flagshim_go_error(out, out_len);
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
	return flagshim_go_module_loaded((char *)backend, module, out, out_len);
}

int flagshim_module_unloading(const char *backend, unsigned long long module) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return flagshim_go_module_unloading((char *)backend, module);
}

int flagshim_nvshmem_attach(int device) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return flagshim_go_nvshmem_attach(device);
}

int flagshim_nvshmem_init(int device) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return flagshim_go_nvshmem_init(device);
}

int flagshim_device_json(const char *device, char *out, int out_len) {
	if (flagshim_forked(out, out_len)) return FLAGSHIM_EFORK;
	return flagshim_go_device_json((char *)device, out, out_len);
}

int flagshim_mem_get_info(const char *device, unsigned long long *free_bytes, unsigned long long *total_bytes) {
	if (flagshim_forked(NULL, 0)) return FLAGSHIM_EFORK;
	return flagshim_go_mem_get_info((char *)device, free_bytes, total_bytes);
}
*/
import "C"
