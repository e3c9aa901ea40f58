#!/usr/bin/env python3
"""An independent cross-check of plugins/nvshmem's two-PE proof (issue 15),
in the original report's shape, with nothing of flagshim in it: torch, ctypes
on NVSHMEM's host library and on libcuda, and the CUDA fixtures of
scripts/nvshmem-build.sh.

On a machine with two GPUs, from the repository root:

    torchrun --nproc_per_node=2 scripts/two_pe_check.py [--fixtures DIR]

(scripts/two-pe.sh runs it after the Go test.) Each rank:

  1. selects CUDA device LOCAL_RANK through torch and joins a gloo process
     group (torch.distributed);
  2. rank 0 gets NVSHMEM's unique id (nvshmemx_get_uniqueid) and broadcasts
     its 128 bytes over gloo; every rank calls nvshmemx_set_attr_uniqueid_args
     and nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID): NVSHMEM's
     own bootstrap, none of ours; checks the init status, my_pe and n_pes;
  3. with the fixtures: loads add.ptx (no NVSHMEM code) with cuModuleLoadData,
     runs its add kernel on torch tensors, then the control: what the
     report's process-wide hook did, nvshmemx_cumodule_init on that plain
     module, which must fail (7);
  4. loads ring.cubin, calls nvshmemx_cumodule_init on it (0), and runs the
     ring over an nvshmem_malloc'd int: ring_put puts my_pe into the next PE's
     int, nvshmem_barrier_all, ring_read; each PE must read its left
     neighbour's number, and my_pe and n_pes as the device sees them.

Every rank prints one "TWO-PE-CHECK rank=R check=NAME ok|FAIL|skip ..."
line per check; rank 0 prints the summary of both; the exit status is 0 only
when no check failed. NVLink multicast stays off: NCCL_NVLS_ENABLE=0,
NVSHMEM_DISABLE_NVLS=1 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are set before
anything is loaded.

`python3 scripts/two_pe_check.py --selftest` checks the ctypes layouts
against the sizes NVSHMEM 3.4's headers assert, with no GPU and no torch.
"""

import os

NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
os.environ.update(NO_MULTICAST)  # before torch, NCCL or NVSHMEM read them

import argparse  # noqa: E402
import ctypes  # noqa: E402
import glob  # noqa: E402
import importlib.util  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# NVSHMEM 3.x structs, as plugins/nvshmem/layout.go describes them (read from
# the 3.4.5 wheel's headers; sizes asserted there).
class UniqueID(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("internal", ctypes.c_char * 124)]


class UniqueIDArgs(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("id", ctypes.POINTER(UniqueID)),
                ("myrank", ctypes.c_int), ("nranks", ctypes.c_int)]


class InitArgs(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("uid_args", UniqueIDArgs), ("content", ctypes.c_char * 96)]


class InitAttr(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("mpi_comm", ctypes.c_void_p), ("args", InitArgs)]


INIT_WITH_UNIQUEID = 1 << 3
INITIALIZED = (2, 3, 4)  # NVSHMEM_STATUS_IS_INITIALIZED, LIMITED_MPG, FULL_MPG


def version(struct_type):
    return (1 << 16) + ctypes.sizeof(struct_type)


def new_unique_id():
    """NVSHMEMX_UNIQUEID_INITIALIZER."""
    u = UniqueID()
    u.version = version(UniqueID)
    return u


def new_init_attr():
    """NVSHMEMX_INIT_ATTR_INITIALIZER."""
    a = InitAttr()
    a.version = version(InitAttr)
    a.args.version = version(InitArgs)
    a.args.uid_args.version = version(UniqueIDArgs)
    a.args.uid_args.myrank = -1
    a.args.uid_args.nranks = -1
    return a


def selftest():
    want = {"uniqueid": (UniqueID, 128), "uniqueid_args": (UniqueIDArgs, 24),
            "init_args": (InitArgs, 128), "init_attr": (InitAttr, 144)}
    bad = [f"sizeof {n} = {ctypes.sizeof(t)}, want {w}" for n, (t, w) in want.items() if ctypes.sizeof(t) != w]
    offs = {"mpi_comm": (InitAttr.mpi_comm.offset, 8), "args": (InitAttr.args.offset, 16),
            "uid_args": (InitAttr.args.offset + InitArgs.uid_args.offset, 24),
            "id": (InitAttr.args.offset + InitArgs.uid_args.offset + UniqueIDArgs.id.offset, 32),
            "myrank": (InitAttr.args.offset + InitArgs.uid_args.offset + UniqueIDArgs.myrank.offset, 40),
            "nranks": (InitAttr.args.offset + InitArgs.uid_args.offset + UniqueIDArgs.nranks.offset, 44)}
    bad += [f"offsetof {n} = {g}, want {w}" for n, (g, w) in offs.items() if g != w]
    raw = bytes(new_init_attr())
    if raw[0:4] != b"\x90\x00\x01\x00" or raw[16:20] != b"\x80\x00\x01\x00" or raw[24:28] != b"\x18\x00\x01\x00" \
            or raw[40:48] != b"\xff" * 8:
        bad.append(f"initializer bytes {raw[:48].hex()}")
    if bytes(new_unique_id())[:4] != b"\x80\x00\x01\x00":
        bad.append("unique id initializer")
    for b in bad:
        print("selftest:", b)
    print("selftest:", "FAIL" if bad else "ok (layouts as NVSHMEM 3.4 asserts)")
    return 1 if bad else 0


def find_nvshmem():
    p = os.environ.get("FLAGOS_LIBNVSHMEM_PATH")
    if p:
        return p
    spec = importlib.util.find_spec("nvidia.nvshmem")
    if spec and spec.submodule_search_locations:
        for d in spec.submodule_search_locations:
            hits = sorted(glob.glob(os.path.join(d, "lib", "libnvshmem_host.so*")))
            if hits:
                return hits[0]
    return "libnvshmem_host.so.3"  # the loader's search


class Checks:
    def __init__(self, rank):
        self.rank = rank
        self.lines = []
        self.failed = False

    def record(self, name, status, detail):
        line = f"TWO-PE-CHECK rank={self.rank} check={name} {status} {detail}"
        print(line, flush=True)
        self.lines.append(line)
        if status == "FAIL":
            self.failed = True

    def expect(self, name, cond, detail):
        self.record(name, "ok" if cond else "FAIL", detail)
        return cond


class CUDA:
    """The few driver calls the check needs, on the thread torch made current."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        for n in ("cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel",
                  "cuCtxSynchronize", "cuMemcpyHtoD_v2", "cuGetErrorString"):
            getattr(self.lib, n).restype = ctypes.c_int

    def check(self, what, rc):
        if rc != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(s))
            raise RuntimeError(f"{what}: CUresult {rc} ({(s.value or b'?').decode()})")

    def load(self, path):
        with open(path, "rb") as f:
            image = f.read()
        if path.endswith(".ptx"):
            image += b"\0"
        buf = ctypes.create_string_buffer(image, len(image))
        m = ctypes.c_void_p()
        self.check(f"cuModuleLoadData({os.path.basename(path)})", self.lib.cuModuleLoadData(ctypes.byref(m), buf))
        return m

    def function(self, m, name):
        f = ctypes.c_void_p()
        self.check(f"cuModuleGetFunction({name})", self.lib.cuModuleGetFunction(ctypes.byref(f), m, name.encode()))
        return f

    def launch(self, f, grid, block, *args):
        """args: ctypes values (c_uint64 for pointers, c_uint32 ...)."""
        ptrs = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        self.check("cuLaunchKernel", self.lib.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, None, ptrs, None))
        self.check("cuCtxSynchronize", self.lib.cuCtxSynchronize())


def run(args):
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    checks = Checks(rank)
    torch.cuda.set_device(local)
    torch.zeros(1, device="cuda")  # the primary context, current on this thread
    dist.init_process_group("gloo")
    checks.record("env", "ok", " ".join(f"{k}={os.environ[k]}" for k in NO_MULTICAST)
                  + f" device={local} of {torch.cuda.device_count()} ({torch.cuda.get_device_name(local)}) torch={torch.__version__}")

    path = find_nvshmem()
    nv = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    for n in ("nvshmemx_get_uniqueid", "nvshmemx_set_attr_uniqueid_args", "nvshmemx_hostlib_init_attr",
              "nvshmemx_init_status", "nvshmem_my_pe", "nvshmem_n_pes", "nvshmemx_cumodule_init",
              "nvshmemx_cumodule_finalize"):
        getattr(nv, n).restype = ctypes.c_int
    nv.nvshmem_malloc.restype = ctypes.c_void_p
    nv.nvshmem_malloc.argtypes = [ctypes.c_size_t]
    nv.nvshmem_free.argtypes = [ctypes.c_void_p]
    ver = [ctypes.c_int() for _ in range(3)]
    try:
        nv.nvshmemx_vendor_get_version_info(*[ctypes.byref(v) for v in ver])
    except AttributeError:
        pass
    checks.record("library", "ok", f"{path} NVSHMEM {'.'.join(str(v.value) for v in ver)}")

    # NVSHMEM's unique-id bootstrap, the id broadcast over gloo: byte 0 says
    # whether rank 0 got one, so that no rank waits in init for nothing.
    uid = new_unique_id()
    ok = 1
    if rank == 0:
        rc = nv.nvshmemx_get_uniqueid(ctypes.byref(uid))
        ok = int(checks.expect("get_uniqueid", rc == 0, f"rc={rc}"))
    t = torch.frombuffer(bytearray(bytes([ok]) + bytes(uid)), dtype=torch.uint8).clone()
    dist.broadcast(t, src=0)
    raw = bytes(t.tolist())
    if raw[0] != 1:
        checks.record("init", "FAIL", "rank 0 has no unique id")
        return finish(checks, dist, world)
    uid = UniqueID.from_buffer_copy(raw[1:])
    attr = new_init_attr()
    rc = nv.nvshmemx_set_attr_uniqueid_args(rank, world, ctypes.byref(uid), ctypes.byref(attr))
    rc = rc or nv.nvshmemx_hostlib_init_attr(INIT_WITH_UNIQUEID, ctypes.byref(attr))
    st = nv.nvshmemx_init_status()
    me, n = nv.nvshmem_my_pe(), nv.nvshmem_n_pes()
    if not checks.expect("init", rc == 0 and st in INITIALIZED and me == rank and n == world,
                         f"rc={rc} status={st} my_pe={me} n_pes={n} (want my_pe={rank} n_pes={world})"):
        return finish(checks, dist, world)

    add = os.path.join(args.fixtures, "add.ptx")
    ring = os.path.join(args.fixtures, "ring.cubin")
    if not (os.path.exists(add) and os.path.exists(ring)):
        checks.record("fixtures", "skip", f"no add.ptx/ring.cubin in {args.fixtures}: run scripts/nvshmem-build.sh")
        nv.nvshmemx_hostlib_finalize()
        return finish(checks, dist, world)
    cu = CUDA()

    # A plain module: the kernel runs; then the control.
    try:
        m = cu.load(add)
        a = torch.arange(1000, dtype=torch.float32, device="cuda")
        b = 2 * a + 0.5
        c = torch.empty_like(a)
        cu.launch(cu.function(m, "add"), 4, 256, ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()),
                  ctypes.c_uint64(c.data_ptr()), ctypes.c_uint32(1000))
        checks.expect("plain_add", torch.equal(c, a + b), "add.ptx's add over 1000 floats")
        print("CONTROL-START", file=sys.stderr, flush=True)
        rc = nv.nvshmemx_cumodule_init(m)
        print("CONTROL-END", file=sys.stderr, flush=True)
        checks.expect("control", rc == 7, f"nvshmemx_cumodule_init on add.ptx returned {rc} (want 7, the report's failure)")
        cu.check("cuModuleUnload", cu.lib.cuModuleUnload(m))
    except RuntimeError as e:
        checks.record("plain_add", "FAIL", str(e))

    # The ring through NVSHMEM device code. Loading is local; what follows
    # is collective, so every rank goes on only when all loaded.
    m, sym, ok = None, None, False
    try:
        m = cu.load(ring)
        rc = nv.nvshmemx_cumodule_init(m)
        ok = checks.expect("ring_cumodule_init", rc == 0, f"nvshmemx_cumodule_init on ring.cubin returned {rc}")
        put, read = cu.function(m, "ring_put"), cu.function(m, "ring_read")
    except RuntimeError as e:
        checks.record("ring_load", "FAIL", str(e))
        ok = False
    if agree(dist, torch, ok):
        try:
            sym = nv.nvshmem_malloc(4)  # collective
            if not sym:
                raise RuntimeError("nvshmem_malloc(4) returned NULL")
            minus1 = ctypes.create_string_buffer(struct.pack("<i", -1), 4)
            cu.check("cuMemcpyHtoD", cu.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(sym), minus1, ctypes.c_size_t(4)))
            nv.nvshmem_barrier_all()  # every PE's int is -1 before any put
            cu.launch(put, 1, 1, ctypes.c_uint64(sym))
            nv.nvshmem_barrier_all()  # every put has landed
            out = torch.full((3,), -9, dtype=torch.int32, device="cuda")
            cu.launch(read, 1, 1, ctypes.c_uint64(sym), ctypes.c_uint64(out.data_ptr()))
            got, dpe, dn = out.tolist()
            left = (rank - 1 + world) % world
            checks.expect("ring", got == left and dpe == rank and dn == world,
                          f"got={got} (want {left}, from PE {left}) device my_pe={dpe} n_pes={dn}")
        except RuntimeError as e:
            checks.record("ring", "FAIL", str(e))
    elif ok:
        checks.record("ring", "skip", "another rank could not load ring.cubin")
    if m is not None:
        if ok:
            nv.nvshmemx_cumodule_finalize(m)
        cu.lib.cuModuleUnload(m)
    if sym:
        nv.nvshmem_free(ctypes.c_void_p(sym))  # collective
    nv.nvshmemx_hostlib_finalize()
    return finish(checks, dist, world)


def agree(dist, torch, ok):
    """Whether every rank says ok (gloo all-reduce, MIN)."""
    t = torch.tensor([1 if ok else 0], dtype=torch.int32)
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return bool(t.item())


def finish(checks, dist, world):
    gathered = [None] * world
    dist.all_gather_object(gathered, (checks.lines, checks.failed))
    failed = any(f for _, f in gathered)
    if checks.rank == 0:
        print("== two_pe_check summary")
        for lines, _ in gathered:
            for line in lines:
                print("  " + line)
        print("two_pe_check:", "FAIL" if failed else f"ok ({world} ranks)")
    dist.destroy_process_group()
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fixtures", default=os.environ.get("FLAGSHIM_NVSHMEM_FIXTURES",
                                                        os.path.join(ROOT, "plugins", "nvshmem", "testdata", "build")))
    p.add_argument("--selftest", action="store_true", help="check the ctypes layouts only (no GPU, no torch)")
    args = p.parse_args()
    if args.selftest:
        return selftest()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
