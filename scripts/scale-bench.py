#!/usr/bin/env python3
"""Init in each tier, list and resolve against the devices and vendors a
machine has, on fakes (scripts/scale-bench.sh builds them): the CLI's
commands run by .gpu/procsplit (procsplit cli ARGS), one of each per round,
interleaved, for 8, 64, 512 and 4096 fake CUDA devices (libcuda and NVML),
and with 0, 32 and 128 more vendors registered whose libraries are nowhere
(PROCSPLIT_VENDORS). The time is procsplit's main (Init and the command, the
output written to /dev/null): the process's start and exit do not grow with
either, and leaving them out keeps their noise out of the slopes.

It prints the median ms of each command at each count and, from the
fastest run of each (the least disturbed: on a shared machine the medians
carry other processes' noise), the cost per device
(the least-squares slope) and per vendor searched, and for each command the
goal: it grows linearly, i.e. each device from 512 to 4096 costs at most
1.5x what each cost from 8 to 512 (2 us a device of slack), or the command
is flat (4096 devices cost under 15% more than 8).

  scripts/scale-bench.py [ROUNDS]     # from the repository root
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PS = os.path.join(ROOT, ".gpu", "procsplit")
FAKES = os.path.join(ROOT, ".gpu", "perf", "fakes")
DEVICES = [8, 64, 512, 4096]
VENDORS = [0, 32, 128]
LINEAR = 1.5

COMMANDS = [
    ("exact: info", [PS, "cli", "info"], {"FLAGOS_PROBE": "exact"}),
    ("presence: info", [PS, "cli", "info"], {"FLAGOS_PROBE": "presence"}),
    ("isolated: info", [PS, "cli", "info"], {"FLAGOS_PROBE": "isolated"}),
    ("default: list", [PS, "cli", "list"], {}),
    ("default: resolve cuda:0", [PS, "cli", "resolve", "cuda:0"], {}),
]
VENDOR_COMMANDS = [
    ("default: info", [PS, "cli", "info"], {}),
    ("presence: resolve cuda:0", [PS, "cli", "resolve", "cuda:0"], {"FLAGOS_PROBE": "presence"}),
]


def base_env(root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGOS_", "FAKE_")) and not k.endswith("_VISIBLE_DEVICES")}
    env.update({
        "FLAGOS_LIBCUDA_PATH": os.path.join(FAKES, "libcuda.so.1"),
        "FLAGOS_LIBNVML_PATH": os.path.join(FAKES, "libnvidia-ml.so.1"),
        # /dev and /sys read under an empty folder: the machine's own
        # device nodes (a GPU machine's /dev/nvidia*) stay out of the count.
        "FLAGOS_TEST_ROOT": root,
    })
    return env


def run(argv, env):
    """procsplit's main in ms (its MONO line: main's start and end)."""
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode()
    mono = [line.split() for line in err.splitlines() if line.startswith("MONO ")]
    if p.returncode not in (0, 6) or not mono:  # 6: list found no accelerator
        sys.exit(f"scale-bench: {argv} failed ({p.returncode}): {err[-600:]}")
    return (int(mono[-1][2]) - int(mono[-1][1])) / 1e6


def slope(xs, ys):
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    for path in (PS, os.path.join(FAKES, "libcuda.so.1"), os.path.join(FAKES, "libnvidia-ml.so.1")):
        if not os.path.exists(path):
            sys.exit(f"scale-bench: {path} is missing: run scripts/scale-bench.sh build first")
    root = tempfile.mkdtemp(prefix="scale-bench-root-")
    base = base_env(root)
    jobs = []
    for name, argv, extra in COMMANDS:
        for n in DEVICES:
            env = dict(base, **extra, FAKE_CUDA_DEVICE_COUNT=str(n), FAKE_NVML_COUNT=str(n))
            jobs.append(((name, n), argv, env))
    for name, argv, extra in VENDOR_COMMANDS:
        for k in VENDORS:
            env = dict(base, **extra, FAKE_CUDA_DEVICE_COUNT="8", FAKE_NVML_COUNT="8", PROCSPLIT_VENDORS=str(k))
            jobs.append((("vendors " + name, k), argv, env))
    times = {key: [] for key, _, _ in jobs}
    for key, argv, env in jobs:  # warm-up
        run(argv, env)
    for r in range(ROUNDS):
        for key, argv, env in jobs if r % 2 == 0 else jobs[::-1]:
            times[key].append(run(argv, env))
    med = {key: statistics.median(t) for key, t in times.items()}
    low = {key: min(t) for key, t in times.items()}

    print(f"{'command (ms, median of ' + str(ROUNDS) + ')':34}" + "".join(f"{n:>10}" for n in DEVICES) + "  devices")
    for name, _, _ in COMMANDS:
        ys = [med[(name, n)] for n in DEVICES]
        print(f"{name:34}" + "".join(f"{y:10.1f}" for y in ys))
    print(f"{'':34}" + "".join(f"{k:>10}" for k in VENDORS) + "  more vendors, 8 devices")
    for name, _, _ in VENDOR_COMMANDS:
        print(f"{'vendors ' + name:34}" + "".join(f"{med[('vendors ' + name, k)]:10.1f}" for k in VENDORS))
    print("slopes and goals from the fastest run of each:")
    for name, _, _ in COMMANDS:
        ys = [low[(name, n)] for n in DEVICES]
        per = slope(DEVICES, ys) * 1000
        lo = (ys[2] - ys[0]) / (DEVICES[2] - DEVICES[0]) * 1000
        high = (ys[3] - ys[2]) / (DEVICES[3] - DEVICES[2]) * 1000
        ratio = high / lo if lo > 0 else float("inf")
        flat = ys[3] <= 1.15 * ys[0]
        ok = flat or high <= LINEAR * max(lo, 0) + 2
        how = "flat" if flat else f"ratio {ratio:.2f}"
        print(f"devices: {name}: {per:.1f} us per device (8->512: {lo:.1f}, 512->4096: {high:.1f} us each; "
              f"{how}) (goal: linear, ratio <= {LINEAR} or flat: {'met' if ok else 'NOT MET'})")
    for name, _, _ in VENDOR_COMMANDS:
        ys = [low[("vendors " + name, k)] for k in VENDORS]
        print(f"vendors: {name}: {slope(VENDORS, ys) * 1000:.1f} us per vendor searched and not found "
              f"({ys[0]:.1f} ms with flagshim's own vendors alone)")


if __name__ == "__main__":
    main()
