// A fake libnvshmem_host.so.3 for plugins/nvshmem's tests: the real symbol
// names and signatures, the struct layouts transcribed from NVSHMEM 3.4's
// headers, and checks of what the real library depends on: the version words
// of the init attribute and unique ID, a current CUDA context during init and
// cumodule calls (it links the fake libcuda.so.1), and calls never running
// concurrently. A module handle with the low bit set behaves like a plain
// module: "named symbol not found" on stderr and 7.
//
// Environment: FAKE_NVSHMEM_INIT_RC (status nvshmemx_hostlib_init_attr
// returns), FAKE_NVSHMEM_STATUS_AFTER_INIT (the init status it leaves).
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { int version; char internal[124]; } nvshmemx_uniqueid_t;
typedef struct { int version; nvshmemx_uniqueid_t *id; int myrank; int nranks; } nvshmemx_uniqueid_args_t;
typedef struct { int version; nvshmemx_uniqueid_args_t uid_args; char content[96]; } nvshmemx_init_args_t;
typedef struct { int version; void *mpi_comm; nvshmemx_init_args_t args; } nvshmemx_init_attr_t;
_Static_assert(sizeof(nvshmemx_uniqueid_t) == 128, "uniqueid");
_Static_assert(sizeof(nvshmemx_uniqueid_args_t) == 24, "uniqueid_args");
_Static_assert(sizeof(nvshmemx_init_args_t) == 128, "init_args");
_Static_assert(sizeof(nvshmemx_init_attr_t) == 144, "init_attr");

extern int fake_current_ordinal(void);

static int status, mype = -1, npes = -1;
static atomic_int busy;
static int n_init, n_fini, n_hostfini, n_concurrent, n_noctx;

static void enter(void) {
	if (atomic_fetch_add(&busy, 1) != 0) n_concurrent++;
	usleep(50); /* widen the window a concurrent caller would hit */
}
static void leave(void) { atomic_fetch_sub(&busy, 1); }
static int ctx_ok(void) {
	if (fake_current_ordinal() < 0) { n_noctx++; return 0; }
	return 1;
}

int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *u) {
	enter();
	int rc = 0;
	if (u->version != (1 << 16) + 128) rc = 1;
	else memset(u->internal, 0x5a, sizeof u->internal);
	leave();
	return rc;
}

int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t *u,
                                    nvshmemx_init_attr_t *a) {
	a->args.uid_args.id = (nvshmemx_uniqueid_t *)u;
	a->args.uid_args.myrank = myrank;
	a->args.uid_args.nranks = nranks;
	return 0;
}

int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t *a) {
	enter();
	int rc = 0;
	const nvshmemx_uniqueid_t *u = a->args.uid_args.id;
	if (flags != 1u << 3) rc = 11;
	else if (a->version != (1 << 16) + 144 || a->args.version != (1 << 16) + 128 ||
	         a->args.uid_args.version != (1 << 16) + 24) rc = 12;
	else if (a->mpi_comm != NULL) rc = 13;
	else if (!u || u->version != (1 << 16) + 128 || u->internal[0] != 0x5a || u->internal[123] != 0x5a) rc = 14;
	else if (a->args.uid_args.myrank < 0 || a->args.uid_args.myrank >= a->args.uid_args.nranks) rc = 15;
	else if (getenv("FAKE_NVSHMEM_INIT_RC")) rc = atoi(getenv("FAKE_NVSHMEM_INIT_RC"));
	if (rc == 0) {
		mype = a->args.uid_args.myrank;
		npes = a->args.uid_args.nranks;
		status = ctx_ok() ? 2 : 1; /* as the real one: no context, bootstrap only */
		if (getenv("FAKE_NVSHMEM_STATUS_AFTER_INIT")) status = atoi(getenv("FAKE_NVSHMEM_STATUS_AFTER_INIT"));
	}
	leave();
	return rc;
}

int nvshmemx_init_status(void) { return status; }
int nvshmem_my_pe(void) { return mype; }
int nvshmem_n_pes(void) { return npes; }

int nvshmemx_cumodule_init(void *module) {
	enter();
	int rc = 0;
	if (status != 2 || !ctx_ok()) rc = 7;
	else if ((uintptr_t)module & 1) {
		fprintf(stderr, "init.cu:1781 Cuda failure 'named symbol not found'\n");
		rc = 7;
	} else n_init++;
	leave();
	return rc;
}

int nvshmemx_cumodule_finalize(void *module) {
	enter();
	int rc = 0;
	if (status != 2 || !ctx_ok() || ((uintptr_t)module & 1)) rc = 7;
	else n_fini++;
	leave();
	return rc;
}

void nvshmemx_hostlib_finalize(void) {
	enter();
	status = 0;
	n_hostfini++;
	leave();
}

void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch) { *major = 3; *minor = 4; *patch = 5; }

/* Not NVSHMEM: the tests read the fake's counters. */
void fake_nvshmem_counts(int *c) {
	c[0] = n_init; c[1] = n_fini; c[2] = n_hostfini; c[3] = n_concurrent; c[4] = n_noctx;
}
