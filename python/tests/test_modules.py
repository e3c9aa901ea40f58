"""module_loaded and module_unloading on modules the host loads itself (the
fake drivers through ctypes, in the same process), and the NVSHMEM hook on
the fake NVSHMEM."""

import unittest

import support


class TestForeignModules(unittest.TestCase):
    def test_plain_module_on_musa(self):
        env = support.musa_machine(self)
        got = support.result(
            self,
            """
            import flagshim
            drv, load = host_loader(os.environ["FLAGOS_LIBMUSA_PATH"], "mu")
            plain = load(PLAIN)
            first = flagshim.module_loaded(plain, "musa")
            second = flagshim.module_loaded(plain, "musa")
            flagshim.module_unloading(plain, "musa")
            errs = {}
            for name, call in [("rocm", lambda: flagshim.module_loaded(plain, "rocm")),
                               ("cpu", lambda: flagshim.module_loaded(plain, "cpu")),
                               ("zero", lambda: flagshim.module_loaded(0, "musa")),
                               ("negative", lambda: flagshim.module_loaded(-1, "musa")),
                               ("str", lambda: flagshim.module_loaded("0x1", "musa"))]:
                try:
                    call()
                    errs[name] = None
                except Exception as e:
                    errs[name] = [type(e).__name__, str(e), getattr(e, "code", None)]
            out({"first": first, "second": second, "errs": errs, "resolve": flagshim.resolve("cuda:0"),
                 "live": drv.fake_live_modules()})
            """,
            env,
            prelude=support.HOST_LOADER,
        )
        self.assertEqual(got["first"], [], "a plain module gets no hook")
        self.assertEqual(got["second"], [], "a second call answers the same")
        self.assertEqual(got["live"], 1, "flagshim neither loads nor unloads the host's modules")
        self.assertEqual(got["errs"]["rocm"][0], "BackendError")
        self.assertEqual(got["errs"]["rocm"][2], -6)
        self.assertIn('no driver backend "rocm"', got["errs"]["rocm"][1])
        self.assertEqual(got["errs"]["cpu"][0], "BackendError")
        self.assertEqual(got["errs"]["zero"][0], "ValueError")
        self.assertEqual(got["errs"]["negative"][0], "ValueError")
        self.assertEqual(got["errs"]["str"][0], "TypeError")
        self.assertEqual(got["resolve"], "flagos:0")


class TestNvshmemHook(unittest.TestCase):
    """The fake NVSHMEM (plugins/nvshmem/testdata/fake_nvshmem.c) on the fake
    libcuda: its hook runs nvshmemx_cumodule_init on modules with NVSHMEM's
    globals, and on no other."""

    def setUp(self):
        self.env = support.cuda_machine(self)

    def test_init_then_hooks(self):
        got = support.result(
            self,
            """
            import flagshim, flagshim.nvshmem
            flagshim.nvshmem.enable(0, init=True)
            flagshim.nvshmem.enable(0, init=True)  # a second call does nothing
            drv, load = host_loader(os.environ["FLAGOS_LIBCUDA_PATH"], "cu")
            nvs = ctypes.CDLL(os.environ["FLAGOS_LIBNVSHMEM_PATH"])
            def counts():
                c = (ctypes.c_int * 5)()
                nvs.fake_nvshmem_counts(c)
                return dict(zip(["init", "fini", "hostfini", "concurrent", "noctx"], c))
            shmem, plain, half = load(SHMEM), load(PLAIN), load(HALF_SHMEM)
            res = {"shmem": flagshim.module_loaded(shmem), "again": flagshim.module_loaded(shmem),
                   "plain": flagshim.module_loaded(plain), "after_loads": counts()}
            try:
                flagshim.module_loaded(half)
                res["half"] = None
            except flagshim.HookError as e:
                res["half"] = [str(e), e.code, e.cause]
            flagshim.module_unloading(shmem)
            flagshim.module_unloading(plain)  # never hooked: nothing to do
            res["after_unloading"] = counts()
            res["pe"] = [nvs.nvshmem_my_pe(), nvs.nvshmem_n_pes()]
            out(res)
            """,
            self.env,
            prelude=support.HOST_LOADER,
        )
        self.assertEqual(got["shmem"], ["nvshmem"])
        self.assertEqual(got["again"], ["nvshmem"], "a second call runs nothing and answers the same")
        self.assertEqual(got["plain"], [], "no NVSHMEM symbols: the hook does not run")
        self.assertEqual(got["after_loads"]["init"], 1, "nvshmemx_cumodule_init ran once, on the NVSHMEM module only")
        self.assertEqual(got["after_loads"]["noctx"], 0, "always with a context current")
        msg, code, cause = got["half"]
        self.assertEqual(code, -5)
        self.assertIn("only some of a hook's globals", cause)
        self.assertIn(cause, msg)
        self.assertEqual(got["after_unloading"]["fini"], 1, "module_unloading finalized the hook")
        self.assertEqual(got["pe"], [0, 1], "init: PE 0 of 1")

    def test_threads_report_one_module(self):
        # 16 threads report each NVSHMEM module at once (a host whose loader
        # threads all tell flagshim): nvshmemx_cumodule_init runs once per
        # module, every thread gets the same answer, unloading finalizes once.
        got = support.result(
            self,
            """
            import threading
            import flagshim, flagshim.nvshmem
            flagshim.nvshmem.enable(0, init=True)
            drv, load = host_loader(os.environ["FLAGOS_LIBCUDA_PATH"], "cu")
            ctx = ctypes.c_void_p()
            assert drv.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
            nvs = ctypes.CDLL(os.environ["FLAGOS_LIBNVSHMEM_PATH"])
            def counts():
                c = (ctypes.c_int * 5)()
                nvs.fake_nvshmem_counts(c)
                return dict(zip(["init", "fini", "hostfini", "concurrent", "noctx"], c))
            ROUNDS, THREADS = 8, 16
            answers, handles = [], []
            for _ in range(ROUNDS):
                h = load(SHMEM)
                handles.append(h)
                barrier = threading.Barrier(THREADS)
                got = [None] * THREADS
                def report(i):
                    assert drv.cuCtxSetCurrent(ctx) == 0  # the module's context, on this thread
                    barrier.wait()
                    try:
                        got[i] = flagshim.module_loaded(h)
                    except Exception as e:
                        got[i] = repr(e)
                threads = [threading.Thread(target=report, args=(i,)) for i in range(THREADS)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                answers.extend(got)
            after_loads = counts()
            for h in handles:
                flagshim.module_unloading(h)
            out({"rounds": ROUNDS, "answers": answers, "after_loads": after_loads, "after_unloading": counts()})
            """,
            self.env,
            prelude=support.HOST_LOADER,
        )
        rounds = got["rounds"]
        self.assertEqual(got["answers"], [["nvshmem"]] * (rounds * 16), "every thread gets the one run's answer")
        self.assertEqual(got["after_loads"]["init"], rounds, "nvshmemx_cumodule_init ran once per module")
        self.assertEqual(got["after_loads"]["concurrent"], 0)
        self.assertEqual(got["after_loads"]["noctx"], 0)
        self.assertEqual(got["after_unloading"]["fini"], rounds, "each module finalized once")

    def test_attach(self):
        # The host loads and initializes NVSHMEM itself (as nvshmem4py does),
        # here through ctypes on the fake; flagshim attaches to that copy.
        got = support.result(
            self,
            """
            import flagshim, flagshim.nvshmem
            res = {}
            try:
                flagshim.nvshmem.enable(0)
                res["before"] = None
            except flagshim.NvshmemError as e:
                res["before"] = [str(e), e.code, e.cause]
            drv, load = host_loader(os.environ["FLAGOS_LIBCUDA_PATH"], "cu")
            nvs = ctypes.CDLL(os.environ["FLAGOS_LIBNVSHMEM_PATH"])

            # NVSHMEM 3.x's init structs (nvshmemx.h), as the fake checks them.
            class UniqueID(ctypes.Structure):
                _fields_ = [("version", ctypes.c_int), ("internal", ctypes.c_char * 124)]
            class UniqueIDArgs(ctypes.Structure):
                _fields_ = [("version", ctypes.c_int), ("id", ctypes.POINTER(UniqueID)),
                            ("myrank", ctypes.c_int), ("nranks", ctypes.c_int)]
            class InitArgs(ctypes.Structure):
                _fields_ = [("version", ctypes.c_int), ("uid_args", UniqueIDArgs), ("content", ctypes.c_char * 96)]
            class InitAttr(ctypes.Structure):
                _fields_ = [("version", ctypes.c_int), ("mpi_comm", ctypes.c_void_p), ("args", InitArgs)]
            uid = UniqueID(version=(1 << 16) + ctypes.sizeof(UniqueID))
            assert nvs.nvshmemx_get_uniqueid(ctypes.byref(uid)) == 0
            attr = InitAttr(version=(1 << 16) + ctypes.sizeof(InitAttr))
            attr.args.version = (1 << 16) + ctypes.sizeof(InitArgs)
            attr.args.uid_args.version = (1 << 16) + ctypes.sizeof(UniqueIDArgs)
            assert nvs.nvshmemx_set_attr_uniqueid_args(0, 1, ctypes.byref(uid), ctypes.byref(attr)) == 0
            assert nvs.nvshmemx_hostlib_init_attr(1 << 3, ctypes.byref(attr)) == 0, "the host's init"

            flagshim.nvshmem.enable(0)
            res["shmem"] = flagshim.module_loaded(load(SHMEM))
            res["plain"] = flagshim.module_loaded(load(PLAIN))
            out(res)
            """,
            self.env,
            prelude=support.HOST_LOADER,
        )
        msg, code, cause = got["before"]
        self.assertEqual(code, -7)
        self.assertIn("not loaded", cause)
        self.assertIn(cause, msg)
        self.assertEqual(got["shmem"], ["nvshmem"])
        self.assertEqual(got["plain"], [])

    def test_init_failure(self):
        got = support.result(
            self,
            """
            import flagshim, flagshim.nvshmem
            try:
                flagshim.nvshmem.enable(0, init=True)
                out(None)
            except flagshim.NvshmemError as e:
                out([type(e).__name__, str(e), e.code, e.cause])
            """,
            dict(self.env, FAKE_NVSHMEM_INIT_RC="9"),
        )
        self.assertIsNotNone(got, "a failing NVSHMEM init raises NvshmemError")
        self.assertEqual(got[0], "NvshmemError")
        self.assertEqual(got[2], -7)
        self.assertTrue(got[3], "the cause is flagshim_error's text")

    def test_no_library(self):
        none = support.nowhere()
        got = support.result(
            self,
            """
            import flagshim, flagshim.nvshmem
            try:
                flagshim.nvshmem.enable(0, init=True)
                out(None)
            except flagshim.NvshmemError as e:
                out([str(e), e.code])
            """,
            dict(self.env, FLAGOS_LIBNVSHMEM_PATH=none + "/libnvshmem_host.so.3"),
        )
        self.assertEqual(got[1], -7)
        self.assertIn("libnvshmem_host.so.3", got[0])


if __name__ == "__main__":
    unittest.main()
