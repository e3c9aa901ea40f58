#!/usr/bin/env bash
# The hot paths of the Go backend against the C floor (scripts/cfloor.c: the
# same driver calls made from C) and the Go floor (internal/gofloor: the same
# driver calls made from Go through one cgo call each), interleaved on one
# GPU machine, with the issues' goals: each path <= 1.03x the Go floor and
# no worse against C than the last recorded run, 0 allocations; launches
# from 1, 4, 16 and 64 goroutines >= 0.95x as many launches per second as as
# many C threads (BenchmarkGPUThreads); and the graphs goal: one replay of a
# graph of 100 nop launches, synchronized, <= 0.5x what C pays for 100
# cuLaunchKernel calls and a synchronize (BenchmarkGPUGraphReplay100).
#
#   scripts/bench-ratio.sh build       # here: .gpu/cfloor, .gpu/libcfloor.so, .gpu/drivers_cuda.test, .gpu/clib.test,
#                                      # .gpu/perf/drivers_cuda_cgo.test (with cgo: the Go floor), and for probe-bench.py
#                                      # and proc-split.py .gpu/flagshim, .gpu/cfloor-probe, .gpu/procsplit
#   scripts/bench-ratio.sh run [N]     # there, from the repository root: N rounds (default 5)
#   scripts/bench-ratio.sh paired [N]  # there: the paired benchmarks, N counts (default 5)
#   scripts/bench-ratio.sh threads [N] # there: the threads benchmark, N counts (default 3)
#   scripts/bench-ratio.sh split [N]   # there: two Go paths against each other (BenchmarkGPUSplit), N counts
#                                      # (default 5): where a row's gap to the Go floor lies
#   scripts/bench-ratio.sh fake [N]    # here, no GPU: the paired rows and their sides on the fake libcuda
#
# paired is the measurement of record: drivers/cuda's BenchmarkGPUPaired
# calls the C floor's loops (libcfloor.so) from the Go process in slices
# that rotate with the Go backend's and the Go floor's, so the driver's own
# drift between seconds cancels; run's separate processes show that drift
# (the C floor alone varies by up to 2x between rounds) and stay for the raw
# transition rows. paired and threads run the test binary built with cgo
# (.gpu/perf/drivers_cuda_cgo.test; without it, .gpu/drivers_cuda.test,
# which has no Go floor).
#
# Each round runs the C program once and the Go benchmarks once (count 1),
# so both see the machine in the same state; the medians of the rounds are
# compared. Logs go to $OUT when set (the device runner), else .gpu/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	mkdir -p .gpu
	mkdir -p .gpu/perf
	${CC:-cc} -O2 -Wall -o .gpu/cfloor scripts/cfloor.c -ldl -lpthread
	${CC:-cc} -O2 -Wall -shared -fPIC -DCFLOOR_LIB -o .gpu/libcfloor.so scripts/cfloor.c -ldl -lpthread
	CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o .gpu/drivers_cuda.test ./drivers/cuda
	# With cgo: the Go floor (internal/gofloor). It links libc only (the
	# floor calls the driver through addresses flagshim resolved), and sits
	# apart from .gpu/*.test, which gpu-run.sh runs.
	CGO_ENABLED=1 go test -c -tags gpu -ldflags="-s -w" -o .gpu/perf/drivers_cuda_cgo.test ./drivers/cuda
	CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o .gpu/clib.test ./clib
	${CC:-cc} -O2 -Wall -o .gpu/cfloor-probe scripts/cfloor-probe.c -ldl -lpthread
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/flagshim ./cmd/flagshim
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/procsplit ./scripts/procsplit
	ls -l .gpu/cfloor .gpu/libcfloor.so .gpu/drivers_cuda.test .gpu/perf/drivers_cuda_cgo.test .gpu/clib.test .gpu/cfloor-probe .gpu/flagshim .gpu/procsplit
	;;
paired)
	counts=${2:-5}
	root=$PWD # absolute and without "..": the benchmark checks the library's path before it opens it
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	log=$logs/bench-paired.log
	bin=$root/.gpu/perf/drivers_cuda_cgo.test
	[ -x "$bin" ] || bin=$root/.gpu/drivers_cuda.test
	(cd drivers/cuda && FLAGSHIM_CFLOOR_LIB=$root/.gpu/libcfloor.so "$bin" -test.run '^$' \
		-test.bench 'GPUPaired|GPUGraphReplay100' -test.benchmem -test.benchtime 1s -test.count "$counts") | tee "$log" | grep '^Benchmark'
	echo "== medians of $counts counts: Go, C floor, Go floor (ns/op); the medians of the slices' ratios"
	awk '
		/^BenchmarkGPU(Paired|GraphReplay100)\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkGPUPaired\//, "", name); sub(/^BenchmarkGPU/, "", name)
			k = ++n[name]
			for (i = 1; i <= NF; i++) {
				if ($(i+1) == "ns/op") g[name, k] = $i
				if ($(i+1) == "c-ns/op") c[name, k] = $i
				if ($(i+1) == "go/c") r[name, k] = $i
				if ($(i+1) == "gofloor-ns/op") f[name, k] = $i
				if ($(i+1) == "go/gofloor") rf[name, k] = $i
				if ($(i+1) == "go-allocs/op") al[name] = $i
			}
			if (!(name in seen)) { seen[name] = 1; order[++m] = name }
		}
		function median(arr, name,   cnt, i, j, t, a) {
			cnt = 0; for (i = 1; i <= n[name]; i++) if ((name, i) in arr) a[++cnt] = arr[name, i]
			if (!cnt) return ""
			for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
		}
		function met(x, limit) { return x == "" || limit == "-" ? "-" : (x <= limit ? "met" : "NOT MET") }
		END {
			# go/c: the last recorded run (docs/benchmarks.md: the H200,
			# 2026-12-06): no worse than it. go/gofloor: <= 1.03.
			today["SetCurrent"] = 1; today["Synchronize"] = 1.27; today["Launch3Args"] = 1.09; today["Launch8Args"] = 1.09
			# one iteration: 100 nop launches and a stream synchronize; Go replays a graph of them
			today["GraphReplay100/VsCLaunches"] = 0.5 # the graphs goal: Go graph replay / C 100 x cuLaunchKernel
			for (i = 1; i <= m; i++) {
				x = order[i]
				gc = median(r, x); gf = median(rf, x)
				lim = (x in today) ? today[x] : "-"
				printf "%-38s Go %9.1f  C %9.1f  Go/C %5.2f", x, median(g, x), median(c, x), gc
				if (lim != "-") printf " (goal <= %s: %s)", lim, met(gc, lim)
				# Diagnostic rows have no goal: Raw, the transition of clib alone,
				# no backend (what splits the gap between the driver package and
				# the transition); Prepared, a prepared call kept in the
				# memory of the benchmark; AA, a floor against itself (the bias
				# of the harness); Pad, the floor with its C stack moved.
				diag = ""
				if (x ~ /^Raw/) diag = "the transition alone"
				else if (x ~ /^Prepared/) diag = "the prepared call alone, no backend"
				else if (x ~ /^AA/) diag = "the floor against itself"
				else if (x ~ /^Pad/) diag = "the floor, its C stack moved"
				if (gf != "" && diag != "") printf "  Go floor %9.1f  Go/Go floor %5.3f (%s)", median(f, x), gf, diag
				else if (gf != "") printf "  Go floor %9.1f  Go/Go floor %5.3f (goal <= 1.03: %s)", median(f, x), gf, met(gf, 1.03)
				if ((x in al) && diag != "") printf "  allocs/op %s", al[x]
				else if (x in al) printf "  allocs/op %s (goal 0: %s)", al[x], al[x] == 0 ? "met" : "NOT MET"
				printf "\n"
			}
		}' "$log" | tee -a "$log"
	;;
threads)
	counts=${2:-3}
	root=$PWD
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	log=$logs/bench-threads.log
	bin=$root/.gpu/perf/drivers_cuda_cgo.test
	[ -x "$bin" ] || bin=$root/.gpu/drivers_cuda.test
	(cd drivers/cuda && FLAGSHIM_CFLOOR_LIB=$root/.gpu/libcfloor.so "$bin" -test.run '^$' \
		-test.bench 'GPUThreads' -test.benchtime 1s -test.count "$counts") | tee "$log" | grep '^Benchmark'
	echo "== medians of $counts counts: aggregate launches per second, goroutines against C threads"
	awk '
		/^BenchmarkGPUThreads\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkGPUThreads\//, "", name)
			k = ++n[name]
			for (i = 1; i <= NF; i++) {
				if ($(i+1) == "launches/s") g[name, k] = $i
				if ($(i+1) == "c-launches/s") c[name, k] = $i
				if ($(i+1) == "go/c") r[name, k] = 1 / $i
				if ($(i+1) == "gofloor-launches/s") f[name, k] = $i
				if ($(i+1) == "go/gofloor") rf[name, k] = 1 / $i
			}
			if (!(name in seen)) { seen[name] = 1; order[++m] = name }
		}
		function median(arr, name,   i, j, t, a, cnt) {
			cnt = 0; for (i = 1; i <= n[name]; i++) if ((name, i) in arr) a[++cnt] = arr[name, i]
			if (!cnt) return ""
			for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2
		}
		END {
			for (i = 1; i <= m; i++) {
				x = order[i]; q = median(r, x)
				printf "threads %-14s Go %10.0f/s  C %10.0f/s  Go/C rate %5.3f (goal >= 0.95: %s)", x, median(g, x), median(c, x), q, (q >= 0.95 ? "met" : "NOT MET")
				# the Go floor: goroutines making the calls through cgo, what Go itself allows
				if (median(f, x) != "") printf "  Go floor %10.0f/s  Go/Go floor rate %5.3f", median(f, x), median(rf, x)
				printf "\n"
			}
		}' "$log" | tee -a "$log"
	;;
run)
	rounds=${2:-5}
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	log=$logs/bench-ratio.log
	: >"$log"
	for r in $(seq "$rounds"); do
		.gpu/cfloor drivers/cuda/testdata/gpu.ptx 200000 1 | tee -a "$log"
		(cd drivers/cuda && ../../.gpu/drivers_cuda.test -test.run '^$' -test.bench 'GPU(SetCurrent|Synchronize|Launch)' \
			-test.benchmem -test.count 1) | grep '^Benchmark' | tee -a "$log"
		(cd clib && ../.gpu/clib.test -test.run '^$' -test.bench 'GPURaw' -test.benchmem -test.count 1) | grep '^Benchmark' | tee -a "$log"
	done
	echo "== medians of $rounds rounds (ns/op) and ratios" | tee -a "$log"
	awk '
		/^Benchmark/ {
			name = $1; sub(/-[0-9]+$/, "", name)
			for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") v = $i
			n[name]++; x[name, n[name]] = v
			for (i = 1; i <= NF; i++) if ($(i+1) == "allocs/op") allocs[name] = $i
		}
		function median(k,   m, i, j, t, a) {
			m = n[k]; for (i = 1; i <= m; i++) a[i] = x[k, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		function row(goal, g, c, limit,   gm, cm) {
			if (!n[g] || !n[c]) { printf "%-24s missing (%s or %s)\n", goal, g, c; return }
			gm = median(g); cm = median(c)
			printf "%-24s Go %9.1f  C %9.1f  ratio %5.2f (goal <= %s)  Go allocs/op %s\n", goal, gm, cm, gm / cm, limit, allocs[g]
		}
		END {
			row("SetCurrent", "BenchmarkGPUSetCurrent", "BenchmarkC_SetCurrent", "1")
			row("Synchronize", "BenchmarkGPUSynchronize", "BenchmarkC_Synchronize", "1.15")
			row("Synchronize vs C v2", "BenchmarkGPUSynchronize", "BenchmarkC_SyncContext", "-")
			row("Launch (3 args)", "BenchmarkGPULaunch3Args", "BenchmarkC_SetLaunch3Args", "1.05")
			row("Launch (8 args)", "BenchmarkGPULaunch8Args", "BenchmarkC_SetLaunch8Args", "1.05")
			row("Launch (3) vs bare C", "BenchmarkGPULaunch3Args", "BenchmarkC_Launch3Args", "-")
			row("Launch (8) vs bare C", "BenchmarkGPULaunch8Args", "BenchmarkC_Launch8Args", "-")
			print "-- C alone: a graph of 100 nop launches replayed, against the 100 launches (each + a stream synchronize):"
			row("C graph100 vs C launch100", "BenchmarkC_Graph100Sync", "BenchmarkC_Launch100Sync", "-")
			print "-- the transition alone (driver package, no backend), against the same C loops:"
			row("raw set+sync, one call", "BenchmarkGPURawSetThenSync", "BenchmarkC_Synchronize", "-")
			row("raw sync, locked thread", "BenchmarkGPURawSyncLocked", "BenchmarkC_SyncOnly", "-")
			row("raw set current", "BenchmarkGPURawSetCurrent", "BenchmarkC_SetCurrent", "-")
			row("raw SyscallN pair", "BenchmarkGPURawSyscallNPair", "BenchmarkC_Synchronize", "-")
		}' "$log" | tee -a "$log"
	;;
split)
	counts=${2:-5}
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	bin=$PWD/.gpu/perf/drivers_cuda_cgo.test
	[ -x "$bin" ] || bin=$PWD/.gpu/drivers_cuda.test
	(cd drivers/cuda && "$bin" -test.run '^$' -test.bench 'GPUSplit' -test.benchtime 1s -test.count "$counts") >"$logs/bench-split.log" 2>&1
	echo "== medians of $counts counts: A/B, each row's two paths in one process"
	awk '/^BenchmarkGPUSplit\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkGPUSplit\//, "", name)
			for (i = 1; i <= NF; i++) if ($(i+1) == "a/b") r[name] = r[name] " " $i
			if (!(name in seen)) { seen[name] = 1; order[++m] = name }
		}
		END {
			for (k = 1; k <= m; k++) {
				x = order[k]; n = split(substr(r[x], 2), a, " ")
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				printf "%-28s A/B %6.3f  (%d counts: %s .. %s)\n", x, n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, n, a[1], a[n]
			}
		}' "$logs/bench-split.log"
	;;
fake)
	# Here, without a GPU: the paired rows (BenchmarkGPUPaired, with the C
	# floor) and each row's sides alone (BenchmarkGPUSides: Go, Go floor)
	# against the fake libcuda, whose calls take 10-500 ns, so flagshim's
	# own cost over the Go floor shows. Set FLAGSHIM_BENCH_EVICT=KiB to
	# have the sides find the caches cold before each call, as a real
	# driver's calls leave them (docs/benchmarks.md). The fakes and the
	# test binary go to a private temporary folder, removed at the end.
	counts=${2:-5}
	d=$(mktemp -d "${TMPDIR:-/tmp}/flagshim-fake-bench.XXXXXX")
	trap 'rm -rf "$d"' EXIT
	${CC:-cc} -O2 -shared -fPIC -Idriver/drivertest/testdata -o "$d/libcuda.so.1" drivers/cuda/testdata/fake_libcuda.c -lpthread
	${CC:-cc} -O2 -Wall -shared -fPIC -DCFLOOR_LIB -o "$d/libcfloor.so" scripts/cfloor.c -ldl -lpthread
	# The fake's module image: driver/drivertest's AddImage, whose nop3 and
	# nop8 the launch rows load.
	cat >"$d/bench.img" <<'IMAGE'
fake-module
global flagshim_marker 4
function add add
function inc inc
function echo echo ptr i32 u32 i64 u64 f32 f64 ptr ptr
function nop3 nop ptr ptr u32
function nop8 nop ptr ptr u32 u32 u64 u64 f32 f64
function boom fail
IMAGE
	CGO_ENABLED=1 go test -c -tags gpu -o "$d/drivers_cuda_cgo.test" ./drivers/cuda
	chmod -R go-w "$d"
	(cd drivers/cuda && FLAGOS_LIBCUDA_PATH=$d/libcuda.so.1 FLAGSHIM_GPU_IMAGE=$d/bench.img FLAGSHIM_CFLOOR_LIB=$d/libcfloor.so \
		"$d/drivers_cuda_cgo.test" -test.run '^$' -test.bench 'GPUPaired|GPUSides' -test.benchmem -test.benchtime 300ms \
		-test.count "$counts") | grep '^Benchmark'
	;;
*)
	echo "usage: scripts/bench-ratio.sh build | run [rounds] | paired [counts] | threads [counts] | fake [counts]" >&2
	exit 2
	;;
esac
