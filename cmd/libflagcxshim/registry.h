/*
 * The registry of the plugin's live streams and events (registry.c): by
 * object address, its native handle, device and kind. Lookups take no lock
 * (every hot field makes one or two); changes take a mutex. No Go and no
 * driver here: testdata/registry_test.c drives it alone, from many threads,
 * under ThreadSanitizer.
 */
#ifndef FLAGCXSHIM_REGISTRY_H
#define FLAGCXSHIM_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

/* What a lookup copies out of a live entry. */
struct fx_hit {
	uintptr_t handle;
	int dev, kind;
};

/* fx_reg_find: obj is live and (kind & mask) == want: its entry in *out,
 * 1; else 0. Lock-free. */
int fx_reg_find(uintptr_t obj, int mask, int want, struct fx_hit *out);

/* fx_reg_insert registers obj (an entry for the same address, if live, is
 * replaced); 0 when no memory was left for a rebuild. */
int fx_reg_insert(uintptr_t obj, uintptr_t handle, int dev, int kind);

/* fx_reg_forget: obj's entry, if live, becomes a tombstone. */
void fx_reg_forget(uintptr_t obj);

/* fx_reg_take is fx_reg_find and fx_reg_forget as one change: the entry is
 * copied out and tombstoned only when it matches. */
int fx_reg_take(uintptr_t obj, int mask, int want, struct fx_hit *out);

/* fx_reg_mark ors bits into a matching live entry's kind (the entry as it
 * was in *out); 0 when none matches. */
int fx_reg_mark(uintptr_t obj, int mask, int want, int bits, struct fx_hit *out);

/* For tests: the current table's capacity, how many rebuilds were made, how
 * many table blocks were ever allocated, how many lookups retried. */
struct fx_reg_stats {
	size_t cap;
	uint64_t rebuilds, blocks, retries, locked;
};
void fx_reg_stats(struct fx_reg_stats *out);

#endif
