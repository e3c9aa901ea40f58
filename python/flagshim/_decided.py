"""What this process decided, for the answers derived from it and for the
children it forks.

``flagshim.Init`` runs once per process, and what it decides does not change
afterwards: what ``cuda`` means (the alias) and the table of backends and
devices. :func:`view` reads it from the library's ``info`` answer
(``flagshim_info_json``) the first time an answer needs it
(``is_available``, ``device_count``, ``current_vendor``, a forked child's
``resolve``); a later :func:`flagshim.info` in this process replaces it with
the newer answer. Init's failure is kept where a call raised it
(``_lib.fail``).

In the child of a fork, where the Go runtime cannot run, ``resolve``,
``alias_active``, ``info`` and what derives from them answer without it:
from the answer this process already read, else from the last answer the
library built in the parent (``flagshim_info_json`` answers it with plain C
there, ABI 1.3). Nothing builds that answer at the fork itself (the
library's fork handler runs under libc's atfork lock, where the vendors'
probes could hang the fork), and the first call does not build it either
(3 ms of the first resolve on a 2-core machine, issue 40): :func:`_before_fork`,
an ``os.register_at_fork`` hook, reads it before each ``os.fork`` of a
process whose calls ran Init (multiprocessing's fork start method, PyTorch's
DataLoader workers). A fork made by C code (ctypes' libc ``fork``, a C
extension) runs no Python hook: its child answers from an answer read
before (any :func:`flagshim.info`, a hook's), else raises ForkError.
:func:`parse` is the Go parser's rule (``device/parse.go``) over that table.
"""

import _thread
import posix

from . import _lib, errors

# typing is for type checkers only, json and re are imported where they are
# used: at import they are most of the package's import time (issue 40).
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

_lock = _thread.allocate_lock()
# flagshim_info_json's text, or None: written under _lock (or by keep),
# read without it.
_text: "Optional[str]" = None
_view: "Optional[Tuple[str, View]]" = None  # the view of a text: (text, view)


# The first buffer _read hands flagshim_info_json (bytes).
_INFO_BUFFER = 64 << 10


class Backend(tuple):
    """One backend of info(): (type, available, devices, vendor, routes_to),
    a named tuple written out (typing.NamedTuple costs typing's import)."""

    __slots__ = ()

    def __new__(cls, type: str, available: bool, devices: int, vendor: "Optional[str]", routes_to: str) -> "Backend":
        return tuple.__new__(cls, (type, available, devices, vendor, routes_to))

    type: str = property(lambda self: self[0])  # type: ignore[assignment]
    available: bool = property(lambda self: self[1])  # type: ignore[assignment]
    devices: int = property(lambda self: self[2])  # type: ignore[assignment]
    vendor: "Optional[str]" = property(lambda self: self[3])  # type: ignore[assignment]  # its first device's, None when it has none
    routes_to: str = property(lambda self: self[4])  # type: ignore[assignment]


class View(tuple):
    """The parts of info() the package derives answers from: (alias_active,
    aliases, backends, known)."""

    __slots__ = ()

    def __new__(cls, alias_active: bool, aliases: "Dict[str, str]", backends: "Dict[str, Backend]", known: "List[str]") -> "View":
        return tuple.__new__(cls, (alias_active, aliases, backends, known))

    alias_active: bool = property(lambda self: self[0])  # type: ignore[assignment]
    aliases: "Dict[str, str]" = property(lambda self: self[1])  # type: ignore[assignment]  # the active alias: {"cuda": "flagos"}, or {}
    backends: "Dict[str, Backend]" = property(lambda self: self[2])  # type: ignore[assignment]
    known: "List[str]" = property(lambda self: self[3])  # type: ignore[assignment]  # backends and alias sources, sorted


def _read(context: str) -> "Optional[str]":
    """The library's info answer: through Go in this process; in a forked
    child, the parent's copy, with plain C (None where the parent took
    none: FLAGSHIM_EFORK)."""
    lib = _lib._LIB
    if not _lib.forked():
        # One call with room for any usual answer (info --json is a few
        # kilobytes): asking its size first made the library build the
        # whole answer twice; the size protocol still grows the buffer.
        return _lib.text(lambda buf, size: lib.flagshim_info_json(buf, size), context, size=_INFO_BUFFER)
    if _lib.ABI < (1, 3):
        return None  # a library of ABI 1.2 or older keeps no copy
    n = lib.flagshim_info_json(None, 0)  # plain C here: the length is free
    if n < 0 or n > _lib._MAX_ANSWER:
        return None
    buf = _lib.buffer(n + 1)
    if lib.flagshim_info_json(buf, n + 1) != n:
        return None
    return buf.raw[:n].decode("utf-8")


def keep(text: str) -> None:
    """Keeps a newer info answer of this process (flagshim.info)."""
    global _text
    _text = text


def _before_fork() -> None:
    """os.fork's before hook: where this process made a call that ran Init
    and has read no info answer, it reads one now, so that the child
    answers from it. It runs in the forking thread before libc's fork,
    outside its atfork lock: an ordinary call. It never runs Init for a
    process that made no call, and never raises (a failure leaves the child
    without an answer: it raises ForkError, or Init's InitError). Where no
    call ran yet, it waits for the Go runtime's start here (flagshim_ready,
    once), so that the library's fork handler, which would wait for it
    under libc's atfork lock, finds it done."""
    global _text, _ready
    if _lib.forked():
        return
    if not _ready:
        try:
            _lib._LIB.flagshim_ready()
        except Exception:  # noqa: BLE001 (a fork hook must not raise)
            pass
        _ready = True
    if _text is not None or not _lib.used or _lib.init_error is not None:
        return
    try:
        with _lock:
            if _text is None:
                _text = _read("flagshim (before os.fork)")
    except Exception:  # noqa: BLE001 (a fork hook must not raise)
        pass


_ready = False  # _before_fork called flagshim_ready

if hasattr(posix, "register_at_fork"):  # os's, without importing os (issue 40)
    posix.register_at_fork(before=_before_fork)


def view(context: str) -> "View":
    """The view of what this process decided. In a forked child without one
    (the parent never ran Init), ForkError; where Init failed, its InitError."""
    global _view, _text
    if _lib.init_error is not None:
        code, message, cause = _lib.init_error
        raise errors.InitError(f"{context}: {message}", code=code, cause=cause)
    text = _text
    if text is None:
        with _lock:
            if _text is None:
                _text = _read(context)
            text = _text
    if text is None:
        if not _lib.used:
            why = ("Nothing was decided before the fork (no flagshim call ran in the parent), so there is no "
                   "answer to give here: call flagshim.info() in the parent before forking")
        else:
            why = ("The parent built no answer for its children before this fork, made outside os.fork (by C "
                   "code: ctypes' libc fork, a C extension), which runs none of Python's fork hooks: call "
                   "flagshim.info() in the parent before such a fork")
        raise errors.ForkError(f"{context}: {_lib.FORK_MESSAGE}. {why}")
    cached = _view
    if cached is not None and cached[0] is text:
        return cached[1]
    import json

    info = json.loads(text)
    alias = info.get("alias", {})
    aliases = {alias["from"]: alias["to"]} if alias.get("active") else {}
    backends = {}
    for b in info.get("backends", []):
        props = b.get("properties") or []
        vendor = props[0].get("vendor") or None if props else None
        backends[b["type"]] = Backend(b["type"], bool(b.get("available")), int(b.get("devices", 0)), vendor,
                                      b.get("routes_to", ""))
    v = View(bool(aliases), aliases, backends, sorted(set(backends) | set(aliases)))
    _view = (text, v)
    return v


def info(context: str) -> "Dict[str, Any]":
    """A fresh copy of the info answer kept."""
    view(context)  # raises where there is none
    import json

    return json.loads(_text)  # type: ignore[arg-type]


# device/parse.go: a lowercase type name, and a decimal index (leading zeros
# allowed) of at most 2^31-1.
_TYPE_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz")
_TYPE_REST = _TYPE_FIRST | frozenset("0123456789_")
_DIGITS = frozenset("0123456789")
_MAX_INDEX = (1 << 31) - 1


def _is_type(s: str) -> bool:
    """s is a type name: [a-z][a-z0-9_]*, ASCII."""
    return s != "" and s[0] in _TYPE_FIRST and all(c in _TYPE_REST for c in s)


def _go_quote(s: str) -> str:
    """s quoted about as Go's %q does, for messages."""
    import json

    return json.dumps(s, ensure_ascii=False)


def parse(s: str, v: "View") -> str:
    """What device string s means under v, as device.Registry.Parse answers:
    "type" or "type:index" after the alias. DeviceError otherwise."""
    typ, colon, num = s.partition(":")
    index = -1
    ok = _is_type(typ)
    if ok and colon:
        sig = num.lstrip("0")
        ok = num != "" and len(sig) <= 10 and all(c in _DIGITS for c in sig)
        if ok:
            index = int(sig) if sig else 0
            ok = index <= _MAX_INDEX
    known = ", ".join(v.known) or "none registered"
    if not ok:
        raise errors.DeviceError(
            f'device: invalid device string {_go_quote(s)}: want "type" or "type:index" with a lowercase registered '
            f"type and a decimal index 0..{_MAX_INDEX} (known types: {known})"
        )
    if typ not in v.backends and typ not in v.aliases:
        raise errors.DeviceError(f"device: unknown device type {_go_quote(typ)} in {_go_quote(s)} (known types: {known})")
    typ = v.aliases.get(typ, typ)
    return typ if index < 0 else f"{typ}:{index}"
