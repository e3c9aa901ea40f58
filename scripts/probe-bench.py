#!/usr/bin/env python3
"""Whole-process cost of answering "which GPUs are here", side by side.

Runs each command ROUNDS times, interleaved (one of each per round, so every
command sees the machine in the same state; the order is reversed every
other round, so no command always follows the same one: how long cuInit
takes depends on what used the GPU just before), and prints min / median /
max in milliseconds and the ratios the presence-tier issue sets as goals:

  flagshim list (the CLI's default)       <= 1.2 x nvidia-smi -L
  flagshim info (the default: isolated)   <= 1.15 x the C floor (dlopen + cuInit + enumerate)
  flagshim resolve cuda:0 (default)       <= 1.15 x the C floor
  FLAGOS_PROBE=presence flagshim list     <= 1.2 x nvidia-smi -L
  FLAGOS_PROBE=presence flagshim resolve  <= 1.2 x nvidia-smi -L
  FLAGOS_PROBE=exact flagshim info        <= 1.05 x the C floor
  and the isolated tier's cost against the exact one in-process.

  scripts/probe-bench.py [ROUNDS]        # from the repository root, .gpu/flagshim and .gpu/cfloor-probe built
  scripts/probe-bench.py ROUNDS exact    # only the C floor and exact info, one after the other (ABAB),
                                         # so each always follows the other: the exact goal alone
"""
import os
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
FS = os.path.abspath(".gpu/flagshim")
CMDS = [
    ("nvidia-smi -L", ["nvidia-smi", "-L"], {}),
    ("default: flagshim list", [FS, "list"], {}),
    ("default: flagshim info", [FS, "info"], {}),
    ("default: flagshim resolve cuda:0", [FS, "resolve", "cuda:0"], {}),
    ("C floor (dlopen+cuInit+enumerate)", [os.path.abspath(".gpu/cfloor-probe")], {}),
    ("presence: flagshim list", [FS, "list"], {"FLAGOS_PROBE": "presence"}),
    ("presence: flagshim resolve cuda:0", [FS, "resolve", "cuda:0"], {"FLAGOS_PROBE": "presence"}),
    ("exact: flagshim info", [FS, "info"], {"FLAGOS_PROBE": "exact"}),
    ("exact: flagshim resolve cuda:0", [FS, "resolve", "cuda:0"], {"FLAGOS_PROBE": "exact"}),
    ("isolated: flagshim info", [FS, "info"], {"FLAGOS_PROBE": "isolated"}),
    ("isolated: flagshim resolve cuda:0", [FS, "resolve", "cuda:0"], {"FLAGOS_PROBE": "isolated"}),
]


EXACT = "exact" in sys.argv[2:]
if EXACT:
    CMDS = [c for c in CMDS if c[0] in ("C floor (dlopen+cuInit+enumerate)", "exact: flagshim info")]


def run(argv, extra):
    env = {k: v for k, v in os.environ.items() if k != "FLAGOS_PROBE"}  # the defaults are the CLI's own
    env.update(extra)
    t = time.perf_counter()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"{argv} failed ({p.returncode}): {p.stderr.decode()[-500:]}")
    return dt


def main():
    times = {name: [] for name, _, _ in CMDS}
    for name, argv, extra in CMDS:  # one warm-up run each
        run(argv, extra)
        out = subprocess.run(argv, env={**os.environ, **extra}, stdout=subprocess.PIPE).stdout.decode().strip()
        print(f"# {name}: {out.splitlines()[0] if out else ''}")
    for r in range(ROUNDS):
        for name, argv, extra in CMDS if r % 2 == 0 or EXACT else CMDS[::-1]:
            times[name].append(run(argv, extra))
    med = {}
    print(f"\n{'command':40} {'min':>8} {'median':>8} {'max':>8}   (ms, {ROUNDS} interleaved rounds)")
    for name, _, _ in CMDS:
        t = times[name]
        med[name] = statistics.median(t)
        print(f"{name:40} {min(t):8.1f} {med[name]:8.1f} {max(t):8.1f}")

    def ratio(a, b, goal):
        print(f"{a} / {b}: {med[a] / med[b]:.3f} (goal <= {goal})")

    print()
    if EXACT:
        ratio("exact: flagshim info", "C floor (dlopen+cuInit+enumerate)", 1.05)
        pairs = sorted(a / b for a, b in zip(times["exact: flagshim info"], times["C floor (dlopen+cuInit+enumerate)"]))
        print(f"the {len(pairs)} pairs' ratios: median {statistics.median(pairs):.3f}, quartiles "
              f"{pairs[len(pairs) // 4]:.3f} / {pairs[3 * len(pairs) // 4]:.3f}")
        return
    ratio("default: flagshim list", "nvidia-smi -L", 1.2)
    ratio("default: flagshim info", "C floor (dlopen+cuInit+enumerate)", 1.15)
    ratio("default: flagshim resolve cuda:0", "C floor (dlopen+cuInit+enumerate)", 1.15)
    ratio("presence: flagshim list", "nvidia-smi -L", 1.2)
    ratio("presence: flagshim resolve cuda:0", "nvidia-smi -L", 1.2)
    ratio("exact: flagshim info", "C floor (dlopen+cuInit+enumerate)", 1.05)
    ratio("exact: flagshim resolve cuda:0", "C floor (dlopen+cuInit+enumerate)", 1.05)
    ratio("isolated: flagshim info", "exact: flagshim info", "-")
    fw = {name: statistics.median(t[0::2]) for name, t in times.items()}
    rv = {name: statistics.median(t[1::2]) for name, t in times.items() if len(t) > 1}
    if rv:
        a, b = "exact: flagshim info", "C floor (dlopen+cuInit+enumerate)"
        print(f"{a} / {b}, forward rounds only: {fw[a] / fw[b]:.2f}, reversed rounds only: {rv[a] / rv[b]:.2f}")
    print(f"isolation costs {med['isolated: flagshim info'] - med['exact: flagshim info']:.1f} ms per process (median)")


if __name__ == "__main__":
    main()
