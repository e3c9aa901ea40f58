"""NVSHMEM through flagshim: its scoped module hook for modules other loaders
load.

After :func:`enable`, :func:`flagshim.module_loaded` runs
``nvshmemx_cumodule_init`` on the modules that carry NVSHMEM's device
symbols (kernels built with ``-rdc=true`` and linked against
``libnvshmem_device``), and on no other: a plain kernel (a Triton kernel,
say) is left alone, where calling ``nvshmemx_cumodule_init`` on it would fail
with "named symbol not found". :func:`flagshim.triton.install` wires that
into Triton's kernel loads.
"""

from __future__ import annotations

from . import _decided, _lib, errors

__all__ = ["enable"]


def enable(device: int = 0, *, init: bool = False) -> None:
    """Registers NVSHMEM's module hook on CUDA device ``device``.

    With ``init=False`` (the default) flagshim attaches to the NVSHMEM this
    process already loaded and initialized (``libnvshmem_host.so.3``, through
    nvshmem4py or your own code): it is found among the loaded libraries, and
    a second copy is never loaded. With ``init=True`` flagshim opens NVSHMEM
    itself (``FLAGOS_LIBNVSHMEM_PATH``, else the usual library search) and
    initializes this process as PE 0 of 1 with the unique-id bootstrap.

    A second call, of either kind, does nothing.

    Raises:
        NvshmemError: NVSHMEM is not loaded or not initialized (attach), the
            library is missing or its initialization failed (init), or there
            is no CUDA backend; ``cause`` has the library's message.
        InitError: flagshim could not initialize (a bad setting).
        ValueError: device is negative.
    """
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"flagshim.nvshmem.enable: device must be an int, not {type(device).__name__}")
    if device < 0:
        raise ValueError(f"flagshim.nvshmem.enable: device must be >= 0, not {device}")
    lib = _lib.get()
    call = lib.flagshim_nvshmem_init if init else lib.flagshim_nvshmem_attach
    rc = call(device)
    if rc >= 0:
        return
    how = "init" if init else "attach"

    def make(code: int, message: str, cause: str) -> errors.Error:
        if code == errors.EINIT:
            return errors.InitError(message, code=code, cause=cause)
        return errors.NvshmemError(message, code=code, cause=cause)

    _lib.fail(rc, f"flagshim.nvshmem.enable({device}, init={init}): NVSHMEM {how}", make)
