"""Which device is it: torch.cuda's device questions, answered by flagshim.

:func:`get_device_properties` gives a device's record (the same in every
probe tier: ``docs/identity.md``) as a typed :class:`DeviceProperties`;
:func:`get_device_name`, :func:`get_device_capability` and
:func:`mem_get_info` answer as ``torch.cuda``'s functions of those names
do. ``type`` follows the alias as :func:`flagshim.resolve` does: on a
MUSA-only machine where ``cuda`` means ``flagos``, ``type="cuda"`` answers
for the MUSA device flagos routes to.

A field the probe tier cannot know is ``None`` (``unknown`` says why): the
presence tier (the C library's default) reads the management library (NVML,
...) and sysfs, which give no multiprocessor count, say; the exact tier
(``FLAGOS_PROBE=exact``) initializes the driver in this process.

In the child of a fork, :func:`get_device_properties`,
:func:`get_device_name` and :func:`get_device_capability` answer from the
records the parent read (a call in the parent reads every device of that
type), without entering the library; :func:`mem_get_info`, whose answer
changes, raises :class:`~flagshim.errors.ForkError` there.
"""

from __future__ import annotations

import _ctypes
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from . import _decided, _lib, errors

__all__ = ["DeviceProperties", "get_device_properties", "get_device_name", "get_device_capability", "mem_get_info"]

#: The largest index a device string takes (device/parse.go).
_MAX_INDEX = (1 << 31) - 1


@dataclass(frozen=True)
class DeviceProperties:
    """One device's record. Each field is ``None`` where the probe tier
    cannot know it; :attr:`unknown` maps the record's keys to the reason.

    Attributes:
        name: the product name, ``"NVIDIA H100 80GB HBM3"``.
        uuid: the UUID in the vendor's own form, ``"GPU-8a1f..."``.
        pci_bus_id: the PCI address in sysfs's form, ``"0000:18:00.0"``
            (torch's ``pci_bus_id`` is the bus number alone).
        total_memory: bytes the runtime can allocate, torch's
            ``total_memory`` in every tier (the driver's
            ``cuDeviceTotalMem``; in the presence tier the management
            library's total less what the driver and firmware reserve,
            ``record["reserved_memory"]``: nvidia-smi's memory.total is the
            sum).
        major, minor: the compute capability (or architecture).
        multi_processor_count: multiprocessors (SMs, CUs).
        vendor: the maker in FlagOS's vocabulary, ``"nvidia"``.
        device: the device string that names it, ``"cuda:0"``.
        type: the vendor backend that serves it, ``"cuda"``, ``"musa"``.
        index: the physical index, as nvidia-smi numbers it.
        visible_index: what a device string names (``cuda:N``).
        numa_node: the NUMA node (-1 where the platform gives none).
        driver_version: the kernel driver's version.
        tier: the probe tier that answered.
        unknown: the record's fields this tier cannot know, and why.
        record: the whole record (``flagshim_device_json``'s object).
    """

    name: Optional[str]
    uuid: Optional[str]
    pci_bus_id: Optional[str]
    total_memory: Optional[int]
    major: Optional[int]
    minor: Optional[int]
    multi_processor_count: Optional[int]
    vendor: Optional[str]
    device: str = ""
    type: str = ""
    index: Optional[int] = None
    visible_index: Optional[int] = None
    numa_node: Optional[int] = None
    driver_version: Optional[str] = None
    tier: str = ""
    unknown: Dict[str, str] = field(default_factory=dict)
    record: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def _properties(rec: Dict[str, Any]) -> DeviceProperties:
    """The typed view of a record: None for what it names unknown (or
    leaves empty)."""
    unknown = dict(rec.get("unknown") or {})

    def text(key: str) -> Optional[str]:
        v = rec.get(key)
        if key in unknown or not isinstance(v, str) or v == "":
            return None
        return v

    def known_int(key: str, none_when_zero: bool = True) -> Optional[int]:
        v = rec.get(key)
        if key in unknown or not isinstance(v, int) or isinstance(v, bool) or (none_when_zero and v == 0):
            return None
        return v

    index = rec.get("index")
    visible = rec.get("visible_index")
    capability_known = "major" not in unknown and (rec.get("major") or rec.get("minor"))
    return DeviceProperties(
        name=text("name"),
        uuid=text("uuid"),
        pci_bus_id=text("pci_bus_id"),
        total_memory=known_int("total_memory"),
        major=rec.get("major") if capability_known else None,
        minor=rec.get("minor") if capability_known else None,
        multi_processor_count=known_int("multiprocessors"),
        vendor=text("vendor"),
        device=rec.get("device") or "",
        type=rec.get("type") or "",
        index=index if isinstance(index, int) and index >= 0 else None,
        visible_index=visible if isinstance(visible, int) and visible >= 0 else None,
        numa_node=known_int("numa_node", none_when_zero=False),
        driver_version=text("driver_version"),
        tier=rec.get("tier") or "",
        unknown=unknown,
        record=rec,
    )


def _device(index: Any, type: Any, name: str) -> Tuple[str, bytes, str]:  # noqa: A002
    """The device string of (index, type), checked: (it, its UTF-8, the
    context for messages)."""
    context = f"flagshim.{name}({index!r}, type={type!r})"
    if not issubclass(_pytype(type), str):
        raise errors.NotADeviceString(f"{context}: type is a device type such as 'cuda', not {_pytype(type).__name__}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise errors.DeviceError(f"{context}: index is an int (0, 1, ...; -1 for the current device), not {_pytype(index).__name__}")
    if not -1 <= index <= _MAX_INDEX:
        raise errors.NoSuchDevice(f"{context}: index {index} is outside 0..{_MAX_INDEX} (or -1 for the current device)")
    t = str.__str__(type)
    if ":" in t or not t or "\0" in t:
        raise errors.DeviceError(f"{context}: type is a device type such as 'cuda', not {t!r}")
    s = t if index < 0 else f"{t}:{index}"
    try:
        return s, s.encode("utf-8"), context
    except UnicodeEncodeError as e:
        raise errors.DeviceError(f"{context}: not a device type: character {e.start} cannot be encoded ({e.reason})") from None


def _pytype(v: Any) -> type:
    return v.__class__


# Records read in this process, by resolved device string ("flagos:0"), for
# the children it forks; and, by resolved type, how many devices it has.
_lock = threading.Lock()
_records: Dict[str, Dict[str, Any]] = {}
_counts: Dict[str, int] = {}


def _record(lib: Any, arg: bytes, context: str) -> Dict[str, Any]:
    text = _lib.text(lambda buf, n: lib.flagshim_device_json(arg, buf, n), context, size=2048)
    return json.loads(text)


def _keep(lib: Any, resolved: str, rec: Dict[str, Any]) -> None:
    """Keeps rec and, once per type, every device of that type, so that a
    forked child can answer for any of them."""
    typ = resolved.partition(":")[0]
    with _lock:
        _records[resolved] = rec
        if typ in _counts:
            return
    try:
        n = next((b.devices for t, b in _decided.view("flagshim").backends.items() if t == typ and b.available), 0)
    except errors.Error:
        return
    others = {}
    for i in range(n):
        key = f"{typ}:{i}"
        if key in _records:
            continue
        try:
            others[key] = _record(lib, key.encode(), key)
        except errors.Error:
            pass
    with _lock:
        _records.update(others)
        _counts[typ] = n


def get_device_properties(index: int = 0, type: str = "cuda") -> DeviceProperties:  # noqa: A002
    """The record of device ``type:index`` (``index=-1``: the current
    device), typed; see :class:`DeviceProperties`.

    Raises:
        NoSuchDevice: no such device here (also an IndexError and a
            ValueError).
        DeviceError: a bad type or index (also a ValueError).
        BackendError: the backend gives no records (``cpu``).
        InitError: flagshim could not initialize (a bad setting).
        ForkError: in the child of a fork whose parent read no record of
            that type.
    """
    s, arg, context = _device(index, type, "get_device_properties")
    if _lib.forked():
        resolved = _decided.parse(s, _decided.view(context))
        typ, _, num = resolved.partition(":")
        rec = _records.get(resolved)
        if rec is None and typ in _counts and num and int(num) >= _counts[typ]:
            raise errors.NoSuchDevice(f"{context}: {resolved}: the parent saw {_counts[typ]} {typ} device(s)")
        if rec is None:
            raise errors.ForkError(
                f"{context}: {_lib.FORK_MESSAGE}. The parent read no record of {resolved}: call "
                f"flagshim.get_device_properties(type={type!r}) in the parent before forking"
            )
        return _properties(rec)
    lib = _lib.require("flagshim_device_json", context)
    rec = _record(lib, arg, context)
    resolved = rec.get("device") or ""
    if resolved:
        _keep(lib, _resolve_type(s, resolved), rec)
    return _properties(rec)


def _resolve_type(asked: str, device: str) -> str:
    """The key records are kept under: what asked resolves to here
    ("flagos:0" for "cuda:0" under the alias), with the record's index."""
    typ = asked.partition(":")[0]
    try:
        typ = _decided.parse(typ, _decided.view("flagshim"))
    except errors.Error:
        pass
    return f"{typ}:{device.partition(':')[2]}"


def get_device_name(index: int = 0, type: str = "cuda") -> Optional[str]:  # noqa: A002
    """The device's name (``torch.cuda.get_device_name``); ``None`` where the
    tier cannot know it. Raises as :func:`get_device_properties`."""
    return get_device_properties(index, type).name


def get_device_capability(index: int = 0, type: str = "cuda") -> Optional[Tuple[int, int]]:  # noqa: A002
    """The compute capability ``(major, minor)``
    (``torch.cuda.get_device_capability``); ``None`` where the tier cannot
    know it. Raises as :func:`get_device_properties`."""
    p = get_device_properties(index, type)
    if p.major is None or p.minor is None:
        return None
    return (p.major, p.minor)


def mem_get_info(index: int = 0, type: str = "cuda") -> Tuple[int, int]:  # noqa: A002
    """The device's ``(free, total)`` memory in bytes
    (``torch.cuda.mem_get_info``): in the presence tier the management
    library's answer (NVML's ``nvmlDeviceGetMemoryInfo_v2``: its free
    memory, and its total less the reserve, which is the driver's total; no
    driver is initialized in this process), in the exact tier the driver's
    (``cuMemGetInfo``, with the device's context current). The total is
    torch's in both.

    Raises:
        NoSuchDevice, DeviceError, InitError: as :func:`get_device_properties`.
        BackendError: the backend has no device memory, or the tier cannot
            tell its free memory.
        ForkError: in the child of a fork.
    """
    s, arg, context = _device(index, type, "mem_get_info")
    lib = _lib.require("flagshim_mem_get_info", context)
    free, total = _lib.c_ulonglong(), _lib.c_ulonglong()
    rc = lib.flagshim_mem_get_info(arg, _ctypes.byref(free), _ctypes.byref(total))
    if rc < 0:
        _lib.fail(rc, context)
    return free.value, total.value
