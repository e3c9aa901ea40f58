#!/usr/bin/env python3
"""The presence tier's fork proof, in the shape of the original report.

A Python process loads libflagshim.so (ctypes only, no flagshim package),
waits for flagshim_ready, calls flagshim_resolve("cuda:0"), then forks; the
child must still initialize CUDA (torch.ones(4, device="cuda")). Run once
per tier in a fresh interpreter:

  python scripts/fork-check.py .gpu/libflagshim.so            # all tiers
  python scripts/fork-check.py .gpu/libflagshim.so presence   # one

presence is expected to pass (no driver initialized in the parent); exact
initializes the driver in the parent and is expected to break the child
(what PyTorch's PYTORCH_NVML_BASED_CUDA_CHECK exists for): it is reported
as the contrast, not as a failure. Exit status 1 when presence fails.
"""
import ctypes
import os
import subprocess
import sys


def one(lib_path, tier):
    lib = ctypes.CDLL(lib_path)
    lib.flagshim_resolve.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    assert lib.flagshim_ready() == 0
    buf = ctypes.create_string_buffer(64)
    n = lib.flagshim_resolve(b"cuda:0", buf, 64)
    print(f"{tier}: flagshim_resolve(cuda:0) = {n} {buf.value.decode()!r}", flush=True)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            import torch
            s = torch.ones(4, device="cuda").sum().item()
            print(f"{tier}: child torch.ones(4, device='cuda').sum() = {s}", flush=True)
            code = 0 if s == 4.0 else 2
        except Exception as e:  # the failure the exact tier shows
            print(f"{tier}: child failed: {type(e).__name__}: {e}", flush=True)
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main():
    lib_path = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 2:
        os.environ["FLAGOS_PROBE"] = sys.argv[2]
        sys.exit(one(lib_path, sys.argv[2]))
    failed = False
    for tier in ("presence", "exact"):
        rc = subprocess.run([sys.executable, __file__, lib_path, tier]).returncode
        if tier == "presence":
            print(f"{'PASS' if rc == 0 else 'FAIL'}: presence: the child of a fork after flagshim_resolve initializes CUDA (rc {rc})")
            failed |= rc != 0
        else:
            print(f"INFO: exact: the child {'still works' if rc == 0 else 'cannot initialize CUDA'} (rc {rc}), the trap the presence tier avoids")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
