#!/usr/bin/env python3
"""Where a whole process's exact probe spends its time: start-up, main, exit.

probe-bench.py compares whole processes; this splits each into the time
from spawn to main's first line, main itself, and from main's last line to
the reaped exit, for the C floor (cfloor-probe), a bare Go program making
the same calls through purego (procsplit raw: any Go program's floor),
flagshim info under FLAGOS_PROBE=exact (procsplit cli info) and the Go runtime
alone (procsplit noop). Each program writes "MONO <main start> <main end>"
(CLOCK_MONOTONIC ns) to stderr; this script reads the same clock around
spawn and wait. Rounds are interleaved, the order reversed every other
round; medians in milliseconds. The line also gives the threads the process
has at the end of main.

  scripts/proc-split.py [ROUNDS]       # from the repository root, .gpu/cfloor-probe and .gpu/procsplit built
  scripts/proc-split.py ROUNDS exit    # and what changes the exit: C's _exit, Go through libc's
                                       # exit, Go ending the cuInit thread, C with idle threads (ended
                                       # or not), Go with one P, Go ending its idle threads
  scripts/proc-split.py ROUNDS affinity  # and the same programs pinned to one or two CPUs
  scripts/proc-split.py ROUNDS pair      # only the C floor and exact info, one after the other (ABAB)
"""
import os
import re
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 25
PS = os.path.abspath(".gpu/procsplit")
CF = os.path.abspath(".gpu/cfloor-probe")
CMDS = [
    ("C floor (cfloor-probe)", [CF], {}),
    ("Go floor (procsplit raw)", [PS, "raw"], {}),
    ("exact: flagshim info", [PS, "cli", "info"], {"FLAGOS_PROBE": "exact"}),
    ("Go runtime alone", [PS, "noop"], {}),
]
if "exit" in sys.argv[2:]:  # how the way out changes the exit
    CMDS += [
        ("C floor, _exit", [CF], {"CFLOOR_EXIT": "_exit"}),
        ("Go floor, libc exit", [PS, "raw"], {"PROCSPLIT_EXIT": "libc"}),
        ("Go floor, cuInit thread ended", [PS, "raw-thread"], {}),
        ("exact info, libc exit", [PS, "cli", "info"], {"FLAGOS_PROBE": "exact", "PROCSPLIT_EXIT": "libc"}),
        ("C floor, 5 idle threads", [CF], {"CFLOOR_THREADS": "5"}),
        ("C floor, 5 threads ended", [CF], {"CFLOOR_THREADS": "5", "CFLOOR_JOIN": "1"}),
        ("Go floor, GOMAXPROCS=1", [PS, "raw"], {"GOMAXPROCS": "1"}),
        ("Go floor, shed before", [PS, "raw"], {"PROCSPLIT_SHED": "before"}),
        ("Go floor, shed after", [PS, "raw"], {"PROCSPLIT_SHED": "after"}),
        ("exact info, shed after", [PS, "cli", "info"], {"FLAGOS_PROBE": "exact", "PROCSPLIT_SHED": "after"}),
    ]
if "affinity" in sys.argv[2:]:  # the same on fewer CPUs ("@cpus": how many, the highest allowed)
    CMDS += [
        ("C floor, 5 idle threads", [CF], {"CFLOOR_THREADS": "5"}),
        ("C floor, 1 CPU", [CF], {"@cpus": "1"}),
        ("C floor, 5 idle threads, 1 CPU", [CF], {"CFLOOR_THREADS": "5", "@cpus": "1"}),
        ("Go floor, 1 CPU", [PS, "raw"], {"@cpus": "1"}),
        ("Go floor, 2 CPUs", [PS, "raw"], {"@cpus": "2"}),
        ("exact info, 1 CPU", [PS, "cli", "info"], {"FLAGOS_PROBE": "exact", "@cpus": "1"}),
    ]
PAIR = "pair" in sys.argv[2:]  # only the C floor and exact info, one after the other (ABAB)
if PAIR:
    CMDS = CMDS[0:1] + CMDS[2:3]
ALLOWED = sorted(os.sched_getaffinity(0), reverse=True)


def pinner(extra):
    n = int(extra.get("@cpus", 0))
    return (lambda: os.sched_setaffinity(0, ALLOWED[:n])) if n else None


def main():
    parts = {name: ([], [], []) for name, _, _ in CMDS}
    threads = {name: set() for name, _, _ in CMDS}
    for r in range(ROUNDS):
        for name, argv, extra in CMDS if r % 2 == 0 or PAIR else CMDS[::-1]:
            env = dict(os.environ)
            env.update({k: v for k, v in extra.items() if not k.startswith("@")})
            spawn = time.monotonic_ns()
            p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=pinner(extra))
            reaped = time.monotonic_ns()
            m = re.search(r"^MONO (\d+) (\d+) (-?\d+)$", p.stderr, re.M)
            if p.returncode != 0 or not m:
                sys.exit(f"{name}: exit {p.returncode}, no MONO line: {p.stderr.strip()[:300]}")
            begin, end = int(m.group(1)), int(m.group(2))
            threads[name].add(int(m.group(3)))
            for acc, v in zip(parts[name], (begin - spawn, end - begin, reaped - end)):
                acc.append(v / 1e6)
    print(f"{'':32s} {'start':>7s} {'main':>7s} {'exit':>7s} {'total':>7s} threads   (ms, medians of {ROUNDS} interleaved rounds)")
    med = {}
    for name, _, _ in CMDS:
        s, m, e = (statistics.median(x) for x in parts[name])
        med[name] = (s, m, e, statistics.median([a + b + c for a, b, c in zip(*parts[name])]))
        seen = "/".join(str(t) for t in sorted(threads[name]))
        print(f"{name:32s} {s:7.1f} {m:7.1f} {e:7.1f} {med[name][3]:7.1f} {seen:>7s}")
    if PAIR:
        c, f = med[CMDS[0][0]], med[CMDS[1][0]]
        print(f"\nflagshim info / C floor, whole process: {f[3] / c[3]:.3f} (goal <= 1.05); start +{f[0] - c[0]:.1f}, "
              f"main +{f[1] - c[1]:.1f}, exit +{f[2] - c[2]:.1f} ms")
        return
    c, g, f = med[CMDS[0][0]], med[CMDS[1][0]], med[CMDS[2][0]]
    print()
    print(f"flagshim info / C floor, whole process: {f[3] / c[3]:.3f} (goal <= 1.05)")
    print(f"flagshim info / C floor, main only:     {f[1] / c[1]:.3f}")
    print(f"Go floor / C floor, whole process:      {g[3] / c[3]:.3f} (what any Go program pays)")
    print(f"flagshim info / Go floor, whole process: {f[3] / g[3]:.3f}")


if __name__ == "__main__":
    main()
