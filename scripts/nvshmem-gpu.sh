#!/usr/bin/env bash
# plugins/nvshmem's GPU proof in two steps.
#
# Here (any machine with Go):
#   scripts/nvshmem-gpu.sh build [tags]   # tags default "gpu"; "nvshmem_raw" needs no drivers/cuda module API
#     -> plugins/nvshmem/testdata/build/nvshmem.test (git-ignored; CGO_ENABLED=0:
#        needs only glibc on the GPU machine). With the device tool, carry that path.
#
# On the GPU machine (nvcc, an NVIDIA driver, the nvidia-nvshmem wheel), from
# the repository root:
#   scripts/nvshmem-gpu.sh run [go test flags]
#     builds the CUDA fixtures (scripts/nvshmem-build.sh) into plugins/nvshmem/testdata/build,
#     finds libnvshmem_host.so.3 (FLAGOS_LIBNVSHMEM_PATH, else the wheel via python3),
#     and runs the GPU tests verbosely. NVSHMEM_TEST names another test binary
#     (scripts/gpu-run.sh, which does all of this for .gpu/plugins_nvshmem.test).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$root/plugins/nvshmem/testdata/build
case "${1:-}" in
build)
	mkdir -p "$out"
	CGO_ENABLED=0 go test -c -tags "${2:-gpu}" -o "$out/nvshmem.test" ./plugins/nvshmem
	echo "built $out/nvshmem.test"
	;;
run)
	shift
	export PATH=$PATH:/usr/local/cuda/bin
	fx=$out
	bash scripts/nvshmem-build.sh "$fx"
	if [ -z "${FLAGOS_LIBNVSHMEM_PATH:-}" ]; then
		home=$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("nvidia.nvshmem").submodule_search_locations)[0])')
		export FLAGOS_LIBNVSHMEM_PATH=$home/lib/libnvshmem_host.so.3
	fi
	export FLAGSHIM_NVSHMEM_FIXTURES=$fx
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
	cd plugins/nvshmem
	"${NVSHMEM_TEST:-$out/nvshmem.test}" -test.run 'GPU' -test.v -test.count=1 "$@"
	;;
*)
	echo "usage: $0 build [tags] | run [go test flags]" >&2
	exit 2
	;;
esac
