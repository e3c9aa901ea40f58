"""Finding, checking and loading libflagshim.so (the C interface of
``cmd/libflagshim/flagshim.h``) through ctypes.

The library is looked for at ``$FLAGSHIM_LIBRARY`` (an absolute path), else
as ``libflagshim.so`` beside this package. Before it is loaded, the file and
its folder are checked: a regular file (a folder), owned by root or by this
user, not writable by group or others; anything else is refused, since
loading a library runs its code in this process.

Loading it starts the Go runtime inside it on a thread of its own;
``flagshim_ready()`` waits for that start-up, after which the process may
fork. The Go runtime does not survive a fork, though: in a child every call
raises :class:`~flagshim.errors.ForkError`.
"""

from __future__ import annotations

import ctypes
import os
import stat
from typing import Callable, NoReturn, Optional

from . import errors

#: The environment variable that names the library to load.
LIBRARY_ENV = "FLAGSHIM_LIBRARY"
#: The library's file name, beside the package when FLAGSHIM_LIBRARY is unset.
LIBRARY_NAME = "libflagshim.so"

_c_int = ctypes.c_int
_c_char_p = ctypes.c_char_p
_c_ull = ctypes.c_ulonglong

# Every function of flagshim.h: name -> (restype, argtypes).
PROTOTYPES = {
    "flagshim_resolve": (_c_int, [_c_char_p, _c_char_p, _c_int]),
    "flagshim_alias_active": (_c_int, []),
    "flagshim_ready": (_c_int, []),
    "flagshim_info_json": (_c_int, [_c_char_p, _c_int]),
    "flagshim_error": (_c_int, [_c_char_p, _c_int]),
    "flagshim_module_loaded": (_c_int, [_c_char_p, _c_ull, _c_char_p, _c_int]),
    "flagshim_module_unloading": (_c_int, [_c_char_p, _c_ull]),
    "flagshim_nvshmem_attach": (_c_int, [_c_int]),
    "flagshim_nvshmem_init": (_c_int, [_c_int]),
}

# The largest answer the size protocol grows a buffer to (1 GiB would be a
# bug of the library, not an answer).
_MAX_ANSWER = 64 << 20


def find() -> str:
    """The path of the library to load: ``$FLAGSHIM_LIBRARY``, else
    ``libflagshim.so`` beside this package. An empty variable counts as
    unset. Raises LibraryError for a relative path."""
    env = os.environ.get(LIBRARY_ENV, "")
    if env:
        if not os.path.isabs(env):
            raise errors.LibraryError(
                f"{LIBRARY_ENV}={env!r} is not an absolute path: set {LIBRARY_ENV} to the absolute "
                f"path of a built {LIBRARY_NAME}, or unset it to use the one beside the package"
            )
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


def _refuse(path: str, why: str) -> NoReturn:
    raise errors.LibraryError(f"flagshim: refusing to load {path}: {why}")


def _owners() -> set:
    owners = {0}
    for get in ("getuid", "geteuid"):
        if hasattr(os, get):
            owners.add(getattr(os, get)())
    return owners


def check(path: str) -> str:
    """Checks that path (after symbolic links) is a regular file in a folder,
    both owned by root or this user and writable by neither group nor
    others, and returns the real path. Raises LibraryError saying why not."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        hint = (
            f"build it with `CGO_ENABLED=1 go build -buildmode=c-shared -o {LIBRARY_NAME} ./cmd/libflagshim` "
            f"and set {LIBRARY_ENV} to its absolute path, or install the package with pip (which builds it)"
        )
        if path == real:
            raise errors.LibraryError(f"flagshim: {path} not found: {hint}") from None
        raise errors.LibraryError(f"flagshim: {path} (-> {real}) not found: {hint}") from None
    except OSError as e:
        _refuse(real, f"cannot stat it: {e}")
    owners = _owners()
    shown = real if path == real else f"{path} (-> {real})"
    if not stat.S_ISREG(st.st_mode):
        _refuse(shown, "it is not a regular file")
    if st.st_uid not in owners:
        _refuse(shown, f"it is owned by uid {st.st_uid}, neither root nor this user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        _refuse(shown, f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}); chmod go-w it")
    folder = os.path.dirname(real)
    try:
        dst = os.stat(folder)
    except OSError as e:
        _refuse(shown, f"cannot stat its folder {folder}: {e}")
    if not stat.S_ISDIR(dst.st_mode):
        _refuse(shown, f"its folder {folder} is not a directory")
    if dst.st_uid not in owners:
        _refuse(shown, f"its folder {folder} is owned by uid {dst.st_uid}, neither root nor this user")
    if dst.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        _refuse(
            shown,
            f"its folder {folder} is writable by group or others (mode {stat.S_IMODE(dst.st_mode):04o}): "
            "anyone could replace the library; move it to a private folder",
        )
    return real


def _bind(path: str) -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    except OSError as e:
        raise errors.LibraryError(f"flagshim: cannot load {path}: {e}") from e
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise errors.LibraryError(
                f"flagshim: {path} lacks {name}: it is not a libflagshim this package can use "
                "(an older build?); rebuild it from the same checkout as this package"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_forked = False


def _after_fork_in_child() -> None:
    global _forked
    _forked = True


def forked() -> bool:
    """Whether this process is the child of a fork made after the library was
    loaded."""
    return _forked


def _load() -> tuple:
    path = check(find())
    lib = _bind(path)
    rc = lib.flagshim_ready()
    if rc != 0:
        raise errors.LibraryError(f"flagshim: {path}: flagshim_ready returned {rc}, not 0")
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    return lib, path


_LIB, PATH = _load()


def get() -> ctypes.CDLL:
    """The loaded library; ForkError in the child of a fork."""
    if _forked:
        raise errors.ForkError(
            "flagshim: called in the child of a fork: the Go runtime inside libflagshim does not survive "
            "fork(). Import flagshim before forking and use it in the parent only, or start the child "
            "processes with the 'spawn' (or 'forkserver') method (multiprocessing.set_start_method('spawn'))"
        )
    return _LIB


def last_error() -> str:
    """The calling thread's last error message of the library (flagshim_error);
    "" when there is none."""
    lib = get()
    n = lib.flagshim_error(None, 0)
    if n <= 0:
        return ""
    buf = ctypes.create_string_buffer(n + 1)
    n = lib.flagshim_error(buf, n + 1)
    return buf.value[: max(n, 0)].decode("utf-8", "replace")


def fail(code: int, context: str, make: Optional[Callable[[int, str, str], errors.Error]] = None) -> NoReturn:
    """Raises the exception for the library's negative code, its message
    "context: <the library's message>". make(code, message, cause) builds it
    (default errors.from_code)."""
    cause = last_error()
    message = f"{context}: {cause}" if cause else f"{context}: failed with code {code}"
    raise (make or errors.from_code)(code, message, cause)


def text(call: Callable[[Optional[ctypes.Array], int], int], context: str, size: int = 64, make=None) -> str:
    """Runs call(buf, len) under the size protocol of flagshim.h and returns
    the answer, starting with a buffer of size bytes: on FLAGSHIM_ERANGE it
    doubles the buffer and calls again. Another negative code raises (see
    fail)."""
    while True:
        buf = ctypes.create_string_buffer(size)
        rc = call(buf, size)
        if rc >= 0:
            return buf.raw[:rc].decode("utf-8")
        if rc != errors.ERANGE or size >= _MAX_ANSWER:
            fail(rc, context, make)
        size *= 2
