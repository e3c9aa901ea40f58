#!/usr/bin/env bash
# Compares flagshim's visible CUDA devices with PyTorch's and nvidia-smi's on
# a machine with an NVIDIA GPU, under every CUDA_VISIBLE_DEVICES value issue
# 35 names and both CUDA_DEVICE_ORDER values. Nothing here changes a GPU's
# mode (MIG included): it only starts processes with other environments.
#
#   scripts/visible-gpu.sh FLAGSHIM_BINARY [LOG]
#
# FLAGSHIM_BINARY is the CLI built where Go is (the GPU machine has none):
#
#   CGO_ENABLED=0 go build -o .gpu/flagshim ./cmd/flagshim   # scripts/gpu-build.sh does it
#
# It needs python3 with torch and nvidia-smi. The log (default
# visible-gpu.log, or $OUT/visible-gpu.log where $OUT is set) has one line
# per check and a summary; the exit status is 1 when a check failed.
#
# For each CUDA_VISIBLE_DEVICES in: unset, 0, GPU-<uuid of GPU 0>, a unique
# prefix of it, <the GPU count> (an index that names no GPU: 1 on a one-GPU
# machine), -1, empty, 0,0, 0,1, 1,0; and each CUDA_DEVICE_ORDER in unset,
# FASTEST_FIRST, PCI_BUS_ID, it checks:
#   - torch (its own processes: torch.cuda.device_count() and each device's
#     get_device_properties(i).uuid) and `flagshim list --json` in each
#     tier (presence, exact, isolated) list the same UUIDs in the same
#     order, where the presence tier can decide (it says so otherwise: its
#     error must be "cannot be decided", never a wrong answer);
#   - each device flagshim lists has the name, PCI address and index
#     nvidia-smi gives for that UUID (nvidia-smi ignores the variable), for
#     the fields list --json carries (its record's too), its record's
#     total_memory is nvidia-smi's memory.total - memory.reserved (the
#     driver's total) and its reserved_memory memory.reserved, and its
#     record's visible_index is its position;
#   - `flagshim select cuda <uuid>` writes an environment in which torch
#     sees exactly that GPU, for every GPU.
# The GPU count is never assumed: the values that need a second GPU (0,1,
# 1,0) then test the one-GPU answer (0,1 shows GPU 0; 1,0 shows nothing).
set -uo pipefail
if [ $# -lt 1 ]; then
	sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
log=${2:-${OUT:+$OUT/}visible-gpu.log}
if [ ! -x "$bin" ]; then
	echo "visible-gpu: $bin is not an executable flagshim: build it with CGO_ENABLED=0 go build -o .gpu/flagshim ./cmd/flagshim" >&2
	exit 2
fi
command -v nvidia-smi >/dev/null || { echo "visible-gpu: no nvidia-smi here" >&2; exit 2; }
python3 - "$bin" <<'PY' 2>&1 | tee "$log"
import json, os, subprocess, sys

FLAGSHIM = sys.argv[1]
failed = 0
checked = 0


def say(ok, what):
    global failed, checked
    checked += 1
    if not ok:
        failed += 1
    print(("PASS " if ok else "FAIL ") + what, flush=True)


def norm(u):
    u = (u or "").strip().lower()
    return u[4:] if u.startswith("gpu-") else u


def base_env():
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "FLAGOS_PROBE")}
    return env


def with_vars(cvd, order):
    env = base_env()
    if cvd is not None:
        env["CUDA_VISIBLE_DEVICES"] = cvd
    if order is not None:
        env["CUDA_DEVICE_ORDER"] = order
    return env


TORCH = r"""
import json, torch
out = {"count": torch.cuda.device_count(), "uuids": []}
try:
    for i in range(out["count"]):
        out["uuids"].append(str(torch.cuda.get_device_properties(i).uuid))
except Exception as e:
    out["error"] = repr(e)
print(json.dumps(out))
"""


def torch_view(env):
    p = subprocess.run([sys.executable, "-c", TORCH], env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def flagshim_view(env, tier):
    env = dict(env, FLAGOS_PROBE=tier)
    p = subprocess.run([FLAGSHIM, "list", "--json"], env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": p.stderr.strip()}
    out = json.loads(p.stdout)
    devs = [d for d in out.get("devices", []) if d.get("type") == "cuda"]
    if not devs:
        # No device listed: the backend's reason says whether the tier
        # could not decide (list itself exits 0 and names no device).
        p = subprocess.run([FLAGSHIM, "info", "--json"], env=env, capture_output=True, text=True, timeout=300)
        try:
            for b in json.loads(p.stdout).get("backends", []):
                if b.get("type") == "cuda" and "cannot be decided" in (b.get("reason") or ""):
                    return {"error": b["reason"]}
        except ValueError:
            pass
    return {"devices": devs, "uuids": [d.get("uuid", "") for d in devs]}


def smi():
    # memory.reserved is missing on old drivers: then ask without it.
    q = "index,uuid,pci.bus_id,name,memory.total,memory.reserved"
    p = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"], capture_output=True, text=True)
    if p.returncode != 0:
        p = subprocess.run(["nvidia-smi", "--query-gpu=" + q.rsplit(",", 1)[0], "--format=csv,noheader,nounits"], capture_output=True, text=True)
    rows = []
    for line in p.stdout.strip().splitlines():
        f = [x.strip() for x in line.split(",")]
        reserved = int(f[5]) if len(f) > 5 and f[5].isdigit() else None
        rows.append({"index": int(f[0]), "uuid": f[1], "pci": f[2], "name": f[3], "mib": int(f[4]), "reserved": reserved})
    return rows


gpus = smi()
print("== nvidia-smi: %d GPU(s)" % len(gpus))
for g in gpus:
    print("   %(index)d %(uuid)s %(pci)s %(name)s %(mib)d MiB" % g)
mig = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
print("== nvidia-smi -L\n" + mig.strip())
if not gpus:
    print("FAIL no GPU listed by nvidia-smi")
    sys.exit(1)
by_uuid = {norm(g["uuid"]): g for g in gpus}
u0 = gpus[0]["uuid"]
prefix = u0[: len("GPU-") + 8]
values = [None, "0", u0, prefix, str(len(gpus)), "-1", "", "0,0", "0,1", "1,0"]

for order in (None, "FASTEST_FIRST", "PCI_BUS_ID"):
    for cvd in values:
        env = with_vars(cvd, order)
        label = "CUDA_VISIBLE_DEVICES=%s CUDA_DEVICE_ORDER=%s" % ("(unset)" if cvd is None else repr(cvd), order or "(unset)")
        t = torch_view(env)
        want = [norm(u) for u in t.get("uuids", [])]
        if "error" in t:
            say(False, "%s: torch failed: %s" % (label, t["error"]))
            continue
        say(t["count"] == len(want), "%s: torch counts %d and lists %d" % (label, t["count"], len(want)))
        for tier in ("presence", "exact", "isolated"):
            f = flagshim_view(env, tier)
            if "error" in f:
                undecided = tier == "presence" and "cannot be decided" in f["error"]
                say(undecided, "%s: %s tier: %s" % (label, tier, f["error"].replace("\n", " | ")))
                continue
            got = [norm(u) for u in f["uuids"]]
            say(got == want, "%s: %s tier %s, torch %s" % (label, tier, got, want))
            for k, d in enumerate(f["devices"]):
                g = by_uuid.get(norm(d.get("uuid")))
                if g is None and norm(d.get("uuid")).startswith("mig-"):
                    print("NOTE %s: %s tier: %s is a MIG instance: nvidia-smi --query-gpu lists GPUs only" % (label, tier, d.get("uuid")))
                    continue
                if g is None:
                    say(False, "%s: %s tier: %s is no GPU nvidia-smi lists" % (label, tier, d.get("uuid")))
                    continue
                rec = d.get("record") or {}
                if "visible_index" in rec:
                    say(rec["visible_index"] == k, "%s: %s tier: %s visible_index %s, position %d" % (label, tier, d["device"], rec["visible_index"], k))
                if "index" in rec:
                    say(rec["index"] == g["index"], "%s: %s tier: %s index %s, nvidia-smi's %d" % (label, tier, d["device"], rec["index"], g["index"]))
                d = dict(rec, **d)
                say(d.get("name") == g["name"], "%s: %s tier: %s name %r, nvidia-smi %r" % (label, tier, d["device"], d.get("name"), g["name"]))
                for key in ("pci_bus_id", "pci.bus_id"):
                    if key in d:
                        say(d[key].lower().lstrip("0") == g["pci"].lower().lstrip("0") or d[key].lower()[-7:] == g["pci"].lower()[-7:],
                            "%s: %s tier: %s PCI %s, nvidia-smi %s" % (label, tier, d["device"], d[key], g["pci"]))
                # One meaning per field (docs/identity.md, "Memory"): the
                # record's total_memory is the runtime's (the driver's),
                # nvidia-smi's memory.total less memory.reserved, in every
                # tier; its reserved_memory, where the tier learned it,
                # is memory.reserved, and the two make memory.total.
                if "total_memory" in d:
                    want_mib = g["mib"] - (g["reserved"] or 0)
                    say(abs(int(d["total_memory"]) // (1 << 20) - want_mib) <= 1,
                        "%s: %s tier: %s total_memory %s bytes, nvidia-smi memory.total - memory.reserved %d MiB (%d - %s)"
                        % (label, tier, d["device"], d["total_memory"], want_mib, g["mib"], g["reserved"]))
                unknown = rec.get("unknown") or {}
                if "reserved_memory" in rec and "reserved_memory" not in unknown and g["reserved"] is not None:
                    say(int(rec["reserved_memory"]) // (1 << 20) == g["reserved"] and
                        (int(rec["total_memory"]) + int(rec["reserved_memory"])) // (1 << 20) == g["mib"],
                        "%s: %s tier: %s reserved_memory %s bytes, total %s: nvidia-smi memory.reserved %d MiB, memory.total %d MiB"
                        % (label, tier, d["device"], rec["reserved_memory"], rec["total_memory"], g["reserved"], g["mib"]))
                elif "reserved_memory" in unknown:
                    print("NOTE %s: %s tier: %s reserved_memory unknown: %s" % (label, tier, d["device"], unknown["reserved_memory"]))

# select: an environment in which torch sees exactly that GPU.
for g in gpus:
    p = subprocess.run([FLAGSHIM, "select", "--json", "cuda", g["uuid"]], env=base_env(), capture_output=True, text=True)
    if p.returncode != 0:
        say(False, "select cuda %s: %s" % (g["uuid"], p.stderr.strip()))
        continue
    sel = json.loads(p.stdout)
    t = torch_view(dict(base_env(), **sel["env"]))
    say([norm(u) for u in t.get("uuids", [])] == [norm(g["uuid"])], "select cuda %s -> %s: torch sees %s" % (g["uuid"], sel["env"], t.get("uuids")))
    p = subprocess.run([FLAGSHIM, "select", "cuda", "0"], env=dict(base_env(), CUDA_VISIBLE_DEVICES=g["uuid"]), capture_output=True, text=True)
    say(p.stdout.strip() == "CUDA_VISIBLE_DEVICES=" + g["uuid"], "select cuda 0 under CUDA_VISIBLE_DEVICES=%s: %s%s" % (g["uuid"], p.stdout.strip(), p.stderr.strip()))

print("== visible-gpu: %d checks, %d failed" % (checked, failed))
sys.exit(1 if failed else 0)
PY
exit "${PIPESTATUS[0]}"
