"""flagshim's module hooks on the kernels Triton loads.

:func:`install` adds a hook to Triton's ``knobs.runtime.kernel_load_end_hook``
(Triton 3.6): each time Triton loads a compiled kernel's module, the hook
calls :func:`flagshim.module_loaded` on it, on Triton's thread and with its
context current, and records which hooks ran. With NVSHMEM enabled
(:func:`flagshim.nvshmem.enable`), a kernel that uses NVSHMEM gets
``nvshmemx_cumodule_init`` and a plain kernel gets nothing.

Importing this module does not import Triton; :func:`install` does.

Triton calls the hook as ``hook(module, function, name, metadata_group,
hash)`` (positionally in Triton 3.6; the hook accepts the same names as
keywords too), where ``module`` is the CUmodule (hipModule_t) handle as an
int. Triton never unloads a kernel's module, so no unloading hook is needed.
"""

from __future__ import annotations

import _thread

# typing is for type checkers only: importing it costs a host's start (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Union

import flagshim

from . import errors

__all__ = ["install", "hooks_ran", "last_results"]

#: The hooks flagshim ran on each module Triton loaded since install():
#: module handle -> names of the hooks that ran ([] for a plain kernel).
last_results: Dict[int, List[str]] = {}

# Kernel name -> the handle of the module last loaded under that name.
_by_name: Dict[str, int] = {}
_lock = _thread.allocate_lock()


def hooks_ran(name_or_module: Union[str, int]) -> Optional[List[str]]:
    """The names of the hooks flagshim ran on a module Triton loaded, by its
    handle (an int) or by the kernel's name (the module last loaded under it);
    None when no such load was seen since :func:`install`."""
    with _lock:
        if isinstance(name_or_module, str):
            h = _by_name.get(name_or_module)
            if h is None:
                return None
        else:
            h = int(name_or_module)
        names = last_results.get(h)
        return list(names) if names is not None else None


class _Hook:
    """The callable added to kernel_load_end_hook."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.active = True

    def __call__(
        self,
        module: Any = None,
        function: Any = None,
        name: Optional[str] = None,
        metadata_group: Any = None,
        hash: Optional[str] = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        if not self.active or module is None:
            return
        handle = int(module)
        # A failing hook raises: the kernel would not work, and Triton then
        # reports the failure at its load instead of a wrong result later.
        names = flagshim.module_loaded(handle, self.backend)
        with _lock:
            last_results[handle] = names
            if name is not None:
                _by_name[str(name)] = handle

    def __repr__(self) -> str:
        return f"<flagshim.triton hook backend={self.backend!r}>"


def _runtime_knobs() -> Any:
    import importlib  # here: install() alone needs it

    try:
        triton = importlib.import_module("triton")
    except ImportError as e:
        raise errors.TritonNotFound(
            f"flagshim.triton.install: Triton is not importable ({e}): install Triton 3.6 or newer "
            "(pip install triton), or do not call flagshim.triton.install()",
            cause=str(e),
        ) from e
    version = getattr(triton, "__version__", "unknown")
    try:
        knobs = getattr(triton, "knobs", None) or importlib.import_module("triton.knobs")
        runtime = knobs.runtime
        runtime.kernel_load_end_hook  # noqa: B018 (its presence is the check)
    except (ImportError, AttributeError) as e:
        raise errors.TritonNotFound(
            f"flagshim.triton.install: Triton {version} has no triton.knobs.runtime.kernel_load_end_hook "
            f"({e}): flagshim needs Triton 3.6 or newer",
            cause=str(e),
        ) from e
    return runtime


def install(*, backend: str = "cuda") -> Callable[[], None]:
    """Adds flagshim's hook to Triton's kernel loads and returns ``remove()``,
    which takes it away again (a second ``remove()`` does nothing).

    backend names the driver Triton loads kernels with: ``"cuda"`` (NVIDIA),
    ``"hip"`` (AMD), ``"musa"``. The results are in :data:`last_results` and
    :func:`hooks_ran`.

    Where ``kernel_load_end_hook`` is a HookChain (Triton 3.6) the hook is
    added to it. Where an older Triton has a plain attribute there, the hook
    is composed with the one already set (both run, flagshim's first), and
    ``remove()`` puts the previous one back.

    Raises:
        TritonNotFound: (also an ImportError) Triton is not installed, or it
            lacks ``knobs.runtime.kernel_load_end_hook``.
    """
    if not isinstance(backend, str):
        raise TypeError(f"flagshim.triton.install: backend must be a str, not {type(backend).__name__}")
    runtime = _runtime_knobs()
    hook = _Hook(backend)
    current = runtime.kernel_load_end_hook
    done = False

    if callable(getattr(current, "add", None)) and callable(getattr(current, "remove", None)):
        chain = current
        chain.add(hook)

        def remove() -> None:
            nonlocal done
            if done:
                return
            done = True
            hook.active = False
            chain.remove(hook)

        return remove

    previous = current

    def composed(*args: Any, **kwargs: Any) -> None:
        hook(*args, **kwargs)
        if previous is not None:
            previous(*args, **kwargs)

    composed.flagshim_hook = hook  # type: ignore[attr-defined]
    runtime.kernel_load_end_hook = composed

    def remove_plain() -> None:
        nonlocal done
        if done:
            return
        done = True
        hook.active = False
        # Put the previous hook back, unless someone replaced ours since: then
        # ours stays in their chain, inactive, and theirs is left alone.
        if runtime.kernel_load_end_hook is composed:
            runtime.kernel_load_end_hook = previous

    return remove_plain
