"""The exceptions flagshim raises.

Every error is an :class:`Error`. Those that come from the C library carry
the library's negative code (``FLAGSHIM_E*`` of ``flagshim.h``) in
:attr:`Error.code` and the library's own message (``flagshim_error``) in
:attr:`Error.cause`; errors raised by the Python side have ``code`` ``None``.
"""

# typing is for type checkers only: importing it costs a host's start (issue 40).
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

__all__ = [
    "EINIT",
    "EINVAL",
    "EDEVICE",
    "ERANGE",
    "EHOOK",
    "EBACKEND",
    "ENVSHMEM",
    "EFORK",
    "ENODEV",
    "ESELECT",
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

# The codes of flagshim.h.
EINIT = -1  #: Init could not decide the cuda alias (a bad setting).
EINVAL = -2  #: a NULL or empty argument (a bug of the binding).
EDEVICE = -3  #: a bad device string.
ERANGE = -4  #: the answer did not fit the buffer.
EHOOK = -5  #: a module hook failed.
EBACKEND = -6  #: no driver backend of that name.
ENVSHMEM = -7  #: NVSHMEM could not be attached or initialized.
EFORK = -8  #: called in the child of a fork.
ENODEV = -9  #: (ABI 1.1) no such device here: not available, or an index past its devices.
ESELECT = -10  #: (ABI 1.2) a selection of devices the runtime's rules refuse or cannot decide.


class Error(Exception):
    """The base of every flagshim error.

    Attributes:
        code: the C library's negative code, or ``None`` for errors the
            Python package raises itself.
        cause: the C library's message for the failure (``flagshim_error``),
            or a Python exception's text; ``""`` when there is none.
    """

    def __init__(self, message: str, code: "Optional[int]" = None, cause: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.cause = cause


class InitError(Error):
    """``flagshim.Init`` failed (``FLAGSHIM_EINIT``): a setting it could not
    accept, such as a bad ``FLAGOS_ALIAS_CUDA``; the message names the
    variable. No device string has a meaning in this process."""


class DeviceError(Error, ValueError):
    """A bad device string (``FLAGSHIM_EDEVICE``): its syntax (``type`` or
    ``type:index``) or an unknown type. Also a :class:`ValueError`."""


class NotADeviceString(DeviceError, TypeError):
    """What was given where a device string (or type) is due is not a
    ``str``. A :class:`DeviceError` (so a ``ValueError``), and a
    ``TypeError`` as well: code that caught TypeError keeps working."""


class NoSuchDevice(DeviceError, IndexError):
    """No such device here (``FLAGSHIM_ENODEV``): its backend is not
    available, or the index is past its devices. A :class:`DeviceError` (so
    a ``ValueError``) and an ``IndexError``."""


class HookError(Error):
    """A module hook failed (``FLAGSHIM_EHOOK``); the hooks applied before it
    were undone."""


class BackendError(Error):
    """No driver backend of the given name (``FLAGSHIM_EBACKEND``)."""


class NvshmemError(Error):
    """NVSHMEM could not be attached or initialized (``FLAGSHIM_ENVSHMEM``)."""


class LibraryError(Error, ImportError):
    """libflagshim.so could not be found, was refused (unsafe ownership or
    permissions), or is not the library this package binds to. Raised by
    ``import flagshim``; also an :class:`ImportError`."""


class ForkError(Error):
    """A call that needs the library, in the child of a fork: the Go runtime
    inside libflagshim does not survive ``fork()``. Raised for a fork by
    ``os.fork`` and for one made by C code (the library answers
    ``FLAGSHIM_EFORK``, ``code`` -8, there). What the parent decided
    (``resolve``, ``alias_active``, ``info`` and what derives from them)
    still answers in the child; for the rest use flagshim in the parent, or
    start workers with the ``spawn`` (or ``forkserver``) method."""


class SelectionError(Error, ValueError):
    """A selection of devices that names no device or several, an index
    out of range, devices the runtime cannot show together, or one its
    rules cannot decide (``FLAGSHIM_ESELECT``); the message names the
    device and why. Also a :class:`ValueError`."""


class TritonNotFound(Error, ImportError):
    """Triton is not installed, or lacks the hook flagshim needs
    (``triton.knobs.runtime.kernel_load_end_hook``). Also an
    :class:`ImportError`."""


_BY_CODE = {
    EINIT: InitError,
    EDEVICE: DeviceError,
    EHOOK: HookError,
    EBACKEND: BackendError,
    ENVSHMEM: NvshmemError,
    EFORK: ForkError,
    ENODEV: NoSuchDevice,
    ESELECT: SelectionError,
}


def from_code(code: int, message: str, cause: str = "") -> "Error":
    """The exception for the C library's negative ``code``: the matching
    subclass, or :class:`Error` for a code no caller should see (EINVAL,
    ERANGE, or one this package does not know)."""
    return _BY_CODE.get(code, Error)(message, code=code, cause=cause)
