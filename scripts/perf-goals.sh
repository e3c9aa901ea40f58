#!/usr/bin/env bash
# Every performance goal, measured side by side in one call on the GPU
# machine (the reference is an H200), each ratio printed with its goal:
#
#   the CLI's defaults      list <= 1.2x nvidia-smi -L; info and resolve <= 1.15x
#                           the exact C floor (dlopen + cuInit + enumerate)
#   hot paths (paired)      SetCurrent <= 1x, Synchronize <= 1.15x, Launch <= 1.05x
#                           the same driver calls made from C, 0 allocs/op
#   CUDA Graphs             a graph of 100 nop launches replayed <= 0.5x C's 100
#                           cuLaunchKernel calls (each with a stream synchronize)
#
#   scripts/perf-goals.sh build        # here: every binary the measurements run
#   scripts/perf-goals.sh run [ROUNDS] # there, from the repository root
#
# The logs go to .gpu/logs, or, where $OUT is set (the device runner, which
# returns at most 8 files), into one archive, $OUT/perf-goals-logs.tar.gz,
# packed when the script exits; the last lines printed are the summary.
# docs/benchmarks.md records the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	bash scripts/bench-ratio.sh build
	;;
run)
	rounds=${2:-15}
	if [ -n "${OUT:-}" ]; then
		packed=$OUT
		OUT=$(mktemp -d "${TMPDIR:-/tmp}/perf-goals-logs.XXXXXX")
		export OUT # bench-ratio.sh writes its logs there too
		trap 'tar -czf "$packed/perf-goals-logs.tar.gz" -C "$OUT" . && rm -rf "$OUT"' EXIT
	fi
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	echo "== the CLI's defaults against nvidia-smi -L and the C floor ($rounds rounds)"
	python3 scripts/probe-bench.py "$rounds" 2>&1 | tee "$logs/probe-bench.log"
	echo "== hot paths and graph replay, paired in one process"
	bash scripts/bench-ratio.sh paired 5 2>&1 | tee "$logs/paired.log" | tail -12
	echo
	echo "== summary (each ratio with its goal)"
	grep -h 'goal <=' "$logs/probe-bench.log" "$logs/paired.log" | sed 's/^/  /'
	;;
*)
	echo "usage: scripts/perf-goals.sh build | run [rounds]" >&2
	exit 2
	;;
esac
