"""flagshim for Python: what ``cuda`` means in this process.

Importing this package loads libflagshim.so (``$FLAGSHIM_LIBRARY``, an
absolute path, else the one installed beside the package), checks it is
safe to load, binds every function of ``flagshim.h`` and waits for the Go
runtime inside it to start, so the process may fork afterwards.

The first call of :func:`resolve`, :func:`alias_active`, :func:`info`,
:func:`module_loaded`, :func:`module_unloading` or
:func:`flagshim.nvshmem.enable` runs ``flagshim.Init`` once for the
process: the vendor drivers are looked for then, under the usual
environment variables (``FLAGOS_ALIAS_CUDA``, ``FLAGOS_BACKEND``,
``FLAGOS_PROBE``, ``FLAGOS_LIB*_PATH``, ``FLAGOS_LOG``). The Go runtime
copies the environment when the library is loaded, so set them before
``import flagshim``: changes to ``os.environ`` made afterwards are not seen.

Probing. Where ``FLAGOS_PROBE`` is not set, the C library probes at the
*presence* tier: it reads the management libraries (NVML, MTML), the device
nodes and the driver library's presence without initializing any driver in
this process, so a process that forks afterwards (PyTorch's DataLoader,
multiprocessing with ``fork``) keeps children in which CUDA works. This
package leaves the environment alone: ``FLAGOS_PROBE=exact`` initializes the
drivers in this process (children forked afterwards cannot use CUDA).

Forking. The Go runtime does not survive ``fork()``: in the child of a fork
every call raises :class:`ForkError`. Import flagshim before forking and use
it in the parent, or start workers with ``spawn``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

from . import _lib
from .errors import (
    BackendError,
    DeviceError,
    Error,
    ForkError,
    HookError,
    InitError,
    LibraryError,
    NvshmemError,
    TritonNotFound,
)

__version__ = "0.2.0.dev0"

__all__ = [
    "resolve",
    "alias_active",
    "info",
    "module_loaded",
    "module_unloading",
    "library_path",
    "nvshmem",
    "triton",
    "Error",
    "InitError",
    "DeviceError",
    "HookError",
    "BackendError",
    "NvshmemError",
    "LibraryError",
    "ForkError",
    "TritonNotFound",
]


def library_path() -> str:
    """The real path of the libflagshim.so this process loaded."""
    return _lib.PATH


def resolve(device: str) -> str:
    """What device means in this process: ``"cuda:1"`` gives ``"flagos:1"``
    where the cuda->flagos alias is active, ``"cuda:1"`` where it is not;
    ``"cpu"`` gives ``"cpu"``.

    Raises:
        DeviceError: (also a ValueError) a bad device string: its syntax
            (``type`` or ``type:index``) or an unknown type.
        InitError: flagshim could not initialize (a bad setting such as
            ``FLAGOS_ALIAS_CUDA=perhaps``; the message names the variable).
        TypeError: device is not a str.
    """
    if not isinstance(device, str):
        raise TypeError(f"flagshim.resolve: device must be a str, not {type(device).__name__}")
    context = f"flagshim.resolve({device!r})"
    if "\0" in device:
        raise DeviceError(f"{context}: a device string has no NUL character", code=None)
    lib = _lib.get()
    arg = device.encode("utf-8")
    return _lib.text(lambda buf, n: lib.flagshim_resolve(arg, buf, n), context)


def alias_active() -> bool:
    """Whether ``cuda`` means ``flagos`` in this process: no usable CUDA
    runtime, a flagos device present, and ``FLAGOS_ALIAS_CUDA`` not forbidding
    it.

    Raises:
        InitError: the alias could not be decided (a bad setting).
    """
    rc = _lib.get().flagshim_alias_active()
    if rc < 0:
        _lib.fail(rc, "flagshim.alias_active()")
    return rc == 1


def info() -> Dict[str, Any]:
    """What ``flagshim info --json`` prints for this process, as a dict: the
    probe tier, the alias decision, every backend and its devices, the probes,
    the init phases and the environment (``docs/json.md`` documents every
    key).

    Raises:
        InitError: flagshim could not initialize (a bad setting).
    """
    lib = _lib.get()
    n = lib.flagshim_info_json(None, 0)
    if n < 0:
        _lib.fail(n, "flagshim.info()")
    answer = _lib.text(lambda buf, size: lib.flagshim_info_json(buf, size), "flagshim.info()", size=n + 1)
    return json.loads(answer)


def _handle(module: Any, context: str) -> int:
    """module as a nonzero 64-bit handle: an int, or an object with __int__
    (cuda-python's CUmodule)."""
    if isinstance(module, bool) or isinstance(module, (str, bytes, float)):
        raise TypeError(f"{context}: a module handle is an int, not {type(module).__name__}")
    try:
        h = int(module)
    except (TypeError, ValueError):
        raise TypeError(f"{context}: a module handle is an int, not {type(module).__name__}") from None
    if not 0 < h < 1 << 64:
        raise ValueError(f"{context}: a module handle is a nonzero unsigned 64-bit value, not {h}")
    return h


def _backend(backend: Any, context: str) -> bytes:
    if not isinstance(backend, str):
        raise TypeError(f"{context}: backend must be a str, not {type(backend).__name__}")
    if "\0" in backend:
        raise BackendError(f"{context}: a backend name has no NUL character")
    return backend.encode("utf-8")


def module_loaded(module: Any, backend: str = "cuda") -> List[str]:
    """Runs flagshim's module hooks on a module another loader of this
    process loaded (Triton, CuPy, cuda-python, a C++ runtime) and returns the
    names of the hooks that ran (``[]`` when none did).

    module is the module's handle (a CUmodule, MUmodule, hipModule_t) as an
    int; backend names the driver that loaded it: ``"cuda"``, ``"musa"`` or
    ``"hip"``. Only hooks whose scope matches the module run: the NVSHMEM
    hook (after :func:`flagshim.nvshmem.enable`) only on modules that carry
    NVSHMEM's device symbols. Call it on the thread that loaded the module,
    with the module's context current. The hooks run once per load: threads
    that report one module at once wait for that run and get its answer (or
    its HookError); a later call for the same module runs nothing and answers
    the same.

    Raises:
        HookError: a hook failed; the hooks applied before it were undone.
        BackendError: no driver backend of that name.
        InitError: flagshim could not initialize (a bad setting).
    """
    context = f"flagshim.module_loaded({module!r}, {backend!r})"
    h = _handle(module, context)
    b = _backend(backend, context)
    lib = _lib.get()
    names = _lib.text(lambda buf, n: lib.flagshim_module_loaded(b, h, buf, n), context, size=256)
    return names.split(",") if names else []


def module_unloading(module: Any, backend: str = "cuda") -> None:
    """Finalizes, in reverse order, the hooks :func:`module_loaded` applied to
    module; call it before unloading the module. A module no hook ran on
    needs no call (it does nothing).

    Raises:
        HookError: a hook's finalizer failed.
        BackendError: no driver backend of that name.
    """
    context = f"flagshim.module_unloading({module!r}, {backend!r})"
    h = _handle(module, context)
    b = _backend(backend, context)
    rc = _lib.get().flagshim_module_unloading(b, h)
    if rc < 0:
        _lib.fail(rc, context)


def _last_error() -> str:
    """The library's last error message on this thread (flagshim_error)."""
    return _lib.last_error()


# The submodules, so that flagshim.nvshmem.enable and flagshim.triton.install
# work after a plain `import flagshim`; neither imports anything heavy
# (flagshim.triton imports Triton only in install()).
from . import nvshmem, triton  # noqa: E402
