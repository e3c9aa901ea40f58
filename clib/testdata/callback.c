/* A callee that calls back into Go before it returns: the fixture of
 * callback_test.go. Each function calls cb(depth) (a Go function made by
 * purego.NewCallback, which grows its goroutine's stack) and then returns a
 * value the test knows, so a result written to a moved Go stack reads as 0. */

typedef long (*cb_t)(long);

/* 12345 + what the callback returned: the result the test expects. */
long flagshim_cb_value(cb_t cb, long depth) { return 12345 + cb(depth); }

/* 0 (success) after the callback: a "pre" or "fn" whose success lets the
 * next call of the chain run. */
int flagshim_cb_zero(cb_t cb, long depth) {
	cb(depth);
	return 0;
}

/* Eleven arguments (five on the C stack) summed after the callback, for
 * the paths that pass arguments on the stack. */
long flagshim_cb_eleven(cb_t cb, long depth, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9,
			long a10) {
	long r = cb(depth);
	return 12345 + r + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10;
}

/* The callback stored for then, which takes no argument. */
static cb_t saved;
static long saved_depth;
void flagshim_cb_save(cb_t cb, long depth) {
	saved = cb;
	saved_depth = depth;
}
long flagshim_cb_saved(void) { return 54321 + saved(saved_depth); }

/* A "pre" of one argument that calls the saved callback, then succeeds. */
int flagshim_cb_pre(long depth) {
	saved(depth);
	return 0;
}

/* A "pre" of one argument that calls the saved callback, then fails with
 * a code the test knows. */
int flagshim_cb_pre_fail(long depth) { return 777 + (int)saved(depth); }

/* Kernel parameters as cuLaunchKernel takes them: params is an array of n
 * pointers, each to an 8-byte value. Returns the sum of value i times
 * (i + 1), plus every other argument, so that a value in the wrong slot,
 * a wrong count or another argument lost changes the answer. */
long flagshim_params_eleven(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, void **params,
			    long n) {
	long r = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
	for (long i = 0; params && i < n; i++) r += (long)(*(unsigned long long *)params[i]) * (i + 1);
	return params ? r : -1 - r;
}

/* The same with the array first (a register argument). */
long flagshim_params_first(void **params, long n) {
	long r = 0;
	for (long i = 0; params && i < n; i++) r += (long)(*(unsigned long long *)params[i]) * (i + 1);
	return params ? r : -1;
}
