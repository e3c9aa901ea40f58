#!/usr/bin/env bash
# The Python package's GPU proofs in two steps.
#
# Here (any machine with Go and a C compiler):
#   scripts/python-gpu.sh build
#     -> .gpu/libflagshim.so (cgo, -buildmode=c-shared) and .gpu/python (a copy
#        of python/: the package, its tests and the proof scripts). .gpu is
#        git-ignored; with the device tool, carry it.
#
# On the GPU machine (an NVIDIA driver, torch, Triton 3.6, the nvidia-nvshmem
# wheel; nvcc to build the NVSHMEM fixtures), from the repository root:
#   scripts/python-gpu.sh run
#     runs python/tests/gpu/triton_nvshmem.py and fork_presence.py from
#     .gpu/python with FLAGSHIM_LIBRARY=.gpu/libflagshim.so, under $PYTHON
#     (default /opt/torch/.venv/bin/python). It finds libnvshmem_host.so.3
#     (FLAGOS_LIBNVSHMEM_PATH, else the wheel through $PYTHON or python3) and
#     builds the fixtures (scripts/nvshmem-build.sh) into
#     $FLAGSHIM_NVSHMEM_FIXTURES (default plugins/nvshmem/testdata/build) when
#     pe.cubin is not there yet. With OUT set, the output is also written to
#     $OUT/python-gpu.log. Exit status 1 when either proof failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

case "${1:-}" in
build)
	mkdir -p .gpu
	CGO_ENABLED=1 "${FLAGSHIM_GO:-go}" build -trimpath -ldflags="-s -w" -buildmode=c-shared -o .gpu/libflagshim.so ./cmd/libflagshim
	rm -f .gpu/libflagshim.h
	rm -rf .gpu/python
	mkdir -p .gpu/python
	(cd python && tar --exclude=__pycache__ --exclude=libflagshim.so -cf - .) | (cd .gpu/python && tar -xf -)
	chmod -R go-w .gpu
	echo "python-gpu: built .gpu/libflagshim.so and .gpu/python"
	;;
run)
	py=${PYTHON:-/opt/torch/.venv/bin/python}
	[ -x "$py" ] || command -v "$py" >/dev/null || { echo "python-gpu: no $py (set PYTHON)" >&2; exit 1; }
	[ -f .gpu/libflagshim.so ] || { echo "python-gpu: no .gpu/libflagshim.so: run scripts/python-gpu.sh build first" >&2; exit 1; }
	# The loader refuses a library others may replace.
	chmod go-w .gpu .gpu/libflagshim.so
	export FLAGSHIM_LIBRARY=$root/.gpu/libflagshim.so
	export PYTHONPATH=$root/.gpu/python
	export PATH=$PATH:/usr/local/cuda/bin
	if [ -z "${FLAGOS_LIBNVSHMEM_PATH:-}" ]; then
		find='import importlib.util, os; s = importlib.util.find_spec("nvidia.nvshmem"); print(os.path.join(list(s.submodule_search_locations)[0], "lib", "libnvshmem_host.so.3"))'
		FLAGOS_LIBNVSHMEM_PATH=$("$py" -c "$find" 2>/dev/null || python3 -c "$find" 2>/dev/null || true)
		[ -n "$FLAGOS_LIBNVSHMEM_PATH" ] && export FLAGOS_LIBNVSHMEM_PATH
	fi
	export FLAGSHIM_NVSHMEM_FIXTURES=${FLAGSHIM_NVSHMEM_FIXTURES:-$root/plugins/nvshmem/testdata/build}
	if [ ! -f "$FLAGSHIM_NVSHMEM_FIXTURES/pe.cubin" ]; then
		if command -v nvcc >/dev/null; then
			bash scripts/nvshmem-build.sh "$FLAGSHIM_NVSHMEM_FIXTURES"
		else
			echo "python-gpu: no $FLAGSHIM_NVSHMEM_FIXTURES/pe.cubin and no nvcc to build it: check (c) will fail" >&2
		fi
	fi
	log=/dev/null
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		log=$OUT/python-gpu.log
	fi
	{
		echo "python-gpu: $("$py" --version 2>&1), FLAGSHIM_LIBRARY=$FLAGSHIM_LIBRARY"
		echo "python-gpu: FLAGOS_LIBNVSHMEM_PATH=${FLAGOS_LIBNVSHMEM_PATH:-}, FLAGSHIM_NVSHMEM_FIXTURES=$FLAGSHIM_NVSHMEM_FIXTURES"
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 || true
	} | tee "$log"
	status=0
	for proof in triton_nvshmem fork_presence; do
		echo "== $proof" | tee -a "$log"
		if ! "$py" ".gpu/python/tests/gpu/$proof.py" 2>&1 | tee -a "$log"; then
			status=1
		fi
	done
	echo "python-gpu: $([ $status = 0 ] && echo PASS || echo FAIL)" | tee -a "$log"
	exit $status
	;;
*)
	echo "usage: $0 build | run" >&2
	exit 2
	;;
esac
