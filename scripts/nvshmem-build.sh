#!/usr/bin/env bash
# Builds the CUDA fixtures of plugins/nvshmem's gpu tests. Run it on the GPU
# machine (it needs nvcc and the NVSHMEM python wheel, nvidia-nvshmem-cu12 or
# -cu13, or NVSHMEM_HOME pointing at an NVSHMEM install):
#
#   scripts/nvshmem-build.sh [outdir]     # default plugins/nvshmem/testdata/build
#
# It writes add.ptx (a plain kernel), pe.cubin and pe2.cubin (kernels built
# with -rdc=true and device-linked against libnvshmem_device.a), ring.cubin
# (the two-PE ring of ring_kernel.cu, built the same way) and, with
# NATIVE=1, builds and runs native_check, a C++ cross-check of the layouts and
# of the scenario the Go test runs. NVSHMEM_ARCH picks the GPU (sm_90: H100,
# H200). The gpu tests read the outputs from FLAGSHIM_NVSHMEM_FIXTURES, or
# from plugins/nvshmem/testdata/build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/plugins/nvshmem/testdata
out=${1:-$src/build}
arch=${NVSHMEM_ARCH:-sm_90}
mkdir -p "$out"

nvshmem_home() {
	if [ -n "${NVSHMEM_HOME:-}" ]; then echo "$NVSHMEM_HOME"; return; fi
	python3 - <<'PY' 2>/dev/null && return
import importlib.util
s = importlib.util.find_spec("nvidia.nvshmem")
print(list(s.submodule_search_locations)[0])
PY
	for d in /usr/local/lib/python3*/{dist,site}-packages /usr/lib/python3/dist-packages; do
		if [ -d "$d/nvidia/nvshmem/lib" ]; then echo "$d/nvidia/nvshmem"; return; fi
	done
	echo "nvshmem-build: NVSHMEM not found: set NVSHMEM_HOME or pip install nvidia-nvshmem-cu12" >&2
	return 1
}
home=$(nvshmem_home)
inc=$home/include
lib=$home/lib
echo "NVSHMEM_HOME=$home"
ls "$lib" "$inc" | head -40
command -v nvcc >/dev/null || { echo "nvshmem-build: nvcc not on PATH" >&2; exit 1; }
nvcc --version | tail -2

set -x
nvcc -arch="$arch" -ptx "$src/add.cu" -o "$out/add.ptx"
for v in 1 2; do
	nvcc -arch="$arch" -rdc=true -DVARIANT="$v" -I"$inc" -c "$src/pe_kernel.cu" -o "$out/pe$v.o"
done
# Device link into a cubin: the module then carries NVSHMEM's device state.
# (nvlink straight to a cubin when this nvcc will not device-link to one.)
nvcc -arch="$arch" -dlink -cubin "$out/pe1.o" -L"$lib" -lnvshmem_device -o "$out/pe.cubin" ||
	nvlink -arch="$arch" "$out/pe1.o" -L"$lib" -lnvshmem_device -o "$out/pe.cubin"
nvcc -arch="$arch" -dlink -cubin "$out/pe2.o" -L"$lib" -lnvshmem_device -o "$out/pe2.cubin" ||
	nvlink -arch="$arch" "$out/pe2.o" -L"$lib" -lnvshmem_device -o "$out/pe2.cubin"
nvcc -arch="$arch" -rdc=true -I"$inc" -c "$src/ring_kernel.cu" -o "$out/ring.o"
nvcc -arch="$arch" -dlink -cubin "$out/ring.o" -L"$lib" -lnvshmem_device -o "$out/ring.cubin" ||
	nvlink -arch="$arch" "$out/ring.o" -L"$lib" -lnvshmem_device -o "$out/ring.cubin"
set +x
for f in pe.cubin pe2.cubin ring.cubin; do
	n=$(cuobjdump -elf "$out/$f" | grep -cE 'nvshmemi_device_(lib_version|state)_d' || true)
	echo "$f: $(stat -c %s "$out/$f") bytes, NVSHMEM globals mentioned $n times"
	[ "$n" -gt 0 ] || { echo "nvshmem-build: $f lacks NVSHMEM's globals" >&2; exit 1; }
done
# Read the listing whole: grep -q would stop early, and with pipefail the
# SIGPIPE of cuobjdump would read as "missing".
ring_elf=$(cuobjdump -elf "$out/ring.cubin")
for k in ring_put ring_read; do
	grep -q "$k" <<<"$ring_elf" || { echo "nvshmem-build: ring.cubin lacks $k" >&2; exit 1; }
done

if [ "${NATIVE:-0}" = 1 ]; then
	hostlib=$(cd "$lib" && ls libnvshmem_host.so* | head -1)
	nvcc -arch="$arch" -I"$inc" "$src/native_check.cu" -o "$out/native_check" \
		-L"$lib" -l:"$hostlib" -lcuda -Xlinker -rpath="$lib"
	"$out/native_check" "$out/add.ptx" "$out/pe.cubin"
fi
