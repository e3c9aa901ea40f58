// Command libflagshim is flagshim as a C shared library, for hosts that are
// not written in Go. Build it with cgo:
//
//	CGO_ENABLED=1 go build -buildmode=c-shared -o libflagshim.so ./cmd/libflagshim
//
// and include flagshim.h from this folder (the header go build writes next
// to the library declares the same functions, without const). The library
// exports:
//
//	int flagshim_resolve(const char *device, char *out, int out_len);
//	int flagshim_alias_active(void);
//
// flagshim_resolve writes what the device string means here (after the
// cuda->flagos alias: "cuda:1" gives "flagos:1" where the alias is active)
// to out, NUL-terminated, and returns its length (without the NUL). On error
// it returns a negative code and writes nothing but, when out is usable, an
// empty string (out[0] = '\0'); it never writes past out_len:
//
//	FLAGSHIM_EINIT   -1  flagshim.Init could not decide the cuda alias (a bad
//	                     FLAGOS_ALIAS_CUDA, for instance): no answer is given
//	FLAGSHIM_EINVAL  -2  device or out is NULL, or out_len <= 0
//	FLAGSHIM_EDEVICE -3  a bad device string: bad syntax or an unknown type
//	FLAGSHIM_ERANGE  -4  out_len is too small for the answer and its NUL
//
// flagshim_alias_active returns 1 when cuda means flagos in this process, 0
// when not, and FLAGSHIM_EINIT (-1) when the alias could not be decided.
//
// The first call of either function runs flagshim.Init (the drivers are
// found then, under the usual environment variables: FLAGOS_ALIAS_CUDA,
// FLAGOS_BACKEND, FLAGOS_LIBCUDA_PATH, FLAGOS_LIBMUSA_PATH, FLAGOS_LOG);
// later calls reuse its outcome. Both functions may be called from any
// thread, concurrently. Errors of Init steps that do not touch the alias (a
// vendor library that failed to load, say) do not make the functions fail:
// FLAGOS_LOG=warn shows them.
//
// Without cgo this package builds as an empty program, so that
// CGO_ENABLED=0 go build ./... works.
package main
