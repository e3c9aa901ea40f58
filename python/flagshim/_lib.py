"""Finding, checking and loading libflagshim.so (the C interface of
``cmd/libflagshim/flagshim.h``) through _ctypes (ctypes' C part).

The library is looked for at ``$FLAGSHIM_LIBRARY`` (an absolute path), else
as ``libflagshim.so`` beside this package. Before it is loaded, it is checked
by the Go loader's rule (:mod:`flagshim._pathcheck`), since loading a library
runs its code in this process.

Once loaded, its ABI version comes first (``flagshim_abi_version``): a
library whose ABI major this package does not know is refused, whatever
functions it has. Then every function of ``flagshim.h`` is bound (argument
and result types). The Go runtime inside the library starts on a thread of
its own meanwhile; the library's fork handler waits for that start (ABI
1.3), so the process may fork at once (an older library is waited for
here, ``flagshim_ready()``).

The Go runtime does not survive a fork. :func:`forked` says whether this
process is the child of a fork made after the load, whoever forked
(``os.fork``, or a C library's ``fork()``: the process id changed), and
:func:`get` raises :class:`~flagshim.errors.ForkError` there. The library
itself answers ``FLAGSHIM_EFORK`` in such a child, which :func:`fail` turns
into ForkError too.
"""

import posix
import sys

import _ctypes

# typing is for type checkers only: importing it costs a host's start (issue 40).
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, NoReturn, Optional, Tuple

from . import _pathcheck, errors

#: The environment variable that names the library to load.
LIBRARY_ENV = "FLAGSHIM_LIBRARY"
#: The library's file name, beside the package when FLAGSHIM_LIBRARY is unset.
LIBRARY_NAME = "libflagshim.so"
#: The ABI major of flagshim.h this package binds (flagshim_abi_version() is
#: major * 10000 + minor); a library of another major is refused.
ABI_MAJOR = 1


def find() -> str:
    """The path of the library to load: ``$FLAGSHIM_LIBRARY``, else
    ``libflagshim.so`` beside this package. An empty variable counts as
    unset. Raises LibraryError for a relative path."""
    env = _getenv(LIBRARY_ENV)
    if env:
        if not env.startswith("/"):  # os.path.isabs
            raise errors.LibraryError(
                f"{LIBRARY_ENV}={env!r} is not an absolute path: set {LIBRARY_ENV} to the absolute "
                f"path of a built {LIBRARY_NAME}, or unset it to use the one beside the package"
            )
        return env
    here = __file__
    if not _normal(here):
        import os.path  # here: only for a path that is not absolute and normal already

        here = os.path.abspath(here)
    folder = here[: here.rindex("/")] or "/"  # os.path.dirname of a normal absolute path
    return folder + LIBRARY_NAME if folder == "/" else folder + "/" + LIBRARY_NAME


# os is not imported (with _collections_abc, posixpath and stat it was 1.1
# ms of a 2-core machine's import, a host's start, issue 40): its functions
# come from posix, its C part, and paths are joined as strings.


def _getenv(name: str) -> str:
    """os.environ.get(name, ""), without os: on POSIX os.environ keeps its
    items in posix.environ (bytes, what this process set there included),
    and decodes them so."""
    value = posix.environ.get(name.encode(sys.getfilesystemencoding(), "surrogateescape"))
    return "" if value is None else value.decode(sys.getfilesystemencoding(), "surrogateescape")


def _normal(path: str) -> bool:
    """Whether path is absolute and os.path.abspath leaves it as it is: one
    leading slash, no empty, "." or ".." component, no trailing slash."""
    return path.startswith("/") and not path.startswith("//") and all(
        c not in ("", ".", "..") for c in path[1:].split("/"))


def check(path: str) -> str:
    """Checks path as the Go loader checks a library and returns it with every
    link resolved; LibraryError says why not (see _pathcheck)."""
    return _pathcheck.check(
        path,
        f"build it with `CGO_ENABLED=1 go build -buildmode=c-shared -o {LIBRARY_NAME} ./cmd/libflagshim` "
        f"and set {LIBRARY_ENV} to its absolute path, or install the package with pip (which builds it)",
    )


def _open(path: str) -> int:
    """dlopen(path) with ctypes.CDLL's mode (RTLD_NOW | RTLD_LOCAL), through
    _ctypes: the library's Go runtime starts on a thread of its own as soon
    as it is loaded, and goes on beside the rest of the import (issue 40)."""
    try:
        return _ctypes.dlopen(path, _ctypes.RTLD_LOCAL)
    except OSError as e:
        raise errors.LibraryError(f"flagshim: cannot load {path}: {e}") from e


# The checks come first: nothing is loaded before check says it is safe.
_PATH = check(find())
_HANDLE = _open(_PATH)

# The C types the prototypes need, from _ctypes as ctypes defines them:
# `import ctypes` (with struct, types and its many classes) was 1.5-2.5 ms
# of a 2-core machine's import, a host's start (issue 40). They are ctypes'
# own kinds: ctypes' buffers and byref pass to these functions as to
# ctypes', and a pointer argument takes an instance of the type here
# (c_ulonglong below).


class c_int(_ctypes._SimpleCData):
    _type_ = "i"


class c_char_p(_ctypes._SimpleCData):
    _type_ = "z"


class c_ulonglong(_ctypes._SimpleCData):
    _type_ = "Q"


class c_char(_ctypes._SimpleCData):
    _type_ = "c"


class _Function(_ctypes.CFuncPtr):
    """A C function of the library (ctypes.CDLL's function type)."""

    _flags_ = _ctypes.FUNCFLAG_CDECL
    _restype_ = c_int


class Library:
    """The loaded library, its functions as attributes, as ctypes.CDLL gives
    them (_bind binds each of PROTOTYPES it has)."""

    def __init__(self, path: str, handle: int) -> None:
        self._name = path
        self._handle = handle

    def __repr__(self) -> str:
        return f"<flagshim library {self._name!r}, handle {self._handle:#x}>"

    def function(self, name: str) -> "_Function":
        """The library's function name; AttributeError where it lacks it."""
        return _Function((name, self))


def buffer(size: int) -> "_ctypes.Array":
    """A zeroed buffer of size bytes (ctypes.create_string_buffer(size)):
    .raw and .value read it."""
    return (c_char * size)()


_c_int, _c_char_p, _c_ull = c_int, c_char_p, c_ulonglong

# Every function of flagshim.h: name -> (restype, argtypes). The ABI version
# is bound and checked before the others.
PROTOTYPES = {
    "flagshim_abi_version": (_c_int, []),
    "flagshim_resolve": (_c_int, [_c_char_p, _c_char_p, _c_int]),
    "flagshim_alias_active": (_c_int, []),
    "flagshim_ready": (_c_int, []),
    "flagshim_info_json": (_c_int, [_c_char_p, _c_int]),
    "flagshim_error": (_c_int, [_c_char_p, _c_int]),
    "flagshim_module_loaded": (_c_int, [_c_char_p, _c_ull, _c_char_p, _c_int]),
    "flagshim_module_unloading": (_c_int, [_c_char_p, _c_ull]),
    "flagshim_nvshmem_attach": (_c_int, [_c_int]),
    "flagshim_nvshmem_init": (_c_int, [_c_int]),
    # ABI 1.1 (OPTIONAL: a 1.0 library lacks them)
    "flagshim_device_json": (_c_int, [_c_char_p, _c_char_p, _c_int]),
    "flagshim_mem_get_info": (_c_int, [_c_char_p, _ctypes.POINTER(_c_ull), _ctypes.POINTER(_c_ull)]),
    # ABI 1.2 (OPTIONAL)
    "flagshim_select_json": (_c_int, [_c_char_p, _c_char_p, _c_char_p, _c_int]),
    # ABI 1.3 adds no function: flagshim_info_json answers in a forked child
    # (the parent's copy, taken at the fork), where 1.2 answered EFORK.
}

# The functions added after ABI 1.0, by the minor that added them: a library
# of an older minor loads without them, and the calls that need one raise
# LibraryError (require).
OPTIONAL = {"flagshim_device_json": 1, "flagshim_mem_get_info": 1, "flagshim_select_json": 2}

# The largest answer the size protocol grows a buffer to (1 GiB would be a
# bug of the library, not an answer).
_MAX_ANSWER = 64 << 20

#: What a call in the child of a fork raises, after its prefix.
FORK_MESSAGE = (
    "called in the child of a fork: the Go runtime inside libflagshim does not survive "
    "fork(). Import flagshim before forking and use it in the parent only, or start the child "
    "processes with the 'spawn' (or 'forkserver') method (multiprocessing.set_start_method('spawn'))"
)


def _bind(path: str, handle: int) -> "Tuple[Library, Tuple[int, int]]":
    """Wraps the library loaded from path (handle, _open's), checks its ABI
    major, binds every function; returns the library and its ABI version
    (major, minor)."""
    lib = Library(path, handle)
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = lib.function(name)
        except AttributeError:
            if name in OPTIONAL:
                continue
            raise errors.LibraryError(
                f"flagshim: {path} lacks {name}: it is not a libflagshim this package can use "
                "(an older build?); rebuild it from the same checkout as this package"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
        setattr(lib, name, fn)
        if name == "flagshim_abi_version":
            version = fn()
            major, minor = divmod(version, 10000)
            if version < 0 or major != ABI_MAJOR:
                raise errors.LibraryError(
                    f"flagshim: {path} has ABI version {major}.{minor} (flagshim_abi_version() = {version}), "
                    f"and this package knows ABI {ABI_MAJOR}.x only: install the flagshim package that "
                    "matches the library, or rebuild the library from the same checkout as this package"
                )
    return lib, (major, minor)


_forked = False

#: Whether this process made a call that runs Init (get() was asked for the
#: library): the before-fork hook (flagshim._decided) builds the info answer
#: for the children only then, never running Init at a fork itself.
used = False

#: Init's failure in this process, (code, message, cause), once a call got
#: FLAGSHIM_EINIT; None before (flagshim._decided raises it for the answers
#: it derives, in a forked child too).
init_error: "Optional[Tuple[int, str, str]]" = None


def _after_fork_in_child() -> None:
    global _forked
    _forked = True


def _load(path: str, handle: int) -> tuple:
    lib, abi = _bind(path, handle)
    # The Go runtime's start goes on beside the rest of the import and the
    # host's own start: a library of ABI 1.3 waits for it in its fork
    # handler, so a fork right after the import is safe without waiting
    # here (up to 2 ms of a 2-core machine's import, issue 40); the first
    # call waits for it as any call does. An older library needs the wait
    # before a fork.
    if abi < (1, 3):
        rc = lib.flagshim_ready()
        if rc != 0:
            raise errors.LibraryError(f"flagshim: {path}: flagshim_ready returned {rc}, not 0")
    if hasattr(posix, "register_at_fork"):
        posix.register_at_fork(after_in_child=_after_fork_in_child)
    return lib, path, abi, posix.getpid()


_LIB, PATH, ABI, _PID = _load(_PATH, _HANDLE)


def forked() -> bool:
    """Whether this process is the child of a fork made after the library was
    loaded: by os.fork (its after-fork hook), or by anyone (the process id is
    not the one that loaded it)."""
    return _forked or posix.getpid() != _PID


def get() -> "Library":
    """The loaded library; ForkError in the child of a fork."""
    global used
    if forked():
        raise errors.ForkError("flagshim: " + FORK_MESSAGE)
    used = True
    return _LIB


def last_error() -> str:
    """The calling thread's last error message of the library (flagshim_error);
    "" when there is none."""
    lib = get()
    n = lib.flagshim_error(None, 0)
    if n <= 0:
        return ""
    buf = buffer(n + 1)
    n = lib.flagshim_error(buf, n + 1)
    return buf.value[: max(n, 0)].decode("utf-8", "replace")


# "flagshim: " where the library's Go errors wrap each other: at the start of
# the message or of a clause. Compiled on the first error: re is not imported
# at import (a host's start, issue 40).
_INNER_PREFIX = r"(?:^|(?<=: )|(?<=; )|(?<=\())(?:flagshim: )+"
_inner_prefix = None


def clean(cause: str) -> str:
    """The library's message without the "flagshim: " its Go errors carry
    (at its start and where one error wraps another): a message of the
    package has one prefix, the call's ("flagshim.resolve('cuda:1'): ...")."""
    global _inner_prefix
    if "flagshim: " not in cause:
        return cause
    if _inner_prefix is None:
        import re

        _inner_prefix = re.compile(_INNER_PREFIX)
    return _inner_prefix.sub("", cause)


def fail(code: int, context: str, make: "Optional[Callable[[int, str, str], errors.Error]]" = None) -> "NoReturn":
    """Raises the exception for the library's negative code, its message
    "context: <the library's message>", context being the call
    ("flagshim.resolve('cuda:1')"): the one prefix of the message (see
    clean). make(code, message, cause) builds it (default errors.from_code).
    FLAGSHIM_EFORK is always a ForkError, and marks this process forked (a
    fork the process id did not show). FLAGSHIM_EINIT is kept (init_error):
    what Init decided, a failure, does not change, and a forked child
    raises it too."""
    global _forked, init_error
    cause = last_error()
    message = f"{context}: {clean(cause)}" if cause else f"{context}: failed with code {code}"
    if code == errors.EFORK:
        _forked, make = True, None
    elif code == errors.EINIT and init_error is None:
        # Kept without a call's prefix: each call that raises it later gives
        # its own.
        init_error = (code, clean(cause) or f"failed with code {code}", cause)
    raise (make or errors.from_code)(code, message, cause)


def text(call: "Callable[[Optional[_ctypes.Array], int], int]", context: str, size: int = 64, make=None) -> str:
    """Runs call(buf, len) under the size protocol of flagshim.h and returns
    the answer, starting with a buffer of size bytes: on FLAGSHIM_ERANGE it
    doubles the buffer and calls again. Another negative code raises (see
    fail)."""
    while True:
        buf = buffer(size)
        rc = call(buf, size)
        if rc >= 0:
            return buf.raw[:rc].decode("utf-8")
        if rc != errors.ERANGE or size >= _MAX_ANSWER:
            fail(rc, context, make)
        size *= 2


def require(name: str, context: str) -> "Library":
    """The loaded library (get()), which must have name, a function added
    after ABI 1.0; LibraryError where it is older."""
    lib = get()
    if not hasattr(lib, name):
        raise errors.LibraryError(
            f"{context}: {PATH} has ABI {ABI[0]}.{ABI[1]} and lacks {name} (ABI 1.{OPTIONAL.get(name, 0)}): "
            "rebuild the library from the same checkout as this package"
        )
    return lib
