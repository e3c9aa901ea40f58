"""GPU proof, in one Python process: NVSHMEM and Triton together through
flagshim's scoped module hook. Run on a CUDA machine with torch, Triton 3.6,
cuda-bindings (optional) and the NVSHMEM wheel (scripts/python-gpu.sh run):

    FLAGSHIM_LIBRARY=/abs/libflagshim.so PYTHONPATH=python \\
    FLAGOS_LIBNVSHMEM_PATH=/abs/libnvshmem_host.so.3 \\
    FLAGSHIM_NVSHMEM_FIXTURES=plugins/nvshmem/testdata/build \\
        python python/tests/gpu/triton_nvshmem.py

(a) NVSHMEM initialized for one PE (flagshim.nvshmem.enable(0, init=True)),
    flagshim.triton.install(); a plain @triton.jit add kernel gives x+y
    exactly, and flagshim reports that no hook ran on its module; NVSHMEM
    prints nothing about it.
(b) The control: a process-wide kernel_load_end_hook that calls
    nvshmemx_cumodule_init on every module fails (nonzero, 7) on a fresh
    plain kernel, "named symbol not found" on stderr where NVSHMEM prints it.
(c) The -rdc fixture pe.cubin (scripts/nvshmem-build.sh), loaded by the host
    (cuda-bindings' cuModuleLoadData, else ctypes on libcuda), gets the hook
    through flagshim.module_loaded (["nvshmem"]) and its kernel write_pe reads
    my_pe 0 and n_pes 1.
(d) resolve("cuda:0") is "cuda:0", alias_active() is False, info() answers,
    and module_loaded on an unhooked plain module answers [] and changes
    nothing (the kernel still adds).

Prints one PASS, FAIL or INFO line per check; exits 1 when any check failed.
"""

import contextlib
import ctypes
import importlib.util
import os
import subprocess
import sys
import tempfile
import traceback

failures = []


def report(ok, what, detail=""):
    line = f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else "")
    print(line, flush=True)
    if not ok:
        failures.append(what)
    return ok


def info(what, detail=""):
    print(f"INFO {what}" + (f": {detail}" if detail else ""), flush=True)


@contextlib.contextmanager
def captured_stderr():
    """Captures file descriptor 2 (where NVSHMEM and the driver print) into
    box["text"], then echoes it to the real stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    box = {"text": ""}
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            box["text"] = tmp.read().decode("utf-8", "replace")
            sys.stderr.write(box["text"])
            sys.stderr.flush()


def nvshmem_library():
    """FLAGOS_LIBNVSHMEM_PATH, else the nvidia-nvshmem wheel's
    libnvshmem_host.so.3 (this interpreter's, else python3's)."""
    path = os.environ.get("FLAGOS_LIBNVSHMEM_PATH", "")
    if path:
        return path
    find = (
        "import importlib.util, os\n"
        "s = importlib.util.find_spec('nvidia.nvshmem')\n"
        "print(os.path.join(list(s.submodule_search_locations)[0], 'lib', 'libnvshmem_host.so.3'))\n"
    )
    try:
        spec = importlib.util.find_spec("nvidia.nvshmem")
    except ModuleNotFoundError:
        spec = None
    if spec is not None:
        path = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libnvshmem_host.so.3")
    else:
        r = subprocess.run(["python3", "-c", find], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        path = r.stdout.strip() if r.returncode == 0 else ""
    if path:
        os.environ["FLAGOS_LIBNVSHMEM_PATH"] = path  # read by flagshim's Init, which has not run yet
    return path


def fixtures_dir():
    d = os.environ.get("FLAGSHIM_NVSHMEM_FIXTURES", "")
    if d:
        return d
    return os.path.join(os.getcwd(), "plugins", "nvshmem", "testdata", "build")


class Driver:
    """The host's own CUDA driver calls: module loads through cuda-bindings
    where installed (else ctypes on libcuda), launches through ctypes."""

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.cu.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        self.cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        self.cu.cuModuleUnload.argtypes = [ctypes.c_void_p]
        self.cu.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        try:
            from cuda.bindings import driver  # noqa: F401

            self.bindings = driver
            self.loader = "cuda-bindings"
        except ImportError:
            self.bindings = None
            self.loader = "ctypes (cuda-bindings not installed)"
        dev = ctypes.c_int()
        ctx = ctypes.c_void_p()
        self.check(self.cu.cuInit(0), "cuInit")
        self.check(self.cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    @staticmethod
    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUresult {rc}")

    def load(self, image: bytes) -> int:
        buf = ctypes.create_string_buffer(image, len(image) + 1)
        if self.bindings is not None:
            try:
                err, mod = self.bindings.cuModuleLoadData(ctypes.addressof(buf))
            except TypeError as e:  # a cuda-bindings that takes no address: ctypes instead
                info("cuda-bindings cuModuleLoadData refused an address; loading through ctypes", str(e))
                self.bindings, self.loader = None, f"ctypes (cuda-bindings: {e})"
            else:
                if err != self.bindings.CUresult.CUDA_SUCCESS:
                    raise RuntimeError(f"cuda-bindings cuModuleLoadData: {err}")
                return int(mod)
        mod = ctypes.c_void_p()
        self.check(self.cu.cuModuleLoadData(ctypes.byref(mod), ctypes.addressof(buf)), "cuModuleLoadData")
        return mod.value

    def launch1(self, module: int, kernel: str, *pointers: int) -> None:
        fn = ctypes.c_void_p()
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), module, kernel.encode()), f"cuModuleGetFunction {kernel}")
        args = [ctypes.c_uint64(p) for p in pointers]
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.check(self.cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, params, None), f"cuLaunchKernel {kernel}")
        self.check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def unload(self, module: int) -> None:
        self.check(self.cu.cuModuleUnload(module), "cuModuleUnload")


def main():
    nvs_path = nvshmem_library()
    info("libnvshmem_host", nvs_path or "not found (set FLAGOS_LIBNVSHMEM_PATH)")

    import torch
    import triton
    import triton.knobs
    import triton.language as tl

    import flagshim
    import flagshim.nvshmem
    import flagshim.triton

    info("versions", f"python {sys.version.split()[0]}, torch {torch.__version__}, triton {triton.__version__}, "
         f"flagshim {flagshim.__version__} ({flagshim.library_path()})")

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 100_000
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.arange(n, dtype=torch.float32, device="cuda") * 2 + 0.5
    want = x + y

    def add(block):
        out = torch.empty_like(x)
        k = add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
        torch.cuda.synchronize()
        return out, getattr(k, "module", None)

    drv = Driver()
    info("host module loader", drv.loader)

    # (a) NVSHMEM for one PE, flagshim's hook in Triton, a plain kernel.
    nvshmem_up = False
    try:
        flagshim.nvshmem.enable(0, init=True)
        nvshmem_up = True
        report(True, "(a) NVSHMEM initialized for one PE through flagshim.nvshmem.enable(0, init=True)")
    except flagshim.Error as e:
        report(False, "(a) NVSHMEM init", f"{type(e).__name__}: {e}")
    remove = flagshim.triton.install()
    with captured_stderr() as err_a:
        out, plain_module = add(1024)
    report(torch.equal(out, want), "(a) the plain Triton add kernel gives x+y exactly")
    if plain_module is None:
        plain_module = next(iter(flagshim.triton.last_results), None)
    ran = flagshim.triton.hooks_ran(plain_module) if plain_module is not None else None
    report(ran == [], "(a) flagshim ran no hook on the plain kernel's module",
           f"module {plain_module:#x}, hooks {ran}" if plain_module is not None else "the hook never saw a module load")
    report("named symbol not found" not in err_a["text"] and "NVSHMEM is not initialized" not in err_a["text"],
           "(a) NVSHMEM printed nothing about the plain kernel")

    # (b) The control: nvshmemx_cumodule_init on every module, a fresh kernel.
    if nvshmem_up:
        lib = ctypes.CDLL(nvs_path, mode=os.RTLD_NOLOAD | ctypes.RTLD_LOCAL)  # the copy flagshim loaded
        lib.nvshmemx_cumodule_init.argtypes = [ctypes.c_void_p]
        lib.nvshmemx_cumodule_init.restype = ctypes.c_int
        codes = []

        def every_module(module=None, function=None, name=None, metadata_group=None, hash=None, *a, **kw):
            if module is not None:
                codes.append(lib.nvshmemx_cumodule_init(int(module)))

        chain = triton.knobs.runtime.kernel_load_end_hook
        chain.add(every_module)
        try:
            with captured_stderr() as err_b:
                out_b, _ = add(512)  # another constexpr: another compile, another module load
        finally:
            chain.remove(every_module)
        report(bool(codes) and codes[-1] != 0, "(b) control: nvshmemx_cumodule_init on a plain kernel fails",
               f"returned {codes}")
        if "named symbol not found" in err_b["text"]:
            report(True, "(b) control: NVSHMEM printed \"named symbol not found\"")
        else:
            info("(b) control: no \"named symbol not found\" seen on stderr", err_b["text"].strip()[-300:])
        info("(b) the control kernel's sum", "x+y" if torch.equal(out_b, want) else "wrong")
    else:
        report(False, "(b) control", "NVSHMEM is not initialized")

    # (c) The NVSHMEM fixture through the host's loader and module_loaded.
    cubin = os.path.join(fixtures_dir(), "pe.cubin")
    if not nvshmem_up:
        report(False, "(c) pe.cubin", "NVSHMEM is not initialized")
    elif not os.path.isfile(cubin):
        report(False, "(c) pe.cubin", f"{cubin} is missing: run scripts/nvshmem-build.sh on this machine "
               "(or set FLAGSHIM_NVSHMEM_FIXTURES)")
    else:
        with open(cubin, "rb") as f:
            image = f.read()
        mod = drv.load(image)
        info("(c) pe.cubin loaded by the host", f"{drv.loader}, module {mod:#x}")
        names = flagshim.module_loaded(mod, "cuda")
        report(names == ["nvshmem"], "(c) module_loaded ran the NVSHMEM hook on pe.cubin", f"{names}")
        report(flagshim.module_loaded(mod, "cuda") == names, "(c) a second module_loaded answers the same")
        pe = torch.full((2,), -7, dtype=torch.int32, device="cuda")
        drv.launch1(mod, "write_pe", pe.data_ptr())
        got = pe.tolist()
        report(got == [0, 1], "(c) write_pe reads my_pe 0 and n_pes 1", f"{got}")
        flagshim.module_unloading(mod, "cuda")
        drv.unload(mod)
        report(True, "(c) module_unloading then cuModuleUnload")

    # (d) The plain facts and an unhooked plain module.
    r = flagshim.resolve("cuda:0")
    report(r == "cuda:0", "(d) resolve('cuda:0') == 'cuda:0'", r)
    report(flagshim.alias_active() is False, "(d) alias_active() is False")
    facts = flagshim.info()
    cuda = next((b for b in facts["backends"] if b["type"] == "cuda"), {})
    report(isinstance(facts.get("schema_version"), int) and facts["schema_version"] >= 1 and cuda.get("available") is True, "(d) info() answers",
           f"probe {facts.get('probe')}, cuda {cuda.get('devices')} device(s), {cuda.get('reason', '')[:120]}")
    if plain_module is not None:
        again = flagshim.module_loaded(plain_module, "cuda")
        report(again == [], "(d) module_loaded on the unhooked plain module answers []", f"{again}")
        out_d, module_d = add(1024)  # the same compiled kernel, the same module
        report(torch.equal(out_d, want), "(d) ... and changes nothing: the kernel still adds",
               f"module {module_d:#x}" if module_d is not None else "")
    else:
        report(False, "(d) module_loaded on a plain module", "no plain module was seen in (a)")
    remove()
    remove()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        report(False, "the proof ran to its end")
    print(f"{'FAIL' if failures else 'PASS'} triton_nvshmem: {len(failures)} failure(s)" +
          (f": {', '.join(failures)}" if failures else ""), flush=True)
    sys.exit(1 if failures else 0)
