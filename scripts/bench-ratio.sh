#!/usr/bin/env bash
# The hot paths of the Go backend against the C floor (scripts/cfloor.c: the
# same driver calls made from C), interleaved on one GPU machine, with the
# ratios the compute issue sets as goals (Launch <= 1.15x, Synchronize <=
# 1.3x, SetCurrent <= 3x, all with 0 allocations) and the graphs goal: one
# replay of a graph of 100 nop launches, synchronized, <= 0.5x what C pays
# for 100 cuLaunchKernel calls and a synchronize (BenchmarkGPUGraphReplay100,
# in paired).
#
#   scripts/bench-ratio.sh build       # here: .gpu/cfloor, .gpu/libcfloor.so, .gpu/drivers_cuda.test, .gpu/clib.test,
#                                      # and for probe-bench.py and proc-split.py .gpu/flagshim, .gpu/cfloor-probe, .gpu/procsplit
#   scripts/bench-ratio.sh run [N]     # there, from the repository root: N rounds (default 5)
#   scripts/bench-ratio.sh paired [N]  # there: the paired benchmark, N counts (default 5)
#
# paired is the measurement of record: drivers/cuda's BenchmarkGPUPaired
# calls the C floor's loops (libcfloor.so) from the Go process in slices
# that alternate with the Go backend's, so the driver's own drift between
# seconds cancels; run's separate processes show that drift (the C floor
# alone varies by up to 2x between rounds) and stay for the raw transition
# rows.
#
# Each round runs the C program once and the Go benchmarks once (count 1),
# so both see the machine in the same state; the medians of the rounds are
# compared. Logs go to $OUT when set (the device runner), else .gpu/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
build)
	mkdir -p .gpu
	${CC:-cc} -O2 -Wall -o .gpu/cfloor scripts/cfloor.c -ldl
	${CC:-cc} -O2 -Wall -shared -fPIC -DCFLOOR_LIB -o .gpu/libcfloor.so scripts/cfloor.c -ldl
	CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o .gpu/drivers_cuda.test ./drivers/cuda
	CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o .gpu/clib.test ./clib
	${CC:-cc} -O2 -Wall -o .gpu/cfloor-probe scripts/cfloor-probe.c -ldl -lpthread
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/flagshim ./cmd/flagshim
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/procsplit ./scripts/procsplit
	ls -l .gpu/cfloor .gpu/libcfloor.so .gpu/drivers_cuda.test .gpu/clib.test .gpu/cfloor-probe .gpu/flagshim .gpu/procsplit
	;;
paired)
	counts=${2:-5}
	root=$PWD # absolute and without "..": the benchmark checks the library's path before it opens it
	logs=${OUT:-.gpu/logs}
	mkdir -p "$logs"
	log=$logs/bench-paired.log
	(cd drivers/cuda && FLAGSHIM_CFLOOR_LIB=$root/.gpu/libcfloor.so ../../.gpu/drivers_cuda.test -test.run '^$' \
		-test.bench 'GPUPaired|GPUGraphReplay100' -test.benchmem -test.benchtime 2s -test.count "$counts") | tee "$log" | grep '^Benchmark'
	echo "== medians of $counts counts: Go ns/op, C ns/op, the median of the slices' Go/C ratios"
	awk '
		/^BenchmarkGPU(Paired|GraphReplay100)\// {
			name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkGPUPaired\//, "", name); sub(/^BenchmarkGPU/, "", name)
			for (i = 1; i <= NF; i++) {
				if ($(i+1) == "ns/op") g[name, ++n[name]] = $i
				if ($(i+1) == "c-ns/op") c[name, n[name]] = $i
				if ($(i+1) == "go/c") r[name, n[name]] = $i
			}
			if (!(name in seen)) { seen[name] = 1; order[++k] = name }
		}
		function median(arr, name,   m, i, j, t, a) {
			m = n[name]; for (i = 1; i <= m; i++) a[i] = arr[name, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		END {
			goal["SetCurrent"] = 1; goal["Synchronize"] = 1.15; goal["SynchronizeVsSetSync"] = "-"; goal["RawSetThenSync"] = "-"; goal["Launch3Args"] = 1.05; goal["Launch8Args"] = 1.05
			# one iteration: 100 nop launches and a stream synchronize; Go replays a graph of them
			goal["GraphReplay100/VsCLaunches"] = 0.5           # Go graph replay / C 100 x cuLaunchKernel
			goal["GraphReplay100/VsCReplay"] = "-"             # Go graph replay / C cuGraphLaunch of the same graph
			goal["GraphReplay100/GoLaunchesVsCLaunches"] = "-" # Go 100 x Stream.Launch / C 100 x cuLaunchKernel
			for (i = 1; i <= k; i++) {
				x = order[i]
				printf "%-38s Go %9.1f  C %9.1f  Go/C %5.2f (goal <= %s)\n", x, median(g, x), median(c, x), median(r, x), goal[x]
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
*)
	echo "usage: scripts/bench-ratio.sh build | run [rounds] | paired [counts]" >&2
	exit 2
	;;
esac
