/*
 * flagshim.h: the C interface of libflagshim, flagshim built with
 *
 *     CGO_ENABLED=1 go build -buildmode=c-shared -o libflagshim.so ./cmd/libflagshim
 *
 * Link with -lflagshim (or dlopen the library). Every function may be called
 * from any thread, concurrently. The first call of any of them (but
 * flagshim_ready, flagshim_error and flagshim_abi_version) runs
 * flagshim.Init once for the process: the vendor drivers (libcuda, libmusa,
 * libamdhip64) are looked for then, under the usual environment variables
 * (FLAGOS_ALIAS_CUDA, FLAGOS_BACKEND, FLAGOS_PROBE, FLAGOS_PROBE_TIMEOUT,
 * FLAGOS_LIB*_PATH, FLAGOS_LOG); later calls reuse that outcome.
 *
 * Probing. The library's default tier is presence (FLAGOS_PROBE=presence):
 * it asks each vendor's management library, the device nodes and the
 * driver library without initializing any driver in the host, so a host
 * that forks afterwards (PyTorch's DataLoader, multiprocessing) keeps
 * children in which CUDA works. FLAGOS_PROBE=exact initializes the driver
 * in the host (cuInit); FLAGOS_PROBE=isolated is refused here (it needs a Go
 * program that can re-execute itself).
 *
 * Forking. The Go runtime inside the library starts on a thread of its own
 * when the library is loaded. A fork before that start has finished would
 * leave its start half done in the child, so the library's fork handler
 * (pthread_atfork's prepare, since 1.3) waits for it: a host may fork at any
 * time after loading the library. flagshim_ready() waits for that start
 * too (a 1.2 library needs it before a fork, and so does a fork that skips
 * the atfork handlers without an exec). Do not fork while a flagshim call
 * is in flight on another thread. The Go runtime does not survive fork (its other
 * threads are gone), so nothing of flagshim runs in a forked child: the
 * library records every fork (pthread_atfork, whoever forks: C code,
 * Python's os.fork, ctypes) and in the child every function returns
 * FLAGSHIM_EFORK at once, without entering the Go runtime (but
 * flagshim_abi_version, a constant; flagshim_error, which then gives the
 * fork's message; and, since 1.3, flagshim_info_json, which answers the
 * last info answer the parent built: see it below). A host whose forked
 * children need that answer calls flagshim_info_json before forking.
 * Exec, or use a spawn start method, for children that need flagshim. The
 * Python package answers resolve, alias_active, info, ... in a forked
 * child from that answer (it asks for it before each os.fork) and raises
 * ForkError for calls that need the library there.
 *
 * ABI version (as PJRT versions its C API). flagshim_abi_version() returns
 * the library's FLAGSHIM_ABI_VERSION, major * 10000 + minor; this header
 * declares version 1.3 (10003): 1.0 and, since 1.1, flagshim_device_json,
 * flagshim_mem_get_info and FLAGSHIM_ENODEV; since 1.2, flagshim_select_json
 * and FLAGSHIM_ESELECT; since 1.3, flagshim_info_json answers in a forked
 * child (the last answer the parent built; a 1.2 library answers
 * FLAGSHIM_EFORK there). A host checks it once, after loading the
 * library: a library of another major is not one it can use (refuse it, as
 * the Python package does); within one major, a library of a lower minor
 * lacks the functions added since (check the minor, or dlsym them, before
 * calling them). Within a major version:
 *
 *   - every function of this header keeps its name, its signature and its
 *     meaning, and the out/out_len size protocol stays as described here;
 *   - every return code keeps its value and meaning; a new minor version may
 *     add negative codes, so treat one you do not know as a failure and read
 *     flagshim_error;
 *   - functions and codes are only added, in a new minor version, never
 *     removed or redefined: a change that would is a new major version;
 *   - structs: none crosses the ABI in 1.0. Any struct a later version
 *     passes carries its size as its first field, size_t struct_size, set
 *     by whoever fills it to sizeof the struct as its own header declares
 *     it; the library reads and writes only the first struct_size bytes and
 *     takes fields beyond them as absent, and fields are only appended (a
 *     new minor version), never moved, retyped or removed. So an older host
 *     and a newer library, or the reverse, understand each other.
 *
 * Symbols. The library exports the functions below and, because cgo
 * exports them, their Go sides (flagshim_go_*): those are internal, not part
 * of the ABI; never call them (they do not check for a fork).
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
#define FLAGSHIM_EHOOK   (-5) /* a module hook failed (flagshim_error says which and why) */
#define FLAGSHIM_EBACKEND (-6) /* no driver backend of that name (a vendor's type: "cuda", "musa", ...) */
#define FLAGSHIM_ENVSHMEM (-7) /* NVSHMEM could not be attached or initialized */
#define FLAGSHIM_EFORK   (-8) /* called in the child of a fork: flagshim does not run
                                 there (see Forking above); flagshim_error names it */
#define FLAGSHIM_ENODEV  (-9) /* (1.1) no such device: its backend is not available here,
                                 or the index is past its devices (flagshim_error says which) */
#define FLAGSHIM_ESELECT (-10) /* (1.2) a selection of devices that names no device or several,
                                  an index out of range, devices the runtime cannot show
                                  together, or rules that cannot decide */

/* The ABI version this header declares: major * 10000 + minor (see above). */
#define FLAGSHIM_ABI_VERSION_MAJOR 1
#define FLAGSHIM_ABI_VERSION_MINOR 3
#define FLAGSHIM_ABI_VERSION (FLAGSHIM_ABI_VERSION_MAJOR * 10000 + FLAGSHIM_ABI_VERSION_MINOR)

/* Every function that fails (but flagshim_error itself) leaves a message
 * for flagshim_error on the calling thread: the cause, and for
 * FLAGSHIM_ERANGE the size the answer needs. */

#ifndef FLAGSHIM_BUILDING
#ifdef __cplusplus
extern "C" {
#endif

/*
 * flagshim_abi_version returns the library's ABI version, major * 10000 +
 * minor (FLAGSHIM_ABI_VERSION of the header it was built with). It runs no
 * Init and never fails, in a forked child too.
 */
int flagshim_abi_version(void);

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

/*
 * flagshim_ready returns 0 once the library's Go runtime has started (any
 * call waits for that; this one does nothing else and runs no Init). Since
 * 1.3 a fork waits for it by itself (see Forking above); with a 1.2
 * library, call it after loading the library and before forking.
 */
int flagshim_ready(void);

/*
 * flagshim_info_json writes what `flagshim info --json` prints for this
 * process (one JSON object, see docs/json.md, without indentation; under 8
 * KB on a machine without accelerators), NUL-terminated, and returns its
 * length. Its "verdict" says in one line what was found and which tier
 * answered and why (this library's default is presence, the flagshim
 * command's isolated). Called with out == NULL and out_len == 0 it writes nothing and
 * returns the length the answer needs (add one for the NUL); on
 * FLAGSHIM_ERANGE, ask so and call again.
 *
 * (1.3) In the child of a fork it answers, under the same size protocol and
 * without the Go runtime, the last answer this function gave in the parent
 * before the fork (the library keeps a copy of each answer it builds, in C
 * memory): what Init decided, and the free memory of that moment. The
 * children's own forks answer it too. It returns FLAGSHIM_EFORK there, as
 * every other function does, where the parent built none (or memory was
 * short for the copy): a fork builds no answer (its pthread_atfork handler
 * runs under libc's atfork lock, where every vendor's presence probe, which
 * may load a library, could hang the fork), and neither does a call other
 * than this one. So a host whose forked children need the answer calls
 * flagshim_info_json before forking (a few milliseconds, once; call it
 * again for a newer free memory).
 */
int flagshim_info_json(char *out, int out_len);

/*
 * flagshim_select_json writes the environment that makes exactly the
 * devices named by `devices` visible, in that order, to a child process of
 * the runtime behind device type `type` ("cuda", "hip", "npu", ...; where
 * cuda means flagos, the vendor flagos routes to): the JSON object
 * `flagshim select --json` prints (docs/visible-devices.md), NUL-terminated;
 * it returns its length. `devices` is a comma-separated list of UUIDs
 * (whole or a unique prefix), PCI addresses or indexes (the device
 * "type:index" names in this process). The devices are read from the
 * vendor's management library; no driver is initialized. Called with
 * out == NULL and out_len == 0 it returns the length the answer needs.
 * FLAGSHIM_ESELECT: a bad selection (flagshim_error names the device and
 * why); FLAGSHIM_EDEVICE: type is not a device type. Since ABI 1.2.
 */
int flagshim_select_json(const char *type, const char *devices, char *out, int out_len);

/*
 * flagshim_error writes the calling thread's last error message (the cause
 * of the last negative code it got) and returns its length; "" when there
 * is none. With out == NULL and out_len == 0 it returns the length needed.
 * A message longer than out is cut to fit. In the child of a fork it gives
 * the fork's message, which starts with "FLAGSHIM_EFORK".
 */
int flagshim_error(char *out, int out_len);

/*
 * flagshim_module_loaded runs flagshim's module hooks on a module another
 * loader of this process loaded (Triton, CuPy, cuda-python, your runtime):
 * backend names the driver that loaded it (its type: "cuda", "musa", ...) and
 * module is its handle (a CUmodule, MUmodule, hipModule_t). Only hooks
 * whose scope matches the module run (the NVSHMEM hook only on modules that
 * carry NVSHMEM's device symbols). It writes the names of the hooks that
 * ran, comma-separated ("" when none), and returns the length; out == NULL
 * with out_len == 0 asks for the length. Call it on the thread that loaded
 * the module, with the module's context current: the lookups use it. The
 * hooks run once per load: threads that report a module while its hooks run
 * wait for that run and get its answer (or its FLAGSHIM_EHOOK), and a later
 * call for the same module runs nothing and answers the same.
 * FLAGSHIM_EHOOK: a hook failed; the hooks applied before it were undone.
 */
int flagshim_module_loaded(const char *backend, unsigned long long module, char *out, int out_len);

/*
 * flagshim_module_unloading finalizes, in reverse order, the hooks
 * flagshim_module_loaded applied to module; call it before unloading the
 * module. A module that no hook ran on needs no call (0 either way).
 */
int flagshim_module_unloading(const char *backend, unsigned long long module);

/*
 * NVSHMEM. flagshim_nvshmem_attach attaches to the NVSHMEM the host already
 * loaded and initialized (libnvshmem_host.so.3, found among the libraries
 * the process has loaded: a second copy is never loaded), on CUDA device
 * `device`, and registers NVSHMEM's scoped module hook: from then on
 * flagshim_module_loaded runs nvshmemx_cumodule_init on the modules that
 * carry NVSHMEM's device symbols, and on no other. flagshim_nvshmem_init
 * instead opens NVSHMEM (FLAGOS_LIBNVSHMEM_PATH, or the usual search) and
 * initializes this process as PE 0 of 1 with the unique-id bootstrap, then
 * registers the hook. Both return 0, or FLAGSHIM_ENVSHMEM with the cause in
 * flagshim_error (not loaded, not initialized, the library missing). A
 * second call of either does nothing.
 */
int flagshim_nvshmem_attach(int device);
int flagshim_nvshmem_init(int device);

/*
 * (1.1) flagshim_device_json writes the record of device (a device string:
 * "cuda:1", or "cuda" for the current device; the cuda->flagos alias
 * applies) as one JSON object, NUL-terminated, and returns its length: the
 * record of `flagshim list --json` (name, uuid, pci_bus_id, total_memory,
 * major, minor, multiprocessors, vendor, index, visible_index, numa_node,
 * driver_version, tier, "unknown": the fields this tier cannot know and
 * why, ...; docs/identity.md). out == NULL with out_len == 0 asks for the
 * length. FLAGSHIM_EDEVICE: a bad device string; FLAGSHIM_ENODEV: no such
 * device here; FLAGSHIM_EBACKEND: its backend gives no records (cpu).
 */
int flagshim_device_json(const char *device, char *out, int out_len);

/*
 * (1.1) flagshim_mem_get_info writes device's free and total memory in
 * bytes (torch.cuda.mem_get_info's answer) and returns 0. The total is what
 * the runtime can allocate in every tier (cuDeviceTotalMem: nvidia-smi's
 * memory.total less memory.reserved). In the presence tier the management
 * library answers (NVML's nvmlDeviceGetMemoryInfo_v2: its free, and its
 * total less the reserve; no driver is initialized); in the exact tier the
 * driver does, with the device's context current (cuMemGetInfo). free or total NULL:
 * FLAGSHIM_EINVAL; otherwise the codes of flagshim_device_json.
 */
int flagshim_mem_get_info(const char *device, unsigned long long *free_bytes, unsigned long long *total_bytes);

#ifdef __cplusplus
}
#endif
#endif /* FLAGSHIM_BUILDING */

#endif /* FLAGSHIM_H */
