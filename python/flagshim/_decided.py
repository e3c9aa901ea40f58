"""What this process decided, kept in pure Python for the children it forks.

``flagshim.Init`` runs once per process, and what it decides does not change
afterwards: what ``cuda`` means (the alias) and the table of backends and
devices. So, right after the first call that ran Init, the package keeps the
library's ``info`` answer (``flagshim_info_json``'s text, or Init's error);
a later :func:`flagshim.info` in this process replaces it with the newer
answer. In the child of a fork, where the library cannot run, ``resolve``,
``alias_active``, ``info`` and what derives from them (``is_available``,
``device_count``, ``current_vendor``) answer from it without entering the
library. :func:`parse` is the Go parser's rule (``device/parse.go``) over
that table.
"""

from __future__ import annotations

import _thread

from . import _lib, errors

# typing is for type checkers only, json and re are imported where they are
# used: at import they are most of the package's import time (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

_lock = _thread.allocate_lock()
# (flagshim_info_json's text, or None) and (code, message, cause) of Init's
# failure, or None; each written once under _lock, read without it.
_text: Optional[str] = None
_init_error: Optional[Tuple[int, str, str]] = None
_view: Optional[Tuple[str, "View"]] = None  # the view of a text: (text, view)


# The first buffer record hands flagshim_info_json (bytes).
_INFO_BUFFER = 64 << 10


class Backend(tuple):
    """One backend of info(): (type, available, devices, vendor, routes_to),
    a named tuple written out (typing.NamedTuple costs typing's import)."""

    __slots__ = ()

    def __new__(cls, type: str, available: bool, devices: int, vendor: Optional[str], routes_to: str) -> "Backend":
        return tuple.__new__(cls, (type, available, devices, vendor, routes_to))

    type: str = property(lambda self: self[0])  # type: ignore[assignment]
    available: bool = property(lambda self: self[1])  # type: ignore[assignment]
    devices: int = property(lambda self: self[2])  # type: ignore[assignment]
    vendor: Optional[str] = property(lambda self: self[3])  # type: ignore[assignment]  # its first device's, None when it has none
    routes_to: str = property(lambda self: self[4])  # type: ignore[assignment]


class View(tuple):
    """The parts of info() the package derives answers from: (alias_active,
    aliases, backends, known)."""

    __slots__ = ()

    def __new__(cls, alias_active: bool, aliases: Dict[str, str], backends: Dict[str, Backend], known: List[str]) -> "View":
        return tuple.__new__(cls, (alias_active, aliases, backends, known))

    alias_active: bool = property(lambda self: self[0])  # type: ignore[assignment]
    aliases: Dict[str, str] = property(lambda self: self[1])  # type: ignore[assignment]  # the active alias: {"cuda": "flagos"}, or {}
    backends: Dict[str, Backend] = property(lambda self: self[2])  # type: ignore[assignment]
    known: List[str] = property(lambda self: self[3])  # type: ignore[assignment]  # backends and alias sources, sorted


def record(lib: Any) -> None:
    """Keeps what Init decided, once: called after each call that may have run
    Init. Never raises; where the library cannot tell, nothing is kept."""
    global _text, _init_error
    if _text is not None or _init_error is not None:
        return
    with _lock:
        if _text is not None or _init_error is not None:
            return
        try:
            # One call with room for any usual answer (info --json is a
            # few kilobytes): asking its size first made the library build
            # the whole answer twice; the size protocol still grows the
            # buffer for a larger one.
            _text = _lib.text(lambda buf, size: lib.flagshim_info_json(buf, size), "flagshim.info()", size=_INFO_BUFFER)
        except errors.InitError as e:
            # Kept without a call's prefix: each call that raises it later
            # gives its own.
            _init_error = (e.code, _lib.clean(e.cause) or str(e), e.cause)
        except errors.Error:
            pass


def keep(text: str) -> None:
    """Keeps a newer info answer of this process (flagshim.info)."""
    global _text
    _text = text


def view(context: str) -> View:
    """The view of what this process decided. In a forked child without one
    (the parent never ran Init), ForkError; where Init failed, its InitError."""
    global _view
    if _init_error is not None:
        code, message, cause = _init_error
        raise errors.InitError(f"{context}: {message}", code=code, cause=cause)
    text = _text
    if text is None and not _lib.forked():
        raise errors.Error(f"{context}: the library did not say what its Init decided (flagshim_info_json failed)")
    if text is None:
        raise errors.ForkError(
            f"{context}: {_lib.FORK_MESSAGE}. Nothing was decided before the fork (no flagshim call ran in the "
            "parent), so there is no answer to give here: call flagshim (flagshim.resolve('cuda'), say) in the "
            "parent before forking"
        )
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


def info(context: str) -> Dict[str, Any]:
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


def parse(s: str, v: View) -> str:
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
