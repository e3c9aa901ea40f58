#!/usr/bin/env bash
# Proves the FlagCX plugin (cmd/libflagcxshim) inside the real FlagCX on a
# machine with an NVIDIA GPU, CUDA (nvcc not needed), NCCL, g++ and make; no
# Go, no network:
#
#   scripts/flagcx-gpu.sh FLAGCX_SRC PLUGIN_SO
#
# FLAGCX_SRC is a FlagCX source snapshot with its two submodules' sources
# (third-party/googletest, third-party/json/single_include); PLUGIN_SO the
# plugin built elsewhere:
#   CGO_ENABLED=1 go build -buildmode=c-shared -o .gpu/libflagcxshim.so ./cmd/libflagcxshim
# Neither is committed (.gpu/ is ignored): the device runner carries them.
#
# Steps, each logged (under $OUT, packed into $OUT/flagcx-gpu-logs.tar.gz
# at exit, else .gpu/flagcx-logs):
#  1. builds FlagCX (make USE_NVIDIA=1 COMPILE_KERNEL=0, NCCL from /usr) in a
#     scratch copy, with a libcuda.so link for the linker;
#  2. compiles scripts/flagcx/abi_check.cc against FlagCX's own header: the
#     416-byte v1 struct and its 48 fields in flagshim's order;
#  3. builds googletest and FlagCX's single-GPU test
#     (test/unittest/device/device_adaptor_test.cpp) and runs it with the
#     built-in adaptor, then with FLAGCX_DEVICE_ADAPTOR_PLUGIN=PLUGIN_SO: the
#     same cases pass, and FLAGCX_DEBUG=INFO's log says "Loaded device
#     adaptor plugin 'flagshim:..." (without that line FlagCX fell back on
#     its built-in adaptor, and a pass would prove nothing);
#  4. a one-rank communicator and an all-reduce through NCCL
#     (scripts/flagcx/allreduce.cc), built-in then plugin;
#  5. what the plugin's direct calls spend besides the driver call
#     (scripts/flagcx/ctx_cost.c, the driver API alone): cuCtxSetCurrent of
#     the current context against cuCtxGetCurrent, which decides fast.c's
#     FX_SKIP_CURRENT, the locks, an allocation, and for scale stream
#     create+destroy and event record+synchronize; into ctx-cost.txt;
#  6. the paired benchmark (scripts/flagcx/bench.cc), built-in and plugin
#     alternately, 9 pairs, medians compared with the goals (<= 1.05x the
#     built-in's time; >= 0.98x its bandwidth), each side's best run
#     beside them. Speed is reported, not asserted: the exit status is the
#     functional checks' alone.
# The whole run takes about three minutes on an H100 (the builds and the 18
# benchmark processes most of it).
set -uo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 FLAGCX_SRC PLUGIN_SO" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
root=$PWD
src=$(cd "$1" && pwd) || exit 2
plugin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -f "$plugin" ] || { echo "no plugin at $plugin" >&2; exit 2; }
if [ -n "${OUT:-}" ]; then
	packed=$OUT
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/flagcx-gpu-logs.XXXXXX")
	trap 'tar -czf "$packed/flagcx-gpu-logs.tar.gz" -C "$OUT" . && rm -rf "$OUT"' EXIT
fi
logs=${OUT:-.gpu/flagcx-logs}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/flagcx-gpu.XXXXXX")
export PATH=$PATH:/usr/local/cuda/bin
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
step() { echo "== $* ($((SECONDS))s)"; }

step machine
date -u
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
ls -l "$plugin"

step "1. build FlagCX"
cp -a "$src" "$W/src"
mkdir -p "$W/cudalib"
libcuda=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
[ -n "$libcuda" ] && ln -sf "$libcuda" "$W/cudalib/libcuda.so"
export LIBRARY_PATH=$W/cudalib${LIBRARY_PATH:+:$LIBRARY_PATH}
if timeout 240 make -C "$W/src" -j"$(nproc)" USE_NVIDIA=1 COMPILE_KERNEL=0 BUILDDIR="$W/build" DEVICE_HOME=/usr/local/cuda \
	CCL_HOME=/usr CCL_INCLUDE=/usr/include CCL_LIB=/usr/lib/x86_64-linux-gnu CCL_LINK="-lnccl" >"$logs/flagcx-build.log" 2>&1 &&
	[ -f "$W/build/lib/libflagcx.so" ]; then
	pass "FlagCX built ($W/build/lib/libflagcx.so)"
else
	fail "FlagCX build: see flagcx-build.log"; tail -20 "$logs/flagcx-build.log"
	exit 1
fi
inc=(-I"$W/src/flagcx/include" -I"$W/src/flagcx/adaptor/include" -I"$W/src/flagcx/core/include"
	-I"$W/src/flagcx/service/include" -I"$W/src/flagcx/runner/include")
link=(-L"$W/build/lib" -Wl,-rpath,"$W/build/lib" -lflagcx -lpthread)

step "2. the v1 layout against FlagCX's header"
if g++ -std=c++17 "${inc[@]}" -o "$W/abi_check" scripts/flagcx/abi_check.cc >"$logs/abi-check.log" 2>&1; then
	pass "flagcxDeviceAdaptor_v1: 416 bytes, 48 fields in flagshim's order"
else
	fail "FlagCX's header disagrees with flagshim's declaration: see abi-check.log"; cat "$logs/abi-check.log"
fi

step "3. FlagCX's device test"
G=$W/src/third-party/googletest/googletest
if (cd "$W" && g++ -std=c++17 -O1 -pthread -I"$G/include" -I"$G" -c "$G/src/gtest-all.cc" -o gtest-all.o &&
	g++ -std=c++17 -O1 -pthread -I"$G/include" -I"$G" -c "$G/src/gtest_main.cc" -o gtest_main.o &&
	ar rcs libgtest.a gtest-all.o && ar rcs libgtest_main.a gtest_main.o) >"$logs/gtest-build.log" 2>&1 &&
	g++ -std=c++17 -Wno-unused-function "${inc[@]}" -I"$G/include" -I"$W/src/third-party/json/single_include" \
		-o "$W/device_test" "$W/src/test/unittest/device/device_adaptor_test.cpp" -Wl,--no-as-needed "${link[@]}" \
		"$W/libgtest_main.a" "$W/libgtest.a" >>"$logs/gtest-build.log" 2>&1; then
	pass "device_adaptor_test built"
	env -u FLAGCX_DEVICE_ADAPTOR_PLUGIN FLAGCX_DEBUG=INFO timeout 120 "$W/device_test" >"$logs/device-test-builtin.log" 2>&1
	rb=$?
	FLAGCX_DEVICE_ADAPTOR_PLUGIN=$plugin FLAGCX_DEBUG=INFO FLAGOS_LOG=warn timeout 120 "$W/device_test" >"$logs/device-test-plugin.log" 2>&1
	rp=$?
	nb=$(grep -c '^\[       OK \]' "$logs/device-test-builtin.log")
	np=$(grep -c '^\[       OK \]' "$logs/device-test-plugin.log")
	[ $rb -eq 0 ] && pass "built-in adaptor: $nb cases passed" || fail "built-in adaptor: exit $rb ($nb cases passed)"
	loaded=$(grep -o "Loaded device adaptor plugin '[^']*'" "$logs/device-test-plugin.log" | head -1)
	if [ -n "$loaded" ]; then pass "FlagCX says: $loaded"; else fail "FlagCX did not load the plugin (no 'Loaded device adaptor plugin' line)"; grep -i -m5 "plugin" "$logs/device-test-plugin.log"; fi
	if [ $rp -eq 0 ] && [ "$np" -eq "$nb" ] && [ -n "$loaded" ]; then pass "plugin: the same $np cases passed"; else fail "plugin: exit $rp, $np of $nb cases"; grep -E '^\[  FAILED  \]|Failure|flagshim' "$logs/device-test-plugin.log" | head -20; fi
else
	fail "device test build: see gtest-build.log"; tail -20 "$logs/gtest-build.log"
fi

step "4. a one-rank communicator, all-reduce through NCCL"
if g++ -std=c++17 -O2 "${inc[@]}" -o "$W/allreduce" scripts/flagcx/allreduce.cc "${link[@]}" >"$logs/allreduce-build.log" 2>&1; then
	env -u FLAGCX_DEVICE_ADAPTOR_PLUGIN FLAGCX_DEBUG=INFO timeout 120 "$W/allreduce" >"$logs/allreduce-builtin.log" 2>&1 &&
		pass "built-in: $(grep -h '^allreduce ok' "$logs/allreduce-builtin.log")" || fail "built-in all-reduce: see allreduce-builtin.log"
	if FLAGCX_DEVICE_ADAPTOR_PLUGIN=$plugin FLAGCX_DEBUG=INFO FLAGOS_LOG=warn timeout 120 "$W/allreduce" >"$logs/allreduce-plugin.log" 2>&1 &&
		grep -q "Loaded device adaptor plugin 'flagshim" "$logs/allreduce-plugin.log"; then
		pass "plugin: $(grep -h '^allreduce ok' "$logs/allreduce-plugin.log"), $(grep -h '^vendor' "$logs/allreduce-plugin.log")"
	else
		fail "plugin all-reduce: see allreduce-plugin.log"; grep -E 'FAIL|WARN|flagshim' "$logs/allreduce-plugin.log" | head -20
	fi
else
	fail "all-reduce build: see allreduce-build.log"; tail -20 "$logs/allreduce-build.log"
fi

step "5. what a direct call spends besides the driver (ctx_cost)"
if gcc -std=c11 -O2 -Wall -I cmd/libflagcxshim -o "$W/ctx_cost" scripts/flagcx/ctx_cost.c cmd/libflagcxshim/registry.c \
	-ldl -pthread >"$logs/ctx-cost-build.log" 2>&1; then
	if timeout 120 "$W/ctx_cost" "$libcuda" >"$logs/ctx-cost.txt" 2>&1; then
		cat "$logs/ctx-cost.txt"
		pass "ctx_cost: $(grep '^select:' "$logs/ctx-cost.txt")"
	else
		cat "$logs/ctx-cost.txt"; fail "ctx_cost: see ctx-cost.txt"
	fi
else
	fail "ctx_cost build: see ctx-cost-build.log"; tail -20 "$logs/ctx-cost-build.log"
fi

step "6. paired benchmark"
pairs=9
if g++ -std=c++17 -O2 "${inc[@]}" -o "$W/bench" scripts/flagcx/bench.cc "${link[@]}" >"$logs/bench-build.log" 2>&1; then
	: >"$logs/bench-builtin.txt"
	: >"$logs/bench-plugin.txt"
	for i in $(seq $pairs); do
		env -u FLAGCX_DEVICE_ADAPTOR_PLUGIN timeout 60 "$W/bench" >>"$logs/bench-builtin.txt" 2>>"$logs/bench.log" || fail "bench (built-in) round $i"
		FLAGCX_DEVICE_ADAPTOR_PLUGIN=$plugin timeout 60 "$W/bench" >>"$logs/bench-plugin.txt" 2>>"$logs/bench.log" || fail "bench (plugin) round $i"
	done
	# The median of the rounds of each side, then plugin / built-in; for
	# bandwidth (GB/s) the goal is >= 0.98, for times (ns) <= 1.05. Each
	# side's best round beside (the least ns, the most GB/s) and their
	# ratio, which shows how much of a median's gap is noise.
	echo "$pairs alternating pairs (built-in, plugin), medians:"
	awk '
		function median(a, n,    i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
		FNR == 1 { side = (FILENAME ~ /plugin/) ? "p" : "b" }
		{ k = side SUBSEP $1; n[k]++; v[k, n[k]] = $2; unit[$1] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
		END {
			printf "%-22s %14s %14s %7s %-17s %12s %12s %7s\n", "operation", "built-in", "plugin", "ratio", "goal", "best b-in", "best plugin", "ratio"
			for (o = 1; o <= m; o++) {
				op = order[o]
				bw = unit[op] == "GB/s"
				for (s = 0; s < 2; s++) {
					side = s ? "p" : "b"; k = side SUBSEP op; delete a
					for (i = 1; i <= n[k]; i++) a[i] = v[k, i]
					med[side] = median(a, n[k]); best[side] = bw ? a[n[k]] : a[1]
				}
				r = med["p"] / med["b"]
				if (bw) { goal = (r >= 0.98) ? "met (>= 0.98)" : "MISSED (>= 0.98)" } else { goal = (r <= 1.05) ? "met (<= 1.05)" : "MISSED (<= 1.05)" }
				printf "%-22s %11.2f %-2s %11.2f %-2s %7.3f %-17s %9.2f %-2s %9.2f %-2s %7.3f\n", op, med["b"], unit[op], med["p"], unit[op], r, goal,
					best["b"], unit[op], best["p"], unit[op], best["p"] / best["b"]
			}
		}' "$logs/bench-builtin.txt" "$logs/bench-plugin.txt" | tee "$logs/bench-summary.txt"
else
	fail "bench build: see bench-build.log"; tail -20 "$logs/bench-build.log"
fi

step "done"
rm -rf "$W"
if [ $fails -eq 0 ]; then
	echo "flagcx-gpu: every check passed"
else
	echo "flagcx-gpu: $fails check(s) failed"
fi
[ $fails -eq 0 ]
