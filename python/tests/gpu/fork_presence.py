"""GPU proof: flagshim's default presence tier leaves CUDA usable in a forked
child. Run on a CUDA machine with torch (scripts/python-gpu.sh run):

    FLAGSHIM_LIBRARY=/abs/libflagshim.so PYTHONPATH=python python python/tests/gpu/fork_presence.py

The parent imports flagshim (FLAGOS_PROBE unset: presence), calls
resolve("cuda:0") and info(), then forks; in the child
torch.ones(4, device="cuda").sum() must work, and so must NVML's own
init, count, name and shutdown in another child (the C library leaves the
parent's NVML session open): PASS. The contrast, in a
subprocess with FLAGOS_PROBE=exact (flagshim initializes CUDA in the parent
before the fork: the child's CUDA then fails), is reported as INFO, not as a
failure.

Prints PASS, FAIL or INFO lines; exits 1 when a check failed.
"""

import os
import signal
import subprocess
import sys
import time
import traceback

failures = []


def report(ok, what, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""), flush=True)
    if not ok:
        failures.append(what)


def info(what, detail=""):
    print(f"INFO {what}" + (f": {detail}" if detail else ""), flush=True)


def wait(pid, seconds=120):
    """The child's exit code, or None after seconds (it is killed then)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def in_child(work):
    """Forks; the child runs work(), which returns (message, exit code), and
    exits with that code (a raised error is exit 1). Returns (exit code,
    what the child said)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            msg, code = work()
        except BaseException as e:  # the child must never return into the parent's code
            msg, code = f"{type(e).__name__}: {e}", 1
        os.write(w, msg.encode()[:4000])
        os._exit(code)
    os.close(w)
    code = wait(pid)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode("utf-8", "replace")
    return code, said


def fork_and_use_cuda():
    """Forks; the child sums torch.ones(4) on the GPU. Returns (exit code,
    what the child printed)."""
    import torch

    def work():
        v = torch.ones(4, device="cuda").sum().item()
        return f"sum {v}", 0 if v == 4 else 2

    return in_child(work)


def fork_and_use_nvml():
    """Forks; the child asks NVML itself (init, count, the first device's
    name, shutdown), as a DataLoader worker's NVML-based CUDA check would:
    the C library leaves the parent's NVML session open
    (flagshim.WithoutShutdown), and the child's own must still work.
    Returns (exit code, what the child printed)."""
    import ctypes

    def work():
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        count, name = ctypes.c_uint(0), ctypes.create_string_buffer(96)
        handle = ctypes.c_void_p()
        rcs = [nvml.nvmlInit_v2(), nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)),
               nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)),
               nvml.nvmlDeviceGetName(handle, name, 96), nvml.nvmlShutdown()]
        msg = f"return codes {rcs}, {count.value} device(s), device 0 {name.value.decode()!r}"
        return msg, 0 if rcs == [0] * 5 and count.value > 0 else 2

    return in_child(work)


def parent():
    """resolve and info in this process, before any fork."""
    import torch

    import flagshim

    r = flagshim.resolve("cuda:0")
    facts = flagshim.info()
    return r, facts["probe"], torch.cuda.is_initialized()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--exact-child":
        # The contrast's process: FLAGOS_PROBE=exact is set by the caller.
        r, probe, torch_init = parent()
        code, said = fork_and_use_cuda()
        print(f"CONTRAST probe={probe} resolve={r} torch_initialized={torch_init} child_exit={code} child={said}")
        return

    probe_env = os.environ.get("FLAGOS_PROBE")
    info("FLAGOS_PROBE", repr(probe_env) + ("" if probe_env is None else " (set: the default tier is not what runs)"))
    import torch

    import flagshim

    info("versions", f"python {sys.version.split()[0]}, torch {torch.__version__}, flagshim {flagshim.__version__} "
         f"({flagshim.library_path()})")
    r, probe, torch_init = parent()
    report(r == "cuda:0", "resolve('cuda:0') in the parent", r)
    report(probe == "presence", "info(): the presence tier answered", probe)
    report(not torch_init, "torch has not initialized CUDA in the parent")
    code, said = fork_and_use_cuda()
    report(code == 0, "forked child: torch.ones(4, device='cuda').sum() works after flagshim's presence probe",
           f"exit {code}, {said}")
    code, said = fork_and_use_nvml()
    report(code == 0, "forked child: NVML's own init, count, name and shutdown work after flagshim's presence probe "
           "(which leaves the parent's NVML session open)", f"exit {code}, {said}")

    env = dict(os.environ, FLAGOS_PROBE="exact")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--exact-child"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    line = next((x for x in p.stdout.splitlines() if x.startswith("CONTRAST ")), None)
    if line:
        info("contrast FLAGOS_PROBE=exact (CUDA initialized in the parent before the fork)", line[len("CONTRAST "):])
    else:
        info("contrast FLAGOS_PROBE=exact did not report", f"exit {p.returncode}: {p.stdout[-2000:]}")


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        report(False, "the proof ran to its end")
    if len(sys.argv) <= 1:
        print(f"{'FAIL' if failures else 'PASS'} fork_presence: {len(failures)} failure(s)", flush=True)
    sys.exit(1 if failures else 0)
