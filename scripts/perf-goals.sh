#!/usr/bin/env bash
# Every performance goal, measured side by side in one call on the GPU
# machine (an H100 or H200; no Go there), each ratio printed with its goal
# and "met" or "NOT MET":
#
#   the CLI's defaults      list <= 1.2x nvidia-smi -L; info and resolve <= 1.15x
#                           the exact C floor (dlopen + cuInit + enumerate)
#   hot paths (paired)      each <= 1.03x the Go floor (the same driver calls through
#                           cgo), no worse against the C floor than the last run,
#                           0 allocs/op: SetCurrent, Synchronize, Launch (3, 8 args),
#                           4 KiB copies both ways, stream synchronize, event record
#   CUDA Graphs             a graph of 100 nop launches replayed <= 0.5x C's 100
#                           cuLaunchKernel calls (each with a stream synchronize)
#   threads                 1, 4, 16, 64 goroutines launching (own streams, one
#                           stream) >= 0.95x as many launches/s as as many C threads
#   cold start              import flagshim + resolve, over the interpreter, and a C
#                           host's flagshim_resolve <= 1.2x nvidia-smi -L (presence)
#   devices                 Init per tier, list and resolve on fakes of 8..4096
#                           devices grow linearly (scripts/scale-bench.py)
#   the test suite          measured where Go is (perf-goals.sh suite), its summary
#                           carried in .gpu/perf/suite.txt and printed with the rest
#
#   scripts/perf-goals.sh build        # here: every binary, library and fake the run needs
#   scripts/perf-goals.sh suite        # here, optional: the test suite's goals -> .gpu/perf/suite.txt
#   scripts/perf-goals.sh run [ROUNDS] # there, from the repository root (ROUNDS: probe-bench's, default 9)
#
# Carry .gpu (git-ignored) to the GPU machine. The logs go to .gpu/logs, or,
# where $OUT is set (the device runner, which returns at most 8 files), into
# one archive, $OUT/perf-goals-logs.tar.gz, packed when the script exits;
# the last lines printed are the summary. docs/benchmarks.md records the
# runs.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	bash scripts/bench-ratio.sh build
	bash scripts/python-gpu.sh build
	${CC:-cc} -O2 -Wall -Icmd/libflagshim -o .gpu/perf/cold-resolve scripts/cold-resolve.c -L.gpu -lflagshim -Wl,-rpath,'$ORIGIN/..'
	bash scripts/scale-bench.sh build
	chmod -R go-w .gpu
	ls -l .gpu/perf
	;;
suite)
	mkdir -p .gpu/perf
	bash scripts/suite-time.sh | tee .gpu/perf/suite.log
	grep 'goal' .gpu/perf/suite.log >.gpu/perf/suite.txt
	;;
run)
	rounds=${2:-9}
	if [ -n "${OUT:-}" ]; then
		packed=$OUT
		OUT=$(mktemp -d "${TMPDIR:-/tmp}/perf-goals-logs.XXXXXX")
		export OUT # bench-ratio.sh writes its logs there too
		trap 'tar -czf "$packed/perf-goals-logs.tar.gz" -C "$OUT" . && rm -rf "$OUT"' EXIT
	fi
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	start=$(date +%s)
	# A step that fails says so in its log and the summary; the others still run.
	set +e
	echo "== machine"
	{ date -u; uname -r; nvidia-smi -L 2>/dev/null || true; nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true; nproc; } | tee "$logs/machine.log"
	echo "== the CLI's defaults against nvidia-smi -L and the C floor ($rounds rounds)"
	python3 scripts/probe-bench.py "$rounds" 2>&1 | tee "$logs/probe-bench.log"
	echo "== cold start of a host (presence tier, $rounds rounds)"
	python3 scripts/cold-start.py "$rounds" 2>&1 | tee "$logs/cold-start.log"
	echo "== hot paths against the C floor and the Go floor, paired in one process"
	bash scripts/bench-ratio.sh paired 5 2>&1 | tee "$logs/paired.log" | tail -14
	echo "== threads launching at once, against C threads"
	bash scripts/bench-ratio.sh threads 3 2>&1 | tee "$logs/threads.log" | tail -9
	echo "== devices: fakes of 8, 64, 512 and 4096 devices"
	bash scripts/scale-bench.sh run 2>&1 | tee "$logs/scale.log" | tail -12
	echo
	echo "== summary (each ratio with its goal), $(($(date +%s) - start)) s"
	grep -h 'goal' "$logs/probe-bench.log" "$logs/cold-start.log" "$logs/paired.log" "$logs/threads.log" "$logs/scale.log" | sed 's/^/  /'
	for f in probe-bench cold-start paired threads scale; do
		grep -q 'goal' "$logs/$f.log" || echo "  $f: no result (see $f.log)"
	done
	if [ -s .gpu/perf/suite.txt ]; then
		echo "  -- the test suite, measured where it was built (perf-goals.sh suite):"
		sed 's/^/  /' .gpu/perf/suite.txt
	fi
	;;
*)
	echo "usage: scripts/perf-goals.sh build | suite | run [rounds]" >&2
	exit 2
	;;
esac
