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

import json
import re
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from . import _lib, errors

_lock = threading.Lock()
# (flagshim_info_json's text, or None) and (code, message, cause) of Init's
# failure, or None; each written once under _lock, read without it.
_text: Optional[str] = None
_init_error: Optional[Tuple[int, str, str]] = None
_view: Optional[Tuple[str, "View"]] = None  # the view of a text: (text, view)


class Backend(NamedTuple):
    type: str
    available: bool
    devices: int
    vendor: Optional[str]  # its first device's, None when it has none
    routes_to: str


class View(NamedTuple):
    """The parts of info() the package derives answers from."""

    alias_active: bool
    aliases: Dict[str, str]  # the active alias: {"cuda": "flagos"}, or {}
    backends: Dict[str, Backend]
    known: List[str]  # backends and alias sources, sorted (device.Registry's known)


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
            n = lib.flagshim_info_json(None, 0)
            if n < 0:
                _lib.fail(n, "flagshim.info()")
            _text = _lib.text(lambda buf, size: lib.flagshim_info_json(buf, size), "flagshim.info()", size=n + 1)
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
    return json.loads(_text)  # type: ignore[arg-type]


# device/parse.go: a lowercase type name, and a decimal index (leading zeros
# allowed) of at most 2^31-1.
_TYPE = re.compile(r"[a-z][a-z0-9_]*", re.ASCII)
_DIGITS = re.compile(r"[0-9]*", re.ASCII)
_MAX_INDEX = (1 << 31) - 1


def _go_quote(s: str) -> str:
    """s quoted about as Go's %q does, for messages."""
    return json.dumps(s, ensure_ascii=False)


def parse(s: str, v: View) -> str:
    """What device string s means under v, as device.Registry.Parse answers:
    "type" or "type:index" after the alias. DeviceError otherwise."""
    typ, colon, num = s.partition(":")
    index = -1
    ok = _TYPE.fullmatch(typ) is not None
    if ok and colon:
        sig = num.lstrip("0")
        ok = num != "" and len(sig) <= 10 and _DIGITS.fullmatch(sig) is not None
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
