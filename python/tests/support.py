"""What the flagshim Python tests share: the library under test, the fake
vendor libraries of the Go repository compiled with the C compiler, and
scenarios run each in a Python process of its own (flagshim's Init runs
once per process and reads the environment then).

The library is $FLAGSHIM_LIBRARY (scripts/python-test.sh builds it), else it
is built here with Go into a private temporary folder; where neither can be,
the tests that need it skip, saying why.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from typing import Dict, List, Optional

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(TESTS)  # python/: the package's parent
ROOT = os.path.dirname(PYTHON_DIR)  # the Go module
STUBS = os.path.join(TESTS, "stubs")

# Variables a scenario never inherits: flagshim's settings, the fakes' knobs,
# the visible-device lists and the Python paths of the running tests.
_SCRUB_PREFIXES = ("FLAGOS_", "FAKE_", "FLAGSHIM_")
_SCRUB = {
    "CUDA_VISIBLE_DEVICES",
    "MUSA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    "ASCEND_VISIBLE_DEVICES",
    "MLU_VISIBLE_DEVICES",
    "TOPS_VISIBLE_DEVICES",
    "MACA_VISIBLE_DEVICES",
    "XPU_VISIBLE_DEVICES",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
}

# A scenario's timeout: a hang (a fork into a half-started Go runtime, say)
# fails the test instead of stopping the run.
TIMEOUT = 120


def private_dir(prefix: str = "flagshim-test-") -> str:
    """A new folder only this user can enter (mkdtemp's 0700), removed at
    exit: the loader refuses libraries in folders others may write."""
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, 0o700)
    atexit.register(shutil.rmtree, d, True)
    return d


def cc() -> Optional[str]:
    """The C compiler: $CC, else gcc, else cc; None when none is installed."""
    for name in (os.environ.get("CC", ""), "gcc", "cc"):
        if name and shutil.which(name.split()[0]):
            return name
    return None


@functools.lru_cache(maxsize=None)
def _library() -> tuple:
    """(path, why not): the libflagshim.so under test."""
    env = os.environ.get("FLAGSHIM_LIBRARY", "")
    if env:
        if not os.path.isabs(env) or not os.path.isfile(env):
            return None, f"FLAGSHIM_LIBRARY={env!r} is not an absolute path of a file"
        return env, ""
    go = os.environ.get("FLAGSHIM_GO", "") or shutil.which("go")
    if not go:
        return None, "FLAGSHIM_LIBRARY is unset and there is no go command to build libflagshim.so with"
    if not cc():
        return None, "FLAGSHIM_LIBRARY is unset and -buildmode=c-shared needs cgo: no C compiler (gcc, cc, $CC)"
    out = os.path.join(private_dir("flagshim-lib-"), "libflagshim.so")
    r = subprocess.run(
        [go, "build", "-tags", "netgo", "-buildmode=c-shared", "-o", out, "./cmd/libflagshim"],
        cwd=ROOT,
        env=dict(os.environ, CGO_ENABLED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"go build -buildmode=c-shared ./cmd/libflagshim failed:\n{r.stdout}")
    return out, ""


def library(test: unittest.TestCase) -> str:
    """The path of the library under test, or skip test saying why."""
    path, why = _library()
    if not path:
        test.skipTest(why)
    return path


# The fake libraries: name -> (source relative to ROOT, soname, extra flags),
# as the Go tests build them (each vendor's testdata/fake_<library>.c; the
# kits' shared C in the -I folders below).
_FAKES = {
    "musa": ("drivers/musa/testdata/fake_libmusa.c", "libmusa.so.1", []),
    "cuda": ("drivers/cuda/testdata/fake_libcuda.c", "libcuda.so.1", []),
    "mtml": ("drivers/musa/testdata/fake_mtml.c", "libmtml.so", []),
    "nvml": ("drivers/cuda/testdata/fake_nvml.c", "libnvidia-ml.so.1", []),
}


# The fakes' build cache, shared across runs (the Go tests' fixtures keep
# theirs in the same folder, under other keys): $TMPDIR/flagshim-test-fakes-
# <euid>, used only while it is a folder of this user's that no one else may
# enter, since the tests load what it holds. FLAGSHIM_TEST_NO_CACHE turns it
# off. A key names a build: the compiler's version, the command, every
# source and every header or source beside them or in an -I folder.
_cache_state: Dict[str, str] = {}


def _cache_dir() -> str:
    if "dir" in _cache_state:
        return _cache_state["dir"]
    _cache_state["dir"] = ""
    compiler = cc()
    if os.environ.get("FLAGSHIM_TEST_NO_CACHE") or not compiler:
        return ""
    d = os.path.join(tempfile.gettempdir(), f"flagshim-test-fakes-{os.geteuid()}")
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return ""
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return ""  # not ours alone: never load what it holds
    try:
        version = subprocess.run(compiler.split() + ["--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    _cache_state["dir"], _cache_state["version"] = d, version.decode(errors="replace")
    return d


def _cache_key(cmd: List[str], srcs: List[str]) -> str:
    """The key of the build cmd of srcs (cmd names the output, the sources
    and the fakes' folder by placeholders, so that a build in another
    run's temporary folder has the same key); "" when the cache is off or
    a file cannot be read."""
    if not _cache_dir():
        return ""
    h = hashlib.sha256(("python\0" + _cache_state["version"] + "\0").encode())
    dirs = {os.path.dirname(s) for s in srcs} | {a[2:] for a in cmd if a.startswith("-I")}
    try:
        for a in cmd:
            h.update(a.encode() + b"\0")
        for path in srcs + [os.path.join(d, n) for d in sorted(dirs) for n in sorted(os.listdir(d))
                            if n.endswith((".c", ".h"))]:
            with open(path, "rb") as f:
                h.update(os.path.basename(path).encode() + b"\0" + f.read() + b"\0")
    except OSError:
        return ""
    return "py-" + h.hexdigest()


def _from_cache(key: str, out: str) -> bool:
    try:
        shutil.copyfile(os.path.join(_cache_dir(), key), out)
    except OSError:
        return False
    os.chmod(out, 0o755)
    return True


def _to_cache(key: str, out: str) -> None:
    d = _cache_dir()
    try:
        fd, tmp = tempfile.mkstemp(prefix="build-", dir=d)
    except OSError:
        return  # the cache is best effort: the build stands
    os.close(fd)
    try:
        shutil.copyfile(out, tmp)
        os.replace(tmp, os.path.join(d, key))
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)


class Fakes:
    """The Go repository's fake vendor libraries, built once per test run
    into a private folder: copied from the build cache where an earlier run
    compiled the same sources with the same command, else compiled."""

    _dir: Optional[str] = None
    _built: Dict[str, str] = {}

    @classmethod
    def dir(cls) -> str:
        if cls._dir is None:
            cls._dir = private_dir("flagshim-fakes-")
        return cls._dir

    @classmethod
    def _compile(cls, test: unittest.TestCase, out: str, srcs: List[str], flags: List[str]) -> None:
        compiler = cc()
        if not compiler:
            test.skipTest("no C compiler (gcc, cc or $CC) to build the fake vendor libraries")
        missing = [s for s in srcs if not os.path.isfile(s)]
        if missing:
            test.skipTest(f"the fakes' sources are not here (not run from a flagshim checkout): {missing}")
        cmd = compiler.split() + ["-shared", "-fPIC", "-O2", "-Wall", "-o", out] + flags + srcs
        named = {out: "$OUT", **{src: f"$SRC{i}" for i, src in enumerate(srcs)}}
        key = _cache_key([named.get(a, a).replace(cls.dir(), "$FAKES") for a in cmd], srcs)
        if key and _from_cache(key, out):
            return
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stdout}")
        os.chmod(out, 0o755)
        if key:
            _to_cache(key, out)

    @classmethod
    def build(cls, test: unittest.TestCase, name: str) -> str:
        """The path of fake name ("musa", "cuda", "mtml", "nvml",
        "nvshmem"), built on first use; skips test where no C compiler is
        installed."""
        if name in cls._built:
            return cls._built[name]
        d = cls.dir()
        if name == "nvshmem":
            # The fake NVSHMEM links the fake libcuda (it checks its callers
            # made a context current), as plugins/nvshmem's tests build it.
            cls.build(test, "cuda")
            out = os.path.join(d, "libnvshmem_host.so.3")
            # $ORIGIN: the fake libcuda beside it, wherever the folder is
            # (a build may come from the cache of an earlier run).
            cls._compile(
                test,
                out,
                [os.path.join(ROOT, "plugins/nvshmem/testdata/fake_nvshmem.c")],
                ["-Wl,-soname,libnvshmem_host.so.3", "-Wl,--no-as-needed", f"-L{d}", "-l:libcuda.so.1", "-Wl,-rpath,$ORIGIN"],
            )
        else:
            src, soname, flags = _FAKES[name]
            out = os.path.join(d, soname)
            includes = [f"-I{os.path.join(ROOT, d)}" for d in ("driver/drivertest/testdata", "tier/presence/presencetest/testdata")]
            cls._compile(test, out, [os.path.join(ROOT, src)], [f"-Wl,-soname,{soname}"] + includes + flags)
        cls._built[name] = out
        return out


def nowhere() -> str:
    """A private empty folder: FLAGOS_LIB*_PATH=<nowhere>/lib... names no
    library."""
    return private_dir("flagshim-none-")


# Every built-in vendor's driver and management library overrides, with
# their file names: a scenario points those it does not fake at nothing, so
# that the host's own libraries never answer.
_LIBRARIES = {
    "FLAGOS_LIBCUDA_PATH": "libcuda.so.1",
    "FLAGOS_LIBMUSA_PATH": "libmusa.so.1",
    "FLAGOS_LIBHIP_PATH": "libamdhip64.so.6",
    "FLAGOS_LIBCNDRV_PATH": "libcndrv.so",
    "FLAGOS_LIBASCENDCL_PATH": "libascendcl.so",
    "FLAGOS_LIBMCRUNTIME_PATH": "libmcruntime.so",
    "FLAGOS_LIBTOPSRT_PATH": "libtopsrt.so",
    "FLAGOS_LIBXPURT_PATH": "libxpurt.so.1",
    "FLAGOS_LIBNVML_PATH": "libnvidia-ml.so.1",
    "FLAGOS_LIBMTML_PATH": "libmtml.so",
    "FLAGOS_LIBCNDEV_PATH": "libcndev.so",
    "FLAGOS_LIBDCMI_PATH": "libdcmi.so",
    "FLAGOS_LIBMXSML_PATH": "libmxsml.so",
    "FLAGOS_LIBEFML_PATH": "libefml.so",
    "FLAGOS_LIBXPUML_PATH": "libxpuml.so.1",
}


def no_libraries() -> Dict[str, str]:
    """Every vendor library override pointed at a private empty folder."""
    none = nowhere()
    return {k: os.path.join(none, f) for k, f in _LIBRARIES.items()}


def nvidia_sysfs(bus_ids=("0000:18:00.0", "0000:19:00.0")) -> str:
    """A FLAGOS_TEST_ROOT whose sysfs says the PCI devices at bus_ids (the
    fake libcuda's) are NVIDIA's (vendor 0x10de), display class: the fact
    that names whose runtime answers CUDA's API."""
    root = private_dir("flagshim-root-")
    for bus in bus_ids:
        d = os.path.join(root, "sys", "bus", "pci", "devices", bus)
        os.makedirs(d)
        for name, value in (("vendor", "0x10de"), ("class", "0x030200")):
            with open(os.path.join(d, name), "w") as f:
                f.write(value + "\n")
    return root


def musa_machine(test: unittest.TestCase, devices: int = 2) -> Dict[str, str]:
    """The environment of a MUSA-only machine at the presence tier (the C
    library's default): the fake libmusa and MTML with devices devices; no
    CUDA, NVML or HIP library."""
    return {
        **no_libraries(),
        "FLAGOS_LIBMUSA_PATH": Fakes.build(test, "musa"),
        "FLAGOS_LIBMTML_PATH": Fakes.build(test, "mtml"),
        "FAKE_MTML_COUNT": str(devices),
        "FAKE_DEVICE_COUNT": str(devices),
    }


def cuda_machine(test: unittest.TestCase) -> Dict[str, str]:
    """A CUDA machine at the exact tier (the fake libcuda initialized in the
    process, as the Go module tests do: the fakes have no device nodes for
    the presence tier to find), with the fake NVSHMEM built, and a sysfs
    (FLAGOS_TEST_ROOT) that says its devices are NVIDIA's."""
    return {
        **no_libraries(),
        "FLAGOS_PROBE": "exact",
        "FLAGOS_TEST_ROOT": nvidia_sysfs(),
        "FLAGOS_LIBCUDA_PATH": Fakes.build(test, "cuda"),
        "FLAGOS_LIBNVSHMEM_PATH": Fakes.build(test, "nvshmem"),
    }


@functools.lru_cache(maxsize=None)
def _neutral_dir() -> str:
    # The scenarios' working folder, which `python -c` puts first on
    # sys.path: an empty one, so that only PYTHONPATH decides what imports.
    return private_dir("flagshim-cwd-")


# How a scenario's interpreter starts: without the site module (-S), so
# that neither the host's site-packages nor the .pth files there, which
# run code at every start (on the CI machines, an import of certifi: 50 ms
# a process), have a say in what a scenario imports or how long it takes.
# PYTHONPATH (scenario_env) is the whole import path.
PYTHON = [sys.executable, "-S"]

_PRELUDE = """
import json, os, sys
def out(value):
    sys.stdout.write("\\n@@RESULT@@" + json.dumps(value) + "\\n")
    sys.stdout.flush()
"""


def scenario_env(test: unittest.TestCase, env: Optional[Dict[str, str]] = None, *, stubs: bool = False,
                 library_env: bool = True) -> Dict[str, str]:
    """A scrubbed copy of this environment with PYTHONPATH=python/ (and the
    test stubs when stubs), FLAGSHIM_LIBRARY set to the library under test
    (unless library_env is False) and env added."""
    full = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
    paths = [PYTHON_DIR] + ([STUBS] if stubs else [])
    full["PYTHONPATH"] = os.pathsep.join(paths)
    if library_env:
        full["FLAGSHIM_LIBRARY"] = library(test)
    full.update(env or {})
    return full


def run(test: unittest.TestCase, code: str, env: Optional[Dict[str, str]] = None, *, stubs: bool = False,
        library_env: bool = True, expect_rc: Optional[int] = 0, args: Optional[List[str]] = None,
        prelude: str = "") -> dict:
    """Runs prelude and code (each dedented; out(value) reports a JSON value)
    in a new Python process and returns {"rc", "stdout", "stderr", "result"}: result is the
    last value reported, None when none was. A return code other than
    expect_rc (None: any) fails the test with the process's output."""
    full_env = scenario_env(test, env, stubs=stubs, library_env=library_env)
    cmd = PYTHON + ["-c", _PRELUDE + textwrap.dedent(prelude) + "\n" + textwrap.dedent(code)] + (args or [])
    try:
        p = subprocess.run(cmd, env=full_env, cwd=_neutral_dir(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        test.fail(f"the scenario did not end within {TIMEOUT}s:\nstdout:\n{e.stdout}\nstderr:\n{e.stderr}")
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            result = json.loads(line[len("@@RESULT@@"):])
    if expect_rc is not None and p.returncode != expect_rc:
        test.fail(f"the scenario exited {p.returncode}, want {expect_rc}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr, "result": result}


def result(test: unittest.TestCase, code: str, env: Optional[Dict[str, str]] = None, **kw) -> object:
    """run(...)'s result, which must have been reported."""
    r = run(test, code, env, **kw)
    if r["result"] is None:
        test.fail(f"the scenario reported nothing\nstdout:\n{r['stdout']}\nstderr:\n{r['stderr']}")
    return r["result"]


# Code shared by scenarios that act as the host's own loader: they load a
# fake driver library through ctypes, make device 0's primary context current
# on this thread and load text modules of the fakes (fake_common.h).
HOST_LOADER = r"""
import ctypes
def host_loader(path, prefix):
    drv = ctypes.CDLL(path)
    def call(name, *args):
        rc = getattr(drv, prefix + name)(*args)
        assert rc == 0, f"{prefix}{name}: {rc}"
    call("Init", 0)
    dev = ctypes.c_int()
    call("DeviceGet", ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p()
    call("DevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    call("CtxSetCurrent", ctx)
    def load(image):
        m = ctypes.c_void_p()
        call("ModuleLoadData", ctypes.byref(m), image.encode() + b"\0")
        return m.value
    return drv, load
PLAIN = "fake-module\nfunction add add\n"
SHMEM = "fake-module\nglobal nvshmemi_device_lib_version_d 4\nglobal nvshmemi_device_state_d 8\n"
HALF_SHMEM = "fake-module\nglobal nvshmemi_device_state_d 8\n"
"""
