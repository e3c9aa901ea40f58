/*
 * check drives libflagshim through its C interface for libflagshim_test.go.
 * Each argument is one call, answered on one line of stdout:
 *
 *   alias          flagshim_alias_active()      -> "alias=N"
 *   LEN/DEVICE     flagshim_resolve(DEVICE, buf, LEN)
 *                  -> "rc=N out=STRING canary=ok|BAD" (out only when rc >= 0,
 *                     first=N, the first byte, otherwise)
 *                  DEVICE "<null>" passes NULL; LEN "null" passes out = NULL
 *   threads=N      N threads call alias and resolve("cuda:1") 200 times each
 *                  -> "threads=N alias=A cuda1=S consistent=yes|no"
 *   codes          the header's error codes -> "EINIT=.. EINVAL=.. ..."
 *   ready          flagshim_ready() -> "ready=N"
 *   info           flagshim_info_json, sized first -> "info=N json=<the JSON>"
 *   info/LEN       flagshim_info_json into LEN bytes -> "rc=N first=N canary=ok|BAD"
 *   error          flagshim_error -> "error=<the message>"
 *   abi            flagshim_abi_version() and the header's macros
 *                  -> "abi=N header=N major=N minor=N"
 *   fork           fork() from C; the child calls every entry point under
 *                  alarm(20) -> "child: resolve=N out=S alias=N info=N ..."
 *                  then, from the parent, "child=exit:N" or "child=signal:N"
 *                  and "parent: rc=N out=S" (resolve("cpu:0") after the fork)
 *   forkinfo       fork() from C; the child reads flagshim_info_json (the
 *                  parent's copy, ABI 1.3) -> "child: info=N json=<the JSON>
 *                  erange=N first=N" (or "child: info=N" where it fails),
 *                  then "child=exit:N"
 *   builds         how many info answers the library built
 *                  (flagshim_go_info_builds, internal) -> "builds=N"
 *   failmalloc     every malloc of 1 KiB or more fails (this program
 *                  interposes malloc), until the next fork returns
 *   forkinside     the next flagshim call that reaches a fake library's
 *                  getenv("FAKE_*HANG") forks from inside it (this program
 *                  interposes getenv); the child prints "inside-child:
 *                  info=N" -> then "inside=exit:N"
 *
 * The buffer is filled with a canary byte first: "canary=ok" means no byte
 * at or past out_len (or any byte, when out is NULL or out_len <= 0) changed.
 * Exit status: 0, or 2 on bad usage.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flagshim.h"

#define BUF 128
#define CANARY 0x5a

extern int flagshim_go_info_builds(void); /* internal, for this test */

/* malloc, interposed: failmalloc makes the big ones fail for one fork. */
extern void *__libc_malloc(size_t);
static volatile int fail_big_malloc;

void *malloc(size_t n) {
	if (fail_big_malloc && n >= 1024) return NULL;
	return __libc_malloc(n);
}

/* getenv, interposed: forkinside forks from inside a fake library's
 * getenv, that is from inside a flagshim call, on the thread making it. */
extern char **environ;
static volatile int fork_inside;

static void inside_fork(void) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) exit(2);
	if (pid == 0) {
		alarm(20);
		printf("inside-child: info=%d\n", flagshim_info_json(NULL, 0));
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) exit(2);
	printf("inside=%s:%d\n", WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

char *getenv(const char *name) {
	size_t n = strlen(name);
	if (fork_inside && strncmp(name, "FAKE_", 5) == 0 && n >= 4 && strcmp(name + n - 4, "HANG") == 0) {
		fork_inside = 0;
		inside_fork();
	}
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
	return NULL;
}

static void resolve_case(const char *arg) {
	const char *slash = strchr(arg, '/');
	if (!slash) {
		fprintf(stderr, "check: want LEN/DEVICE, got %s\n", arg);
		exit(2);
	}
	char len_s[32];
	size_t n = (size_t)(slash - arg);
	if (n >= sizeof len_s) exit(2);
	memcpy(len_s, arg, n);
	len_s[n] = 0;
	const char *dev = slash + 1;
	if (strcmp(dev, "<null>") == 0) dev = NULL;
	int null_out = strcmp(len_s, "null") == 0;
	int out_len = null_out ? 16 : atoi(len_s);
	if (out_len > BUF) exit(2);

	char buf[BUF];
	memset(buf, CANARY, sizeof buf);
	int rc = flagshim_resolve(dev, null_out ? NULL : buf, out_len);

	int from = (null_out || out_len < 0) ? 0 : out_len;
	int canary_ok = 1;
	for (int i = from; i < BUF; i++)
		if ((unsigned char)buf[i] != CANARY) canary_ok = 0;
	if (rc >= 0) {
		/* The answer is NUL-terminated at rc, inside out_len. */
		if (rc >= out_len || buf[rc] != 0 || (int)strlen(buf) != rc) canary_ok = 0;
		printf("rc=%d out=%s canary=%s\n", rc, buf, canary_ok ? "ok" : "BAD");
	} else {
		printf("rc=%d first=%d canary=%s\n", rc, (unsigned char)buf[0], canary_ok ? "ok" : "BAD");
	}
}

struct answer {
	int alias;
	char cuda1[BUF];
	int rc;
	int consistent;
};

static void *worker(void *p) {
	struct answer *a = p;
	a->consistent = 1;
	for (int i = 0; i < 200; i++) {
		int alias = flagshim_alias_active();
		char buf[BUF];
		int rc = flagshim_resolve("cuda:1", buf, sizeof buf);
		if (i == 0) {
			a->alias = alias;
			a->rc = rc;
			strcpy(a->cuda1, rc >= 0 ? buf : "");
		} else if (alias != a->alias || rc != a->rc || (rc >= 0 && strcmp(buf, a->cuda1) != 0)) {
			a->consistent = 0;
		}
	}
	return NULL;
}

static void threads_case(int n) {
	if (n < 1 || n > 64) exit(2);
	pthread_t th[64];
	struct answer ans[64];
	/* Started together, so that the first calls race to run Init. */
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, &ans[i]) != 0) exit(2);
	int consistent = 1;
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (!ans[i].consistent || ans[i].alias != ans[0].alias || ans[i].rc != ans[0].rc ||
		    strcmp(ans[i].cuda1, ans[0].cuda1) != 0)
			consistent = 0;
	}
	printf("threads=%d alias=%d cuda1=%s consistent=%s\n", n, ans[0].alias, ans[0].cuda1, consistent ? "yes" : "no");
}

/* fork_case forks from C, as a host that is not Python does: every entry
 * point of the child must answer FLAGSHIM_EFORK at once, without entering
 * the Go runtime (which did not survive the fork); alarm turns a hang into
 * SIGALRM. */
static void fork_case(void) {
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) exit(2);
	if (pid == 0) {
		alarm(20);
		char buf[BUF], err[1024];
		memset(buf, CANARY, sizeof buf);
		int resolve = flagshim_resolve("cpu:0", buf, 64);
		int canary_ok = 1;
		for (int i = 64; i < BUF; i++)
			if ((unsigned char)buf[i] != CANARY) canary_ok = 0;
		int alias = flagshim_alias_active();
		int info = flagshim_info_json(NULL, 0);
		char names[64];
		int loaded = flagshim_module_loaded("cuda", 0x1000, names, sizeof names);
		int unloading = flagshim_module_unloading("cuda", 0x1000);
		int attach = flagshim_nvshmem_attach(0);
		int nvinit = flagshim_nvshmem_init(0);
		char rec[64];
		memset(rec, CANARY, sizeof rec);
		int record = flagshim_device_json("cpu:0", rec, sizeof rec);
		unsigned long long fr = 1, tot = 1;
		int mem = flagshim_mem_get_info("cuda:0", &fr, &tot);
		int ready = flagshim_ready();
		int sel = flagshim_select_json("cuda", "0", buf, 64);
		int errlen = flagshim_error(NULL, 0);
		int errrc = flagshim_error(err, sizeof err);
		char small[8];
		int cut = flagshim_error(small, sizeof small);
		printf("child: resolve=%d out=%s canary=%s alias=%d info=%d loaded=%d names=%s unloading=%d attach=%d init=%d "
		       "record=%d rec=%s mem=%d memout=%s ready=%d select=%d abi=%d errlen=%s cut=%d/%s error=%s\n",
		       resolve, buf[0] ? "BAD" : "empty", canary_ok ? "ok" : "BAD", alias, info, loaded, names[0] ? "BAD" : "empty",
		       unloading, attach, nvinit, record, rec[0] ? "BAD" : "empty", mem, fr == 1 && tot == 1 ? "untouched" : "BAD", ready, sel, flagshim_abi_version(), errlen == errrc ? "ok" : "BAD", cut,
		       (int)strlen(small) == cut ? "ok" : "BAD", err);
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) exit(2);
	if (WIFEXITED(status)) printf("child=exit:%d\n", WEXITSTATUS(status));
	else printf("child=signal:%d\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	char buf[BUF];
	int rc = flagshim_resolve("cpu:0", buf, sizeof buf);
	printf("parent: rc=%d out=%s\n", rc, rc >= 0 ? buf : "");
}

/* forkinfo_case forks from C; the child reads the parent's copy through
 * flagshim_info_json's size protocol, then a buffer too small for it. */
static void forkinfo_case(void) {
	fflush(stdout);
	pid_t pid = fork();
	fail_big_malloc = 0;
	if (pid < 0) exit(2);
	if (pid == 0) {
		alarm(20);
		int n = flagshim_info_json(NULL, 0);
		if (n < 0) {
			printf("child: info=%d\n", n);
		} else {
			char *buf = __libc_malloc((size_t)n + 1);
			int rc = flagshim_info_json(buf, n + 1);
			char small[8];
			memset(small, CANARY, sizeof small);
			int erange = flagshim_info_json(small, sizeof small);
			printf("child: info=%d json=%s erange=%d first=%d\n", rc, rc == n ? buf : "<size changed>", erange,
			       (unsigned char)small[0]);
		}
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid) exit(2);
	printf("child=%s:%d\n", WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "alias") == 0) {
			printf("alias=%d\n", flagshim_alias_active());
		} else if (strncmp(a, "threads=", 8) == 0) {
			threads_case(atoi(a + 8));
		} else if (strcmp(a, "codes") == 0) {
			printf("EINIT=%d EINVAL=%d EDEVICE=%d ERANGE=%d EHOOK=%d EBACKEND=%d ENVSHMEM=%d EFORK=%d ENODEV=%d ESELECT=%d\n", FLAGSHIM_EINIT,
			       FLAGSHIM_EINVAL, FLAGSHIM_EDEVICE, FLAGSHIM_ERANGE, FLAGSHIM_EHOOK, FLAGSHIM_EBACKEND, FLAGSHIM_ENVSHMEM,
			       FLAGSHIM_EFORK, FLAGSHIM_ENODEV, FLAGSHIM_ESELECT);
		} else if (strcmp(a, "abi") == 0) {
			printf("abi=%d header=%d major=%d minor=%d\n", flagshim_abi_version(), FLAGSHIM_ABI_VERSION,
			       FLAGSHIM_ABI_VERSION_MAJOR, FLAGSHIM_ABI_VERSION_MINOR);
		} else if (strcmp(a, "fork") == 0) {
			fork_case();
		} else if (strcmp(a, "forkinfo") == 0) {
			forkinfo_case();
		} else if (strcmp(a, "builds") == 0) {
			printf("builds=%d\n", flagshim_go_info_builds());
		} else if (strcmp(a, "failmalloc") == 0) {
			fail_big_malloc = 1;
		} else if (strcmp(a, "forkinside") == 0) {
			fork_inside = 1;
		} else if (strcmp(a, "ready") == 0) {
			printf("ready=%d\n", flagshim_ready());
		} else if (strcmp(a, "info") == 0) {
			int n = flagshim_info_json(NULL, 0);
			if (n < 0) { printf("info=%d\n", n); continue; }
			char *buf = __libc_malloc((size_t)n + 1); /* failmalloc spares it */
			int rc = flagshim_info_json(buf, n + 1);
			printf("info=%d json=%s\n", rc, rc == n ? buf : "<size changed>");
			free(buf);
		} else if (strncmp(a, "info/", 5) == 0) {
			char buf[BUF];
			memset(buf, CANARY, sizeof buf);
			int len = atoi(a + 5);
			int rc = flagshim_info_json(buf, len);
			int ok = 1;
			for (int k = len; k < BUF; k++) if ((unsigned char)buf[k] != CANARY) ok = 0;
			printf("rc=%d first=%d canary=%s\n", rc, (unsigned char)buf[0], ok ? "ok" : "BAD");
		} else if (strncmp(a, "select=", 7) == 0) {
			/* select=TYPE/DEVICES: flagshim_select_json's size protocol, then its answer or its error. */
			char typ[64];
			const char *slash = strchr(a + 7, '/');
			if (!slash || slash - (a + 7) >= (long)sizeof typ) exit(2);
			memcpy(typ, a + 7, (size_t)(slash - (a + 7)));
			typ[slash - (a + 7)] = 0;
			int n = flagshim_select_json(typ, slash + 1, NULL, 0);
			if (n < 0) {
				char err[1024];
				flagshim_error(err, sizeof err);
				printf("select=%d error=%s\n", n, err);
				continue;
			}
			char *buf = malloc((size_t)n + 1);
			int rc = flagshim_select_json(typ, slash + 1, buf, n + 1);
			printf("select=%d json=%s\n", rc, rc == n ? buf : "<size changed>");
			free(buf);
		} else if (strcmp(a, "error") == 0) {
			char buf[1024];
			flagshim_error(buf, sizeof buf);
			printf("error=%s\n", buf);
		} else {
			resolve_case(a);
		}
		fflush(stdout);
	}
	return 0;
}
