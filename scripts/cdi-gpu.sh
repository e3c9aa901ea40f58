#!/usr/bin/env bash
# Checks, on a machine with NVIDIA GPUs, that `flagshim cdi generate` covers
# every device node and driver file a CUDA driver-API program opens: a small
# C program (built here with gcc; it dlopens libcuda.so.1, so it links only
# the C library) runs cuInit, then on every GPU retains its primary context,
# loads a PTX module (the driver's JIT) and launches a kernel, and lists its
# open file descriptors (/proc/self/fd) and mapped files (/proc/self/maps).
# Each device node it holds must be one the spec injects, and each mapped
# file must be one the spec mounts, except the program's own files (itself
# and what ldd says it links: the C library an image brings). Anything else
# is printed as MISSING and the exit status is 1; docs/hardware.md explains
# the differences known.
#
#   scripts/cdi-gpu.sh FLAGSHIM [LOG]
#
# FLAGSHIM is the flagshim binary (built anywhere with
# `CGO_ENABLED=0 go build -o .gpu/flagshim ./cmd/flagshim`; it needs only
# glibc); LOG defaults to $OUT/cdi-gpu.log where $OUT is set, else
# .gpu/logs/cdi-gpu.log. Needs gcc and python3.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "usage: scripts/cdi-gpu.sh FLAGSHIM [LOG]  (FLAGSHIM: an executable flagshim binary)" >&2
	exit 2
fi
flagshim=$(readlink -f "$1")
cd "$(dirname "$0")/.."
log=${2:-${OUT:-.gpu/logs}/cdi-gpu.log}
mkdir -p "$(dirname "$log")"
work=$(mktemp -d "${TMPDIR:-/tmp}/cdi-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
exec > >(tee "$log") 2>&1

echo "== machine"
date -u
uname -r
command -v nvidia-smi >/dev/null && nvidia-smi -L

# The driver API's prototypes are cuda.h's (CUDA 13.0), as driver/ops.go
# gives them for each operation.
cat >"$work/cdi_probe.c" <<'EOF'
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;

static const char ptx[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry noop()\n{\n\tret;\n}\n";

#define NEED(T, name, args) T(*name) args = (T(*) args)dlsym(h, #name); \
    if (!name) { fprintf(stderr, "missing %s\n", #name); return 2; }
#define CHECK(call) do { CUresult r_ = (call); if (r_) { fprintf(stderr, "%s: %d\n", #call, r_); return 3; } } while (0)

int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) { fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror()); return 2; }
    NEED(CUresult, cuInit, (unsigned int))
    NEED(CUresult, cuDeviceGetCount, (int *))
    NEED(CUresult, cuDeviceGet, (CUdevice *, int))
    NEED(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))
    NEED(CUresult, cuCtxSetCurrent, (CUcontext))
    NEED(CUresult, cuModuleLoadData, (CUmodule *, const void *))
    NEED(CUresult, cuModuleGetFunction, (CUfunction *, CUmodule, const char *))
    NEED(CUresult, cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, CUstream, void **, void **))
    NEED(CUresult, cuCtxSynchronize, (void))
    CHECK(cuInit(0));
    int n = 0;
    CHECK(cuDeviceGetCount(&n));
    for (int i = 0; i < n; i++) {
        CUdevice d; CUcontext c; CUmodule m; CUfunction f;
        CHECK(cuDeviceGet(&d, i));
        CHECK(cuDevicePrimaryCtxRetain(&c, d));
        CHECK(cuCtxSetCurrent(c));
        CHECK(cuModuleLoadData(&m, ptx));
        CHECK(cuModuleGetFunction(&f, m, "noop"));
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0));
        CHECK(cuCtxSynchronize());
    }
    printf("DEVICES %d\n", n);
    DIR *fds = opendir("/proc/self/fd");
    struct dirent *e;
    char p[PATH_MAX], target[PATH_MAX];
    while (fds && (e = readdir(fds))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "0") || !strcmp(e->d_name, "1") || !strcmp(e->d_name, "2"))
            continue; /* ., .., and the program's stdio */
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(p, target, sizeof target - 1);
        if (k > 0) { target[k] = 0; printf("FD %s\n", target); }
    }
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 256];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path) { path[strcspn(path, "\n")] = 0; printf("MAP %s\n", path); }
    }
    return 0;
}
EOF
echo "== build"
gcc -O1 -o "$work/cdi_probe" "$work/cdi_probe.c" -ldl || exit 1
ldd "$work/cdi_probe"

echo "== flagshim cdi generate"
"$flagshim" cdi generate --format json --output "$work/spec.json" || exit 1
"$flagshim" cdi generate --format yaml

echo "== the program"
"$work/cdi_probe" >"$work/probe.out" || { cat "$work/probe.out"; exit 1; }
sort -u "$work/probe.out"

echo "== compare"
python3 - "$work/spec.json" "$work/probe.out" "$work/cdi_probe" <<'EOF'
import json, os, re, subprocess, sys

spec_file, probe_file, program = sys.argv[1:4]
spec = json.load(open(spec_file))
edits = [spec.get("containerEdits", {})] + [d["containerEdits"] for d in spec["devices"] if d["name"] == "all"]
nodes = {n["path"] for e in edits for n in e.get("deviceNodes", [])}
mounts = set()
for e in edits:
    for m in e.get("mounts", []):
        mounts.add(m["containerPath"])
        mounts.add(os.path.realpath(m["hostPath"]))
own = {os.path.realpath(program)}
for line in subprocess.run(["ldd", program], capture_output=True, text=True).stdout.splitlines():
    m = re.search(r"(/\S+) \(0x", line)
    if m:
        own.add(os.path.realpath(m.group(1)))
print("spec: %d device nodes (spec and all), %d mount paths" % (len(nodes), len(mounts)))
# glibc's own shared objects (its build's sonames), which no CDI spec mounts.
GLIBC = re.compile(r"^(ld-linux[-.\w]*\.so\.\d+|lib(c|m|dl|pthread|rt|resolv|util|anl|nsl|mvec|BrokenLocale|thread_db|nss_\w+)\.so\.\d+)$")
missing, covered, skipped = [], [], []
for line in sorted(set(open(probe_file).read().splitlines())):
    kind, _, path = line.partition(" ")
    if kind not in ("FD", "MAP"):
        continue
    path = path.removesuffix(" (deleted)")
    if path.startswith("/dev/"):
        if path in nodes:
            covered.append(line)
        elif path in ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/tty") or path.startswith("/dev/pts/") or path.startswith("/dev/shm/"):
            skipped.append(line + "   (every container has it)")
        else:
            missing.append(line)
    elif path.startswith("/"):
        real = os.path.realpath(path)
        if path in mounts or real in mounts:
            covered.append(line)
        elif real in own:
            skipped.append(line + "   (the program's own: the image brings it)")
        elif GLIBC.match(os.path.basename(path)):
            # libcuda's own DT_NEEDED entries (libdl, libm, libpthread,
            # librt) are parts of the C library: the image's glibc answers
            # them, as it does for nvidia-ctk's specs, which mount none.
            skipped.append(line + "   (part of glibc, which the image brings)")
        elif path.startswith("/proc/") or path.startswith("/sys/"):
            skipped.append(line + "   (the container's own /proc or /sys)")
        else:
            missing.append(line)
    else:
        skipped.append(line + "   (not a file: socket, pipe, anon inode)")
for l in covered:
    print("COVERED " + l)
for l in skipped:
    print("SKIPPED " + l)
for l in missing:
    print("MISSING " + l)
print("cdi-gpu: %d covered, %d skipped, %d missing" % (len(covered), len(skipped), len(missing)))
sys.exit(1 if missing else 0)
EOF
