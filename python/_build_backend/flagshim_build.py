"""flagshim's own PEP 517 build backend: standard library only, so that
``pip install ./python`` (with or without build isolation) needs no download.

build_wheel builds libflagshim.so from the Go module one folder up
(``CGO_ENABLED=1 go build -trimpath -tags netgo -buildmode=c-shared ./cmd/libflagshim``)
and writes a platform wheel (``py3-none-<platform>``, Root-Is-Purelib:
false) holding the ``flagshim`` package and the library beside it.

Environment:
    FLAGSHIM_GO                 the go binary to build with (default: go on PATH)
    FLAGSHIM_PREBUILT_LIBRARY   the absolute path of a built libflagshim.so to
                                put in the wheel instead of building one (for
                                machines without Go)

build_editable writes an editable wheel (a .pth file naming this folder) and
builds the library into flagshim/libflagshim.so here. There is no
build_sdist: the library is built from the Go module around this folder,
which a source archive of the Python package alone would not hold.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
import zipfile

__all__ = [
    "get_requires_for_build_wheel",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "build_wheel",
    "build_editable",
]

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
ROOT = os.path.dirname(HERE)  # the Go module
PACKAGE = "flagshim"
LIBRARY = "libflagshim.so"
GO_ENV = "FLAGSHIM_GO"
PREBUILT_ENV = "FLAGSHIM_PREBUILT_LIBRARY"


class BuildError(RuntimeError):
    """A build step failed; the message says what to do."""


# ---- metadata ----


def _project() -> dict:
    """The [project] table of pyproject.toml (tomllib where there is one; a
    reader of its simple `key = "string"` lines otherwise)."""
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib  # Python 3.11+

        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:
        pass
    project, table = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                table = line.strip("[]").strip()
                continue
            m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?$', line)
            if table == "project" and m:
                project[m.group(1)] = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
    return project


def _names() -> tuple:
    p = _project()
    name, version = p["name"], p["version"]
    return name, version, f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}"


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
    ]
    if p.get("description"):
        lines.append(f"Summary: {p['description']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    if isinstance(p.get("license"), str):
        lines.append(f"License: {p['license']}")
    body = ""
    readme = p.get("readme")
    if isinstance(readme, str) and os.path.exists(os.path.join(HERE, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(HERE, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _tag() -> str:
    """py3-none-<platform>: the package is pure Python over ctypes, but the
    library in it is built for this platform."""
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"py3-none-{plat}"


def _wheel_file(tag: str) -> str:
    _, version, _ = _names()
    return (
        "Wheel-Version: 1.0\n"
        f"Generator: flagshim_build ({version})\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}\n"
    )


def _write_dist_info(directory: str, tag: str) -> str:
    _, _, base = _names()
    dist_info = f"{base}.dist-info"
    d = os.path.join(directory, dist_info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file(tag))
    return dist_info


# ---- the library ----


def _build_library(out_dir: str) -> str:
    """libflagshim.so in out_dir: copied from FLAGSHIM_PREBUILT_LIBRARY, or
    built with Go."""
    out = os.path.join(out_dir, LIBRARY)
    prebuilt = os.environ.get(PREBUILT_ENV, "")
    if prebuilt:
        if not os.path.isabs(prebuilt):
            raise BuildError(f"{PREBUILT_ENV}={prebuilt!r} is not an absolute path: name a built {LIBRARY} by its absolute path")
        if not os.path.isfile(prebuilt):
            raise BuildError(f"{PREBUILT_ENV}={prebuilt!r}: no such file")
        shutil.copyfile(prebuilt, out)
        os.chmod(out, 0o755)
        print(f"flagshim_build: using {prebuilt} ({PREBUILT_ENV})", flush=True)
        return out
    if not os.path.isfile(os.path.join(ROOT, "cmd", "libflagshim", "export.go")):
        raise BuildError(
            f"flagshim_build: the Go sources of libflagshim are not at {ROOT}/cmd/libflagshim: build from a "
            f"checkout of the flagshim repository (pip install ./python from its root), or set {PREBUILT_ENV} "
            f"to the absolute path of a built {LIBRARY}"
        )
    go = os.environ.get(GO_ENV, "") or shutil.which("go")
    if not go or not (os.path.isfile(go) or shutil.which(go)):
        raise BuildError(
            "flagshim_build: the Go toolchain was not found "
            + (f"({GO_ENV}={os.environ.get(GO_ENV)!r})" if os.environ.get(GO_ENV) else "(no `go` on PATH)")
            + f": libflagshim.so is built with Go 1.25 or newer and cgo (a C compiler). Install Go "
            f"(https://go.dev/dl/) and gcc, or set {GO_ENV} to the go binary, or build the library "
            f"elsewhere (CGO_ENABLED=1 go build -buildmode=c-shared -o {LIBRARY} ./cmd/libflagshim) and set "
            f"{PREBUILT_ENV} to its absolute path"
        )
    # netgo: flagshim does no networking, and the pure-Go resolver spares go
    # compiling the net package's cgo part on every c-shared build (never
    # wholly cached): 4.9 -> 3.2 CPU s an install on a 2-vCPU machine.
    cmd = [go, "build", "-trimpath", "-tags", "netgo", "-buildmode=c-shared", "-o", out, "./cmd/libflagshim"]
    env = dict(os.environ, CGO_ENABLED="1")
    print(f"flagshim_build: (cd {ROOT} && CGO_ENABLED=1 {' '.join(cmd)})", flush=True)
    try:
        r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as e:
        raise BuildError(f"flagshim_build: cannot run {go}: {e}; set {GO_ENV} to the go binary, or {PREBUILT_ENV}") from e
    if r.returncode != 0:
        raise BuildError(
            f"flagshim_build: `{' '.join(cmd)}` failed (exit {r.returncode}):\n{r.stdout}\n"
            "libflagshim needs cgo: a C compiler (gcc; see `go env CC`) and CGO_ENABLED=1. Or set "
            f"{PREBUILT_ENV} to the absolute path of a built {LIBRARY}"
        )
    if r.stdout:
        print(r.stdout, end="", flush=True)
    return out


# ---- wheels ----


def _package_files() -> list:
    """(path on disk, path in the wheel) of the package's Python files."""
    files = []
    pkg = os.path.join(HERE, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(pkg):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") or name == "py.typed":
                full = os.path.join(dirpath, name)
                files.append((full, os.path.relpath(full, HERE).replace(os.sep, "/")))
    return files


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


class _Wheel:
    """A wheel being written: every file but RECORD is recorded in RECORD."""

    def __init__(self, path: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def _write(self, arcname: str, data: bytes, mode: int) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16  # a regular file and its permissions
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)

    def add(self, arcname: str, data: bytes, mode: int = 0o644) -> None:
        self._write(arcname, data, mode)
        self.records.append(f"{arcname},{_record_hash(data)},{len(data)}")

    def close(self, dist_info: str) -> None:
        record = f"{dist_info}/RECORD"
        self.records.append(f"{record},,")
        self._write(record, ("\n".join(self.records) + "\n").encode("utf-8"), 0o644)
        self.zip.close()


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _finish(wheel: _Wheel, tag: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dist_info = _write_dist_info(tmp, tag)
        for name in ("METADATA", "WHEEL"):
            wheel.add(f"{dist_info}/{name}", _read(os.path.join(tmp, dist_info, name)))
    wheel.close(dist_info)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _tag())


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _tag())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """The wheel: the flagshim package and libflagshim.so beside it."""
    tag = _tag()
    _, _, base = _names()
    filename = f"{base}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        lib = _build_library(tmp)
        wheel = _Wheel(os.path.join(wheel_directory, filename))
        try:
            for full, arc in _package_files():
                wheel.add(arc, _read(full))
            wheel.add(f"{PACKAGE}/{LIBRARY}", _read(lib), mode=0o755)
            _finish(wheel, tag)
        except BaseException:
            wheel.zip.close()
            os.unlink(os.path.join(wheel_directory, filename))
            raise
    return filename


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable wheel: a .pth file that puts this folder on sys.path, and
    the library built into flagshim/libflagshim.so here (rebuild it, or
    reinstall, after changing the Go code)."""
    tag = _tag()
    _, _, base = _names()
    filename = f"{base}-{tag}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        lib = _build_library(tmp)
        dest = os.path.join(HERE, PACKAGE, LIBRARY)
        shutil.copyfile(lib, dest + ".tmp")
        os.chmod(dest + ".tmp", 0o755)
        os.replace(dest + ".tmp", dest)
    wheel = _Wheel(os.path.join(wheel_directory, filename))
    wheel.add(f"__editable__.{base}.pth", (HERE + "\n").encode("utf-8"))
    _finish(wheel, tag)
    return filename
