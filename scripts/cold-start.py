#!/usr/bin/env python3
"""The cold start of a host, whole processes, side by side (issue 40, goal 4).

Runs each command ROUNDS times, interleaved (one of each per round, the
order reversed every other round), after one warm-up run each, and prints
min / median / max in milliseconds, where the time of the Python import
goes, and the goals:

  (import flagshim + resolve('cuda:0')) - the interpreter's own start  <= 1.2 x nvidia-smi -L
  a C host's flagshim_resolve("cuda:0") (link, load, answer, exit)     <= 1.2 x nvidia-smi -L

in the presence tier (FLAGOS_PROBE=presence, the C library's default).
Without nvidia-smi (a machine with fakes) it prints the times alone. A
"Python floor" row (python -S: _ctypes, dlopen, one flagshim_resolve, no
package) shows how far the package is over the least a Python host does;
it has no goal.

  scripts/cold-start.py [ROUNDS]     # from the repository root; ROUNDS defaults to 9

Files (scripts/perf-goals.sh build makes them): .gpu/libflagshim.so and
.gpu/python (scripts/python-gpu.sh build), .gpu/perf/cold-resolve
(scripts/cold-resolve.c linked against .gpu/libflagshim.so). $PYTHON names
the interpreter (default: this one). Extra environment (fake libraries,
FLAGOS_LIB*_PATH) passes through.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 9
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LIB = os.path.join(ROOT, ".gpu", "libflagshim.so")
PKG = os.path.join(ROOT, ".gpu", "python")
CRESOLVE = os.path.join(ROOT, ".gpu", "perf", "cold-resolve")
PY = os.environ.get("PYTHON") or sys.executable

ENV = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
# No PYTHON* variable of the caller's (PYTHONDONTWRITEBYTECODE would compile
# the package at every start, which an installed package never does: the
# warm-up run writes its bytecode, as pip's install does).
ENV.update({"FLAGOS_PROBE": "presence", "FLAGSHIM_LIBRARY": LIB, "PYTHONPATH": PKG})

# The Python floor: the least a Python host of the C library does (no
# flagshim package: no checks, no bindings but one): _ctypes, dlopen by the
# absolute path, one flagshim_resolve through a _ctypes function pointer.
# Printed beside the rest, with no goal of its own: how far the package is
# over it.
FLOOR = f"""import _ctypes
class c_int(_ctypes._SimpleCData): _type_ = "i"
class c_char(_ctypes._SimpleCData): _type_ = "c"
class Function(_ctypes.CFuncPtr): _flags_, _restype_ = _ctypes.FUNCFLAG_CDECL, c_int
resolve = Function(_ctypes.dlsym(_ctypes.dlopen({LIB!r}, _ctypes.RTLD_LOCAL), "flagshim_resolve"))
buf = (c_char * 64)()
n = resolve(b"cuda:0", buf, 64)
if n < 0 or buf.value not in (b"cuda:0", b"flagos:0"):
    raise SystemExit(f"flagshim_resolve: {{n}} {{buf.value!r}}")
"""

CMDS = [
    ("python -S -c pass", [PY, "-S", "-c", "pass"]),
    ("python -S: import flagshim", [PY, "-S", "-c", "import flagshim"]),
    ("python -S: import flagshim; resolve('cuda:0')", [PY, "-S", "-c", "import flagshim; flagshim.resolve('cuda:0')"]),
    ("C: flagshim_resolve(\"cuda:0\")", [CRESOLVE]),
    ("Python floor: _ctypes, dlopen, flagshim_resolve", [PY, "-S", "-c", FLOOR]),
]
SMI = shutil.which("nvidia-smi")
if SMI:
    CMDS.append(("nvidia-smi -L", [SMI, "-L"]))


def run(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"cold-start: {argv} failed ({p.returncode}): {p.stderr.decode()[-800:]}")
    return dt


def main():
    for path in (LIB, CRESOLVE, os.path.join(PKG, "flagshim", "__init__.py")):
        if not os.path.exists(path):
            sys.exit(f"cold-start: {path} is missing: run scripts/perf-goals.sh build first")
    times = {name: [] for name, _ in CMDS}
    for name, argv in CMDS:  # warm-up: the page cache, the library's first load
        run(argv)
    for r in range(ROUNDS):
        for name, argv in CMDS if r % 2 == 0 else CMDS[::-1]:
            times[name].append(run(argv))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"{'command':48} {'min':>8} {'median':>8} {'max':>8}   (ms, {ROUNDS} interleaved rounds, presence tier)")
    for name, _ in CMDS:
        t = times[name]
        print(f"{name:48} {min(t):8.1f} {med[name]:8.1f} {max(t):8.1f}")
    interp, imp, res, c = (med[n] for n, _ in CMDS[:4])
    floor = med[CMDS[4][0]]
    print(f"import flagshim over the interpreter: {imp - interp:.1f} ms; the first resolve over the import: {res - imp:.1f} ms")
    print(f"the Python floor over the interpreter: {floor - interp:.1f} ms; import + resolve over the floor: "
          f"{res - floor:.1f} ms (the package's checks, bindings and modules; no goal)")
    host = res - interp
    if SMI:
        smi = med["nvidia-smi -L"]
        for what, x in (("Python import+resolve - interpreter", host), ("C flagshim_resolve", c)):
            ratio = x / smi
            print(f"cold start: {what} / nvidia-smi -L ({x:.1f} / {smi:.1f} ms): {ratio:.3f} "
                  f"(goal <= 1.2: {'met' if ratio <= 1.2 else 'NOT MET'})")
    else:
        print(f"cold start: Python import+resolve - interpreter {host:.1f} ms, C flagshim_resolve {c:.1f} ms "
              "(no nvidia-smi here: no ratio)")


if __name__ == "__main__":
    main()
