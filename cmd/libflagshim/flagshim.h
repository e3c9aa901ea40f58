/*
 * flagshim.h: the C interface of libflagshim, flagshim built with
 *
 *     CGO_ENABLED=1 go build -buildmode=c-shared -o libflagshim.so ./cmd/libflagshim
 *
 * Link with -lflagshim (or dlopen the library). Every function may be called
 * from any thread, concurrently. The first call of any of them runs
 * flagshim.Init once for the process: the vendor drivers (libcuda, libmusa)
 * are looked for then, under the usual environment variables
 * (FLAGOS_ALIAS_CUDA, FLAGOS_BACKEND, FLAGOS_LIBCUDA_PATH,
 * FLAGOS_LIBMUSA_PATH, FLAGOS_LOG); later calls reuse that outcome.
 */
#ifndef FLAGSHIM_H
#define FLAGSHIM_H

/* Error codes: every error is negative, and each cause has its own code. */
#define FLAGSHIM_EINIT   (-1) /* Init could not decide the cuda alias (e.g. a bad
                                 FLAGOS_ALIAS_CUDA value): no device has a meaning */
#define FLAGSHIM_EINVAL  (-2) /* device or out is NULL, or out_len <= 0 */
#define FLAGSHIM_EDEVICE (-3) /* a bad device string: its syntax ("type" or
                                 "type:index") or an unknown type */
#define FLAGSHIM_ERANGE  (-4) /* out_len is too small for the answer and its NUL */

#ifndef FLAGSHIM_BUILDING
#ifdef __cplusplus
extern "C" {
#endif

/*
 * flagshim_resolve writes what device means in this process to out,
 * NUL-terminated, and returns its length without the NUL: "cuda:1" gives
 * "flagos:1" where the cuda->flagos alias is active, "cuda:1" where it is
 * not; "cpu" gives "cpu". out_len is the size of out in bytes, NUL included.
 *
 * On error it returns one of the negative codes above. It never writes past
 * out[out_len - 1]; on an error with a usable buffer (out != NULL and
 * out_len > 0) it writes an empty string (out[0] = '\0') and nothing else.
 * Answers are "type" or "type:index", so 64 bytes hold any answer for the
 * built-in types; on FLAGSHIM_ERANGE, call again with a larger buffer.
 */
int flagshim_resolve(const char *device, char *out, int out_len);

/*
 * flagshim_alias_active returns 1 when "cuda" means "flagos" in this process
 * (no usable CUDA runtime, a flagos device present, FLAGOS_ALIAS_CUDA not
 * forbidding it), 0 when it does not, FLAGSHIM_EINIT (-1) when the alias
 * could not be decided.
 */
int flagshim_alias_active(void);

#ifdef __cplusplus
}
#endif
#endif /* FLAGSHIM_BUILDING */

#endif /* FLAGSHIM_H */
