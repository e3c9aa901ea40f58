#!/usr/bin/env bash
# Issue 35's proofs on the real GPU: which device is it, the same answer from
# flagshim, nvidia-smi and torch, in every tier.
#
#   scripts/identity-gpu.sh build        # here (Go): .gpu/flagshim, .gpu/drivers_cuda.test
#                                        # (and, for the Python step, scripts/python-gpu.sh build)
#   scripts/identity-gpu.sh run [ROUNDS] # there, from the repository root (default 21 rounds)
#
# run does, and prints PASS or FAIL for each:
#   1. `flagshim query --query-gpu=index,uuid,name,pci.bus_id,memory.total,
#      memory.reserved,driver_version,compute_cap --format=csv` against
#      nvidia-smi with the same arguments, field for field (header included),
#      in the CLI's default tier and with --probe presence, exact and isolated
#      (memory.total is nvidia-smi's in every tier: the record's total, the
#      driver's, and NVML's reserve; docs/identity.md, "Memory");
#   2. the same with --format=csv,noheader,nounits; then memory.used and
#      memory.free beside nvidia-smi's, reported, not failed (they change
#      with what runs on the GPU between the two commands);
#   3. the exact and presence records of each GPU, field for field, and
#      against nvidia-smi (drivers/cuda's TestGPURecordTiers);
#   4. where .gpu/libflagshim.so and $PYTHON (default /opt/torch/.venv/bin/python)
#      with torch are there: flagshim.get_device_properties(i) and
#      mem_get_info(i) against torch.cuda's, in the exact and presence tiers
#      (total_memory and mem_get_info's total are torch's, the driver's, in
#      both), and the record's total_memory + reserved_memory against
#      nvidia-smi's memory.total where the tier knows the reserve;
#   5. the timings, interleaved ROUNDS times: flagshim query (default tier)
#      against nvidia-smi with the same arguments (goal <= 1.2x) and flagshim
#      list against nvidia-smi -L (goal <= 1.2x); medians in ms.
# With OUT set (the device runner), the output is also written to
# $OUT/identity-gpu.log. Exit status 1 when a check failed (a timing over its
# goal is reported, not failed: docs/benchmarks.md records them).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
case ${1:-} in
build)
	mkdir -p .gpu
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .gpu/flagshim ./cmd/flagshim || exit 1
	CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o .gpu/drivers_cuda.test ./drivers/cuda || exit 1
	echo drivers/cuda >.gpu/drivers_cuda.pkg
	ls -l .gpu/flagshim .gpu/drivers_cuda.test
	exit 0
	;;
run) ;;
*)
	echo "usage: scripts/identity-gpu.sh build | run [rounds]" >&2
	exit 2
	;;
esac
rounds=${2:-21}
if [ -n "${OUT:-}" ]; then
	exec > >(tee "$OUT/identity-gpu.log") 2>&1
fi
fs=$root/.gpu/flagshim
[ -x "$fs" ] || { echo "identity-gpu: no .gpu/flagshim: run scripts/identity-gpu.sh build first" >&2; exit 1; }
command -v nvidia-smi >/dev/null || { echo "identity-gpu: no nvidia-smi" >&2; exit 1; }
fields=index,uuid,name,pci.bus_id,memory.total,memory.reserved,driver_version,compute_cap
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

echo "== machine"
nvidia-smi -L
nvidia-smi --query-gpu=$fields --format=csv

# compare LABEL WANT GOT: field for field, one line per difference.
compare() {
	local label=$1 want=$2 got=$3
	if [ "$want" = "$got" ]; then
		pass "$label: $(echo "$got" | wc -l) lines equal"
		return
	fi
	fail "$label"
	paste -d'\n' <(echo "$want" | sed 's/^/  nvidia-smi: /') <(echo "$got" | sed 's/^/  flagshim:   /')
	python3 - "$want" "$got" <<'EOF'
import sys
want, got = [[l.split(", ") for l in s.splitlines()] for s in sys.argv[1:3]]
for i, (w, g) in enumerate(zip(want, got)):
    for j, (a, b) in enumerate(zip(w, g)):
        if a != b:
            print(f"  line {i} field {j} ({want[0][j]}): nvidia-smi {a!r}, flagshim {b!r}")
if len(want) != len(got):
    print(f"  {len(want)} lines from nvidia-smi, {len(got)} from flagshim")
EOF
}

echo "== 1, 2. flagshim query against nvidia-smi"
for format in csv csv,noheader,nounits; do
	want=$(nvidia-smi --query-gpu=$fields --format=$format)
	for probe in default presence exact isolated; do
		args=(query --query-gpu=$fields --format=$format)
		[ $probe = default ] || args+=(--probe $probe)
		got=$("$fs" "${args[@]}" 2>/tmp/identity-gpu.err)
		rc=$?
		[ $rc -eq 0 ] || { fail "query ($probe, $format) exited $rc: $(cat /tmp/identity-gpu.err)"; continue; }
		compare "query ($probe, $format)" "$want" "$got"
	done
done
for probe in presence exact isolated; do
	echo "memory.used, memory.free ($probe): nvidia-smi $(nvidia-smi --query-gpu=memory.used,memory.free --format=csv,noheader | tr '\n' ' ')," \
		"flagshim $("$fs" query --probe $probe --query-gpu=memory.used,memory.free --format=csv,noheader 2>&1 | tr '\n' ' ')"
done
"$fs" query --query-gpu=index,visible_index,device,vendor,type,numa_node,local_cpus,tier,driver_api_version,multiprocessors --format=csv
"$fs" list --json --accelerators-only | head -60

echo "== 3. exact and presence records (TestGPURecordTiers)"
if [ -x .gpu/drivers_cuda.test ]; then
	FLAGSHIM_NVSMI=$(nvidia-smi --query-gpu=uuid,memory.total,memory.reserved,pci.bus_id,name --format=csv,noheader,nounits 2>/dev/null | sed 's/, /|/g') ||
		FLAGSHIM_NVSMI=$(nvidia-smi --query-gpu=uuid,memory.total,pci.bus_id,name --format=csv,noheader,nounits | sed 's/, /|/; s/, /||/; s/, /|/g')
	FLAGSHIM_NVSMI_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
	export FLAGSHIM_NVSMI FLAGSHIM_NVSMI_DRIVER
	if (cd drivers/cuda && "$root/.gpu/drivers_cuda.test" -test.run '^TestGPURecordTiers$' -test.v -test.count=1); then
		pass "TestGPURecordTiers"
	else
		fail "TestGPURecordTiers"
	fi
else
	fail "no .gpu/drivers_cuda.test: run scripts/identity-gpu.sh build"
fi

echo "== 4. Python against torch.cuda"
py=${PYTHON:-/opt/torch/.venv/bin/python}
if [ -f .gpu/libflagshim.so ] && [ -d .gpu/python ] && "$py" -c 'import torch' 2>/dev/null; then
	chmod go-w .gpu .gpu/libflagshim.so
	smi_total=$(nvidia-smi --query-gpu=uuid,memory.total --format=csv,noheader,nounits)
	for probe in exact presence; do
		out=$(FLAGOS_PROBE=$probe FLAGSHIM_LIBRARY=$root/.gpu/libflagshim.so PYTHONPATH=$root/.gpu/python SMI_TOTAL="$smi_total" "$py" - <<'EOF'
import os, flagshim, torch
bad = []
smi = dict((u.strip(), int(m)) for u, m in (l.split(",") for l in os.environ["SMI_TOTAL"].splitlines() if "," in l))
for i in range(torch.cuda.device_count()):
    p, t = flagshim.get_device_properties(i), torch.cuda.get_device_properties(i)
    print(f"cuda:{i}: flagshim {p}")
    reserved = p.record.get("reserved_memory")
    if "reserved_memory" in p.unknown:
        print(f"  reserved_memory: unknown in this tier ({p.unknown['reserved_memory']})")
    elif reserved is not None and p.uuid in smi and p.total_memory is not None and (p.total_memory + reserved) >> 20 != smi[p.uuid]:
        bad.append(f"cuda:{i} total_memory + reserved_memory: {(p.total_memory + reserved) >> 20} MiB, nvidia-smi's memory.total {smi[p.uuid]} MiB")
    for k, want in (("name", t.name), ("total_memory", t.total_memory), ("major", t.major), ("minor", t.minor),
                    ("multi_processor_count", t.multi_processor_count), ("uuid", "GPU-" + str(t.uuid))):
        got = getattr(p, k)
        if got is None and k in p.unknown or k == "multi_processor_count" and got is None:
            print(f"  {k}: unknown in this tier ({p.unknown.get(k) or p.unknown.get('multiprocessors')}); torch {want!r}")
        elif got != want:
            bad.append(f"cuda:{i} {k}: flagshim {got!r}, torch {want!r}")
    if flagshim.get_device_name(i) != torch.cuda.get_device_name(i):
        bad.append(f"cuda:{i} name")
    if flagshim.get_device_capability(i) != torch.cuda.get_device_capability(i):
        bad.append(f"cuda:{i} capability")
    free, total = flagshim.mem_get_info(i)
    tfree, ttotal = torch.cuda.mem_get_info(i)
    print(f"  mem_get_info: flagshim ({free}, {total}), torch ({tfree}, {ttotal})")
    if total != ttotal:
        bad.append(f"cuda:{i} mem_get_info total: {total} != {ttotal}")
print("BAD: " + "; ".join(bad) if bad else "OK")
EOF
		)
		echo "$out"
		case $out in *$'\n'OK | OK) pass "python ($probe)" ;; *) fail "python ($probe)" ;; esac
	done
else
	echo "skipped: needs .gpu/libflagshim.so and .gpu/python (scripts/python-gpu.sh build) and torch in $py"
fi

echo "== 5. timings ($rounds rounds, interleaved)"
python3 - "$fs" "$rounds" "$fields" <<'EOF'
import statistics, subprocess, sys, time
fs, rounds, fields = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pairs = [
    ("query", ["nvidia-smi", f"--query-gpu={fields}", "--format=csv"], [fs, "query", f"--query-gpu={fields}", "--format=csv"]),
    ("list", ["nvidia-smi", "-L"], [fs, "list"]),
]
for name, smi, ours in pairs:
    t = {"smi": [], "flagshim": []}
    for r in range(rounds):
        order = [("smi", smi), ("flagshim", ours)]
        if r % 2:
            order.reverse()
        for k, cmd in order:
            s = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            t[k].append((time.perf_counter() - s) * 1e3)
    a, b = statistics.median(t["smi"]), statistics.median(t["flagshim"])
    print(f"{name}: nvidia-smi median {a:.1f} ms (min {min(t['smi']):.1f}), flagshim median {b:.1f} ms (min {min(t['flagshim']):.1f}): "
          f"ratio {b / a:.2f}x, goal <= 1.2x {'met' if b / a <= 1.2 else 'NOT met'}")
EOF

[ $failed -eq 0 ] && echo "identity-gpu: every check passed" || echo "identity-gpu: some check FAILED"
exit $failed
