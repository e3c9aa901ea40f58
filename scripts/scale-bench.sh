#!/usr/bin/env bash
# How Init (each tier), list and resolve grow with the devices and the
# vendors a machine has (issue 40, goal 3), on fake libraries: a fake
# libcuda.so.1 and libnvidia-ml.so.1 of 8, 64, 512 and 4096 devices, and 0 to
# 128 more vendors registered whose libraries are nowhere (procsplit's
# PROCSPLIT_VENDORS). Whole processes of the CLI, interleaved;
# scripts/scale-bench.py prints the medians, the cost per device and per
# vendor searched, and whether each command grows linearly.
#
#   scripts/scale-bench.sh build       # here: the fakes (.gpu/perf/fakes), .gpu/flagshim, .gpu/procsplit
#   scripts/scale-bench.sh run [N]     # here or on the GPU machine: N rounds (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	mkdir -p .gpu/perf/fakes
	# The fakes' bounds at flagshim's (device.MaxDevices): the fake NVML has it already.
	${CC:-cc} -O2 -shared -fPIC -Idriver/drivertest/testdata -DFAKE_MAX_DEVICES=4096 -Wl,-soname,libcuda.so.1 \
		-o .gpu/perf/fakes/libcuda.so.1 drivers/cuda/testdata/fake_libcuda.c -lpthread
	${CC:-cc} -O2 -shared -fPIC -Itier/presence/presencetest/testdata -Wl,-soname,libnvidia-ml.so.1 \
		-o .gpu/perf/fakes/libnvidia-ml.so.1 drivers/cuda/testdata/fake_nvml.c -lpthread
	[ -x .gpu/flagshim ] || CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/flagshim ./cmd/flagshim
	[ -x .gpu/procsplit ] || CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/procsplit ./scripts/procsplit
	chmod -R go-w .gpu/perf
	;;
run)
	python3 scripts/scale-bench.py "${2:-5}"
	;;
*)
	echo "usage: scripts/scale-bench.sh build | run [rounds]" >&2
	exit 2
	;;
esac
