"""flagshim for Python: what ``cuda`` means in this process.

Importing this package loads libflagshim.so (``$FLAGSHIM_LIBRARY``, an
absolute path, else the one installed beside the package), checks it is
safe to load and binds every function of ``flagshim.h``; the process may
fork afterwards (the library's fork handler waits for its Go runtime's
start).

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

Forking. The Go runtime does not survive ``fork()``. What the parent
decided is fixed once Init ran, so in the child of a fork (``os.fork``, or a
fork made by C code) :func:`resolve`, :func:`alias_active`, :func:`info`,
:func:`is_available`, :func:`device_count` and :func:`current_vendor` answer
from what the parent decided, without entering the Go runtime: the info
answer the parent read (before each ``os.fork``, a hook reads it where a
call ran Init), else the last one the library built there (ABI 1.3). A fork
made by C code (ctypes' libc ``fork``, a C extension) runs no Python hook:
call :func:`info` before it if its child needs these answers (else they
raise :class:`ForkError`). Every call that needs the library
(:func:`module_loaded`, :mod:`flagshim.nvshmem`, ...) raises
:class:`ForkError` in a child. Import flagshim before forking and use it in
the parent, or start workers with ``spawn``.
"""

# typing is for type checkers only: importing it costs a host's start (issue 40).
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

from . import _decided, _lib
from .errors import (
    BackendError,
    DeviceError,
    Error,
    ForkError,
    HookError,
    SelectionError,
    InitError,
    LibraryError,
    NoSuchDevice,
    NotADeviceString,
    NvshmemError,
    TritonNotFound,
)

__version__ = "0.2.0.dev0"

__all__ = [
    "resolve",
    "alias_active",
    "info",
    "is_available",
    "device_count",
    "current_vendor",
    "get_device_properties",
    "get_device_name",
    "get_device_capability",
    "mem_get_info",
    "DeviceProperties",
    "module_loaded",
    "module_unloading",
    "select_env",
    "select_info",
    "library_path",
    "abi_version",
    "MAX_DEVICE_STRING",
    "nvshmem",
    "triton",
    "Error",
    "InitError",
    "DeviceError",
    "NotADeviceString",
    "NoSuchDevice",
    "HookError",
    "BackendError",
    "NvshmemError",
    "LibraryError",
    "ForkError",
    "SelectionError",
    "TritonNotFound",
]


def library_path() -> str:
    """The real path of the libflagshim.so this process loaded."""
    return _lib.PATH


def abi_version() -> "Tuple[int, int]":
    """The loaded library's C ABI version, ``(major, minor)``
    (``flagshim_abi_version``, ``flagshim.h``). The import refuses, with
    :class:`LibraryError`, a library whose major this package does not know."""
    return _lib.ABI


#: The longest device string accepted (a device string is a short type name
#: and an index; anything longer is refused before it reaches the library).
MAX_DEVICE_STRING = 1024


def _device_string(device: "Any", name: str) -> "Tuple[str, bytes, str]":
    """device checked as a device string: (the plain str, its UTF-8, the
    context for messages, "name('cuda:1')"). Anything else raises a
    DeviceError: NotADeviceString for what is not a str."""
    if not issubclass(type(device), str):
        raise NotADeviceString(f"{name}: a device string is a str, not {type(device).__name__}")
    s = str.__str__(device)  # a plain str, whatever a subclass overrides
    context = f"{name}({s!r})" if len(s) <= 64 else f"{name}({s[:64]!r}...)"
    if len(s) > MAX_DEVICE_STRING:
        raise DeviceError(f"{context}: a device string has at most {MAX_DEVICE_STRING} characters, not {len(s)}")
    if "\0" in s:
        raise DeviceError(f"{context}: a device string has no NUL character")
    try:
        arg = s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise DeviceError(f"{context}: not a device string: character {e.start} cannot be encoded ({e.reason})") from None
    return s, arg, context


def _resolve(s: str, arg: bytes, context: str) -> str:
    if _lib.forked():
        try:
            return _decided.parse(s, _decided.view(context))
        except DeviceError as e:
            raise DeviceError(f"{context}: {e}", cause=str(e)) from None
    lib = _lib.get()
    return _lib.text(lambda buf, n: lib.flagshim_resolve(arg, buf, n), context)


def resolve(device: str) -> str:
    """What device means in this process: ``"cuda:1"`` gives ``"flagos:1"``
    where the cuda->flagos alias is active, ``"cuda:1"`` where it is not;
    ``"cpu"`` gives ``"cpu"``. In the child of a fork, the parent's answer.

    Raises:
        DeviceError: (also a ValueError) a bad device string: its syntax
            (``type`` or ``type:index``), an unknown type, a NUL or a
            character that is not text (a lone surrogate), more than
            MAX_DEVICE_STRING characters, or not a str at all
            (:class:`NotADeviceString`, also a TypeError).
        InitError: flagshim could not initialize (a bad setting such as
            ``FLAGOS_ALIAS_CUDA=perhaps``; the message names the variable).
        ForkError: in the child of a fork whose parent never called
            flagshim (nothing was decided).
    """
    return _resolve(*_device_string(device, "flagshim.resolve"))


def alias_active() -> bool:
    """Whether ``cuda`` means ``flagos`` in this process: no usable CUDA
    runtime, a flagos device present, and ``FLAGOS_ALIAS_CUDA`` not forbidding
    it. In the child of a fork, the parent's answer.

    Raises:
        InitError: the alias could not be decided (a bad setting).
    """
    if _lib.forked():
        return _decided.view("flagshim.alias_active()").alias_active
    rc = _lib.get().flagshim_alias_active()
    if rc < 0:
        _lib.fail(rc, "flagshim.alias_active()")
    return rc == 1


def info() -> "Dict[str, Any]":
    """What ``flagshim info --json`` prints for this process, as a dict: the
    probe tier, the alias decision, every backend and its devices, the probes,
    the init phases and the environment (``docs/json.md`` documents every
    key). In the child of a fork, the parent's last answer.

    Raises:
        InitError: flagshim could not initialize (a bad setting).
    """
    if _lib.forked():
        return _decided.info("flagshim.info()")
    lib = _lib.get()
    # One call (the size protocol grows the buffer where it is short).
    answer = _lib.text(lambda buf, size: lib.flagshim_info_json(buf, size), "flagshim.info()", size=_decided._INFO_BUFFER)
    _decided.keep(answer)
    import json  # here, not at import: json (with re and enum) is most of the package's import time

    return json.loads(answer)


def _served(device_type: "Any", name: str) -> "Tuple[Optional[_decided.Backend], _decided.View]":
    """The backend that serves device_type here, following the alias as
    resolve does (None where no backend answers for it), and the view."""
    s, arg, context = _device_string(device_type, name)
    if ":" in s:
        raise DeviceError(f"{context}: a device type such as 'cuda' is due here, not a device")
    served = _resolve(s, arg, context)
    v = _decided.view(context)
    return v.backends.get(served), v


def is_available(type: str = "cuda") -> bool:  # noqa: A002 (torch.cuda's word)
    """Whether a device of ``type`` can run work here, following the alias as
    ``torch.cuda.is_available()`` would: on a MUSA-only machine where cuda
    means flagos, ``is_available()`` is flagos's answer. Derived from what
    Init decided (the device table does not change afterwards).

    Raises:
        DeviceError: type is not a registered device type (or not a str).
        InitError: flagshim could not initialize (a bad setting).
    """
    b, _ = _served(type, "flagshim.is_available")
    return b is not None and b.available and b.devices > 0


def device_count(type: str = "cuda") -> int:  # noqa: A002
    """How many devices ``type`` has here, following the alias as
    ``torch.cuda.device_count()`` would (0 where it is not available).

    Raises:
        DeviceError: type is not a registered device type (or not a str).
        InitError: flagshim could not initialize (a bad setting).
    """
    b, _ = _served(type, "flagshim.device_count")
    return b.devices if b is not None and b.available else 0


def current_vendor() -> "Optional[str]":
    """The vendor whose devices serve ``cuda`` now: ``"NVIDIA"`` with a usable
    CUDA runtime, ``"Moore Threads"`` where cuda means flagos and flagos routes
    to MUSA, ...; None where cuda has no device.

    Raises:
        InitError: flagshim could not initialize (a bad setting).
    """
    b, v = _served("cuda", "flagshim.current_vendor")
    if b is None or not b.available or b.devices == 0:
        return None
    if b.vendor:
        return b.vendor
    routed = v.backends.get(b.routes_to)
    return routed.vendor if routed is not None else None


def _handle(module: "Any", context: str) -> int:
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


def _backend(backend: "Any", context: str) -> bytes:
    if not issubclass(type(backend), str):
        raise TypeError(f"{context}: backend must be a str, not {type(backend).__name__}")
    backend = str.__str__(backend)
    if "\0" in backend:
        raise BackendError(f"{context}: a backend name has no NUL character")
    try:
        return backend.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BackendError(f"{context}: not a backend name: character {e.start} cannot be encoded ({e.reason})") from None


def module_loaded(module: "Any", backend: str = "cuda") -> "List[str]":
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


def module_unloading(module: "Any", backend: str = "cuda") -> None:
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


# The device questions (flagshim.devices) load on first use: the
# dataclasses and json they need would be most of a host's start, which
# pays for everything import flagshim imports (issue 40).
_DEVICE_NAMES = frozenset(
    ("DeviceProperties", "get_device_properties", "get_device_name", "get_device_capability", "mem_get_info")
)


def __getattr__(name: str) -> "Any":
    if name in _DEVICE_NAMES:
        from . import devices

        value = getattr(devices, name)
        globals()[name] = value
        return value
    # The submodules load on first use too, so that flagshim.nvshmem.enable
    # and flagshim.triton.install work after a plain `import flagshim`
    # without a host's start paying for them (0.4 ms, issue 40); importing
    # one binds it here.
    if name in ("nvshmem", "triton"):
        __import__(f"{__name__}.{name}")  # not `from . import`: it would ask this __getattr__ again
        return globals()[name]
    raise AttributeError(f"module 'flagshim' has no attribute {name!r}")


def select_env(type: str, devices: "Any") -> "Dict[str, str]":
    """The environment variables that make exactly ``devices`` visible, in
    that order, to a child process of the runtime behind device type
    ``type`` (``"cuda"``, ``"hip"``, ``"npu"``, ...; where cuda means flagos,
    the vendor flagos routes to), for a launcher that starts one worker per
    device::

        env = dict(os.environ, **flagshim.select_env("cuda", ["GPU-8a1f", "1"]))
        subprocess.Popen(cmd, env=env)

    ``devices`` is a list (or one str) of UUIDs, whole or a prefix one
    device alone has; PCI addresses (``"0000:18:00.0"``); or indexes, the
    device ``"type:index"`` names in this process. The devices are read
    from the vendor's management library (no driver is initialized); the
    variables are written as the runtime reads them: UUIDs where it takes
    them (``CUDA_VISIBLE_DEVICES=GPU-...``), else its own indexes, and what
    else it needs. :func:`select_info` gives the whole answer.

    Raises:
        SelectionError: (also a ValueError) a device that names no device
            or several, an index out of range, devices the runtime cannot
            show together (two MIG instances, Ascend's out of order), or a
            variable set here whose effect is not public.
        DeviceError: ``type`` is not a device type.
        ForkError: in the child of a fork.
    """
    return select_info(type, devices)["env"]


def select_info(type: str, devices: "Any") -> "Dict[str, Any]":
    """:func:`select_env`'s whole answer, the object ``flagshim select
    --json`` prints: ``type``, ``runtime``, ``env``, ``settings`` (in the
    order to set them), ``devices`` (what each device given named, with the
    index the child gives it) and ``notes``."""
    _, arg, context = _device_string(type, "flagshim.select_env")
    if isinstance(devices, str):
        devices = [devices]
    if not isinstance(devices, (list, tuple)) or not all(isinstance(d, str) for d in devices):
        raise NotADeviceString(f"{context}: devices is a list of str (UUIDs, PCI addresses, indexes)")
    for d in devices:
        if "," in d or "\0" in d:
            raise SelectionError(f"{context}: {d!r}: a device has no comma or NUL")
    lib = _lib.require("flagshim_select_json", context)
    joined = ",".join(devices).encode("utf-8")
    import json

    return json.loads(_lib.text(lambda buf, n: lib.flagshim_select_json(arg, joined, buf, n), context, size=1024))
