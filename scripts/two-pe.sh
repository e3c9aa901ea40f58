#!/usr/bin/env bash
# The two-PE proof of issue 15 in one command, on a machine with two NVIDIA
# GPUs (nvcc, the driver, the nvidia-nvshmem wheel; torch for the cross-check).
#
# First, on the dev machine (any machine with Go; CGO_ENABLED=0, so the binary
# needs only glibc on the GPU machine):
#
#   CGO_ENABLED=0 go test -c -tags gpu -o .gpu/plugins_nvshmem.test ./plugins/nvshmem
#
# (or scripts/gpu-build.sh, which builds it among the others). Copy the
# repository with .gpu/ to the GPU machine (with the device tool: carry .gpu),
# then, from the repository root there:
#
#   bash scripts/two-pe.sh
#
# It builds the CUDA fixtures (scripts/nvshmem-build.sh: add.ptx, pe.cubin,
# pe2.cubin, ring.cubin), finds libnvshmem_host.so.3 (FLAGOS_LIBNVSHMEM_PATH,
# else the wheel through python), runs
#   .gpu/plugins_nvshmem.test -test.run TestGPUTwoPE -test.v
# (two ranks of the test binary, one per GPU, NVSHMEM's unique-id bootstrap,
# the ring through drivers/cuda and the plugin's hook), then the independent
# torch check, `torchrun --nproc_per_node=2 scripts/two_pe_check.py`, with
# /opt/torch/.venv/bin/python when it is there (else python3, when it has
# torch). Logs go to $OUT when set (the device runner), else .gpu/logs. The
# exit status is 0 only when both checks passed; with fewer than two GPUs the
# Go test skips, saying why, the torch check is not run, and it exits 3.
#
# NVLink multicast stays off in everything it starts: NCCL_NVLS_ENABLE=0,
# NVSHMEM_DISABLE_NVLS=1, TORCH_SYMM_MEM_DISABLE_MULTICAST=1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
logs=${OUT:-.gpu/logs}
mkdir -p "$logs"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=$PATH:/usr/local/cuda/bin
bin=.gpu/plugins_nvshmem.test
py=python3
[ -x /opt/torch/.venv/bin/python ] && py=/opt/torch/.venv/bin/python

echo "== machine" | tee "$logs/two-pe.log"
{
	date -u
	uname -a
	nvidia-smi -L || echo "no nvidia-smi"
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total --format=csv,noheader || true
	nvidia-smi topo -m 2>/dev/null || true
	command -v nvcc >/dev/null && nvcc --version | tail -2
	echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)}"
	echo "python: $py"
} 2>&1 | tee -a "$logs/two-pe.log"

if [ ! -x "$bin" ]; then
	echo "two-pe: no $bin; build it on the dev machine first:" >&2
	echo "  CGO_ENABLED=0 go test -c -tags gpu -o $bin ./plugins/nvshmem" >&2
	exit 1
fi

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
echo "GPUs: $ngpu"

# The NVSHMEM wheel, through the python that has it (for the fixtures' headers
# and libnvshmem_device.a, and for the host library).
if [ -z "${NVSHMEM_HOME:-}" ]; then
	for p in "$py" python3; do
		home=$("$p" -c 'import importlib.util; print(list(importlib.util.find_spec("nvidia.nvshmem").submodule_search_locations)[0])' 2>/dev/null) &&
			[ -d "$home/lib" ] && export NVSHMEM_HOME=$home && break
	done
fi
if [ -z "${FLAGOS_LIBNVSHMEM_PATH:-}" ] && [ -n "${NVSHMEM_HOME:-}" ] && [ -e "$NVSHMEM_HOME/lib/libnvshmem_host.so.3" ]; then
	export FLAGOS_LIBNVSHMEM_PATH=$NVSHMEM_HOME/lib/libnvshmem_host.so.3
fi
echo "NVSHMEM_HOME=${NVSHMEM_HOME:-(not found)}"
echo "FLAGOS_LIBNVSHMEM_PATH=${FLAGOS_LIBNVSHMEM_PATH:-(not found: the loader searches)}"

echo "== fixtures"
fx=$root/plugins/nvshmem/testdata/build
if ! bash scripts/nvshmem-build.sh "$fx" >"$logs/nvshmem-build.log" 2>&1; then
	echo "two-pe: scripts/nvshmem-build.sh failed; see nvshmem-build.log:" >&2
	tail -20 "$logs/nvshmem-build.log" >&2
	exit 1
fi
tail -4 "$logs/nvshmem-build.log"
export FLAGSHIM_NVSHMEM_FIXTURES=$fx

echo "== go: TestGPUTwoPE"
(cd plugins/nvshmem && timeout 420 "$root/$bin" -test.run '^TestGPUTwoPE$' -test.v -test.count=1 -test.timeout=6m) 2>&1 | tee "$logs/two-pe-go.log"
go_rc=${PIPESTATUS[0]}

echo "== torch: two_pe_check.py"
torch_rc=0
if [ "$ngpu" -lt 2 ]; then
	echo "two-pe: $ngpu GPU(s); the torch check needs two and did not run" | tee "$logs/two-pe-torch.log"
	torch_rc=3
elif "$py" -c 'import torch, torch.distributed' 2>/dev/null; then
	timeout 300 "$py" -m torch.distributed.run --nproc_per_node=2 scripts/two_pe_check.py --fixtures "$fx" 2>&1 | tee "$logs/two-pe-torch.log"
	torch_rc=${PIPESTATUS[0]}
else
	echo "two-pe: $py has no torch; the cross-check did not run" | tee "$logs/two-pe-torch.log"
	torch_rc=2
fi

echo
echo "== summary" | tee -a "$logs/two-pe.log"
{
	go_what=$(grep -E -- '^--- (PASS|FAIL|SKIP): TestGPUTwoPE' "$logs/two-pe-go.log" | head -1)
	echo "go:    exit $go_rc ${go_what:-(no result line)}"
	grep -h -B1 -E '^--- SKIP: TestGPUTwoPE' "$logs/two-pe-go.log" | head -1 | sed 's/^ */       /'
	grep -h 'FLAGSHIM-TWOPE-RESULT' "$logs/two-pe-go.log" | sed 's/^ */       /'
	echo "torch: exit $torch_rc $(grep -h '^two_pe_check:' "$logs/two-pe-torch.log" | tail -1)"
} 2>&1 | tee -a "$logs/two-pe.log"
[ "$go_rc" -ne 0 ] && exit 1
[ "$ngpu" -lt 2 ] && exit 3
[ "$torch_rc" -eq 0 ] || exit 1
grep -q -- '^--- PASS: TestGPUTwoPE' "$logs/two-pe-go.log" || exit 1
