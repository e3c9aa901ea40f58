#!/usr/bin/env bash
# Runs every .gpu/*.test (built by scripts/gpu-build.sh) with -test.v on a
# machine with an NVIDIA GPU, passing nvidia-smi's view of the devices in the
# environment as an independent source, and prints a summary. Logs go to
# .gpu/logs, or, where $OUT is set (the device runner, which returns at most
# 8 files), into one archive, $OUT/gpu-run-logs.tar.gz, packed when the
# script exits. One command runs everything:
#
#   scripts/gpu-run.sh              # from the repository root on the GPU machine
#
# When .gpu/plugins_nvshmem.test is there, it first does what
# `scripts/nvshmem-gpu.sh run` does: builds plugins/nvshmem's CUDA fixtures
# with nvcc (scripts/nvshmem-build.sh: add.ptx, pe.cubin, pe2.cubin, ring.cubin), finds
# the NVSHMEM wheel's libnvshmem_host.so.3 (FLAGOS_LIBNVSHMEM_PATH, else
# python3), and runs that binary's GPU tests (TestGPURawScenario,
# TestGPUDriverScenario; TestGPUTwoPE skips, saying why, below two GPUs:
# scripts/two-pe.sh is its own command) from plugins/nvshmem. A failed
# fixture build is logged (nvshmem-build.log) and the other binaries still
# run.
#
# Expectations: none is assumed about the model. The tests compare the
# driver with nvidia-smi (name, UUID, memory, PCI address, compute
# capability); FLAGSHIM_GPU_EXPECT_NAME (a substring of every device name)
# and FLAGSHIM_GPU_EXPECT_CC (e.g. 9.0) add a check of your own where set.
#   GPU_BENCH: a -test.bench pattern (default GPU); "" to skip benchmarks.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ -n "${OUT:-}" ]; then
	packed=$OUT
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/gpu-run-logs.XXXXXX")
	export OUT # the scripts this one runs write their logs there too
	trap 'tar -czf "$packed/gpu-run-logs.tar.gz" -C "$OUT" . && rm -rf "$OUT"' EXIT
fi
logs=${OUT:-.gpu/logs}
mkdir -p "$logs"
export PATH=$PATH:/usr/local/cuda/bin
export FLAGSHIM_GPU_EXPECT_NAME=${FLAGSHIM_GPU_EXPECT_NAME-}
export FLAGSHIM_GPU_EXPECT_CC=${FLAGSHIM_GPU_EXPECT_CC-}
bench=${GPU_BENCH-GPU}

echo "== machine"
date -u
uname -a
if command -v nvidia-smi >/dev/null; then
	nvidia-smi -L
	# memory.reserved is missing on old drivers: then ask without it.
	FLAGSHIM_NVSMI=$(nvidia-smi --query-gpu=uuid,memory.total,memory.reserved,pci.bus_id,name --format=csv,noheader,nounits 2>/dev/null | sed 's/, /|/g') ||
		FLAGSHIM_NVSMI=$(nvidia-smi --query-gpu=uuid,memory.total,pci.bus_id,name --format=csv,noheader,nounits | sed 's/, /|/; s/, /||/; s/, /|/g')
	echo "$FLAGSHIM_NVSMI"
	FLAGSHIM_NVSMI_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
	# uuid|compute_cap per GPU (compute_cap needs a driver of 2021 or later;
	# empty where nvidia-smi does not know the field).
	FLAGSHIM_NVSMI_CC=$(nvidia-smi --query-gpu=uuid,compute_cap --format=csv,noheader 2>/dev/null | sed 's/, /|/g') || FLAGSHIM_NVSMI_CC=
	export FLAGSHIM_NVSMI FLAGSHIM_NVSMI_DRIVER FLAGSHIM_NVSMI_CC
	echo "nvidia-smi driver $FLAGSHIM_NVSMI_DRIVER"
	nvidia-smi | head -4 | tail -2
else
	echo "no nvidia-smi: the tests check the driver against itself only"
fi
command -v nvcc >/dev/null && nvcc --version | tail -2

shopt -s nullglob
tests=(.gpu/*.test)
if [ ${#tests[@]} -eq 0 ]; then
	echo "gpu-run: no .gpu/*.test; run scripts/gpu-build.sh first" >&2
	exit 1
fi

if [ -e .gpu/plugins_nvshmem.test ]; then
	echo "== nvshmem fixtures"
	fx=$root/plugins/nvshmem/testdata/build
	if bash scripts/nvshmem-build.sh "$fx" >"$logs/nvshmem-build.log" 2>&1; then
		tail -4 "$logs/nvshmem-build.log"
	else
		echo "gpu-run: scripts/nvshmem-build.sh failed; see nvshmem-build.log:" >&2
		tail -20 "$logs/nvshmem-build.log" >&2
	fi
	export FLAGSHIM_NVSHMEM_FIXTURES=$fx
	if [ -z "${FLAGOS_LIBNVSHMEM_PATH:-}" ]; then
		home=$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("nvidia.nvshmem").submodule_search_locations)[0])' 2>/dev/null) &&
			export FLAGOS_LIBNVSHMEM_PATH=$home/lib/libnvshmem_host.so.3
	fi
	echo "FLAGOS_LIBNVSHMEM_PATH=${FLAGOS_LIBNVSHMEM_PATH:-}"
	pip list 2>/dev/null | grep -i nvshmem
	bash scripts/nvshmem-info.sh >"$logs/nvshmem-info.log" 2>&1 || true
fi

status=0
summary=()
binlogs=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .test)
	log="$logs/$name.log"
	binlogs+=("$log")
	# From the package's folder, as go test runs it (gpu-build.sh wrote
	# it beside the binary): tests read testdata and sources relative to it.
	dir=.
	[ -s ".gpu/$name.pkg" ] && dir=$(cat ".gpu/$name.pkg")
	[ -d "$dir" ] || dir=.
	args=()
	case $name in
	plugins_nvshmem | root) args=(-test.run GPU) ;;
	esac
	echo "== $name"
	(cd "$dir" && "$root/$t" -test.v -test.count=1 -test.timeout=5m "${args[@]}") 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# Benchmarks apart, so that a failing test does not hide them.
	if [ -n "$bench" ]; then
		(cd "$dir" && "$root/$t" -test.run='^$' -test.bench="$bench" -test.benchmem -test.count=3) 2>&1 | tee -a "$log"
	fi
	[ "$rc" -ne 0 ] && status=1
	pass=$(grep -c -- '^--- PASS' "$log")
	fail=$(grep -c -- '^--- FAIL' "$log")
	skip=$(grep -c -- '^--- SKIP' "$log")
	summary+=("$name: exit $rc, $pass passed, $fail failed, $skip skipped")
done
# The CDI spec against what a driver-API program opens (scripts/cdi-gpu.sh).
if [ -x .gpu/flagshim ]; then
	echo "== cdi-gpu"
	bash scripts/cdi-gpu.sh .gpu/flagshim "$logs/cdi-gpu.log" >/dev/null 2>&1
	rc=$?
	tail -1 "$logs/cdi-gpu.log"
	grep '^MISSING' "$logs/cdi-gpu.log"
	[ "$rc" -ne 0 ] && status=1
	summary+=("cdi-gpu: exit $rc, $(tail -1 "$logs/cdi-gpu.log")")
fi
# Visible devices: flagshim against torch and nvidia-smi under every
# CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER of issue 35 (visible-gpu.sh).
if [ -x .gpu/flagshim ]; then
	echo "== visible-gpu"
	bash scripts/visible-gpu.sh .gpu/flagshim "$logs/visible-gpu.log" >/dev/null
	rc=$?
	[ "$rc" -ne 0 ] && status=1
	summary+=("visible-gpu: exit $rc, $(tail -1 "$logs/visible-gpu.log")")
	grep '^FAIL' "$logs/visible-gpu.log" | head -20
fi

echo
echo "== summary"
for s in "${summary[@]}"; do echo "$s"; done
grep -h -E -- '^--- (FAIL|PASS)|^Benchmark' "${binlogs[@]}" | sed 's/^/  /'
exit $status
