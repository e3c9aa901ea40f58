"""A stand-in for Triton in flagshim's tests: only what flagshim.triton
touches, knobs.runtime.kernel_load_end_hook, shaped as in Triton 3.6 (a
chain of hooks with add and remove, called once per module load)."""

__version__ = "3.6.0+flagshim.stub"

from . import knobs  # noqa: E402,F401
