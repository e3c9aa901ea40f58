"""flagshim.triton against a stub Triton (tests/stubs/triton: a
kernel_load_end_hook chain as in Triton 3.6), and without Triton."""

import unittest

import support


class TestWithoutTriton(unittest.TestCase):
    def test_install_raises_triton_not_found(self):
        got = support.result(
            self,
            """
            sys.modules["triton"] = None  # import triton fails, whatever is installed
            import flagshim, flagshim.triton
            try:
                flagshim.triton.install()
                out(None)
            except flagshim.TritonNotFound as e:
                out([str(e), isinstance(e, ImportError), isinstance(e, flagshim.Error)])
            """,
        )
        self.assertIsNotNone(got, "install() without Triton raises TritonNotFound")
        msg, is_import, is_error = got
        self.assertIn("Triton is not importable", msg)
        self.assertIn("pip install triton", msg)
        self.assertTrue(is_import and is_error, "TritonNotFound is an ImportError and a flagshim.Error")

    def test_triton_without_the_hook(self):
        got = support.result(
            self,
            """
            import triton.knobs
            del triton.knobs.runtime_knobs.kernel_load_end_hook  # an older Triton
            import flagshim.triton
            try:
                flagshim.triton.install()
                out(None)
            except flagshim.TritonNotFound as e:
                out(str(e))
            """,
            stubs=True,
        )
        self.assertIsNotNone(got)
        self.assertIn("kernel_load_end_hook", got)
        self.assertIn("3.6", got)

    def test_import_does_not_import_triton(self):
        got = support.result(
            self,
            "import flagshim; out(['triton' in sys.modules, callable(flagshim.triton.install), "
            "callable(flagshim.nvshmem.enable)])",
            stubs=True,
        )
        self.assertEqual(got, [False, True, True],
                         "import flagshim brings flagshim.triton and flagshim.nvshmem, but not triton itself")


class TestStubTriton(unittest.TestCase):
    def test_hook_chain_on_musa(self):
        env = support.musa_machine(self)
        got = support.result(
            self,
            """
            import flagshim, flagshim.triton
            from triton import knobs
            drv, load = host_loader(os.environ["FLAGOS_LIBMUSA_PATH"], "mu")
            chain = knobs.runtime.kernel_load_end_hook
            remove = flagshim.triton.install(backend="musa")
            res = {"registered": len(chain.calls)}
            a, b, c = load(PLAIN), load(PLAIN), load(PLAIN)
            knobs.load_module(a, name="add_kernel")  # positionally, as Triton 3.6 calls it
            chain(module=b, function=2, name="mul_kernel", metadata_group={}, hash="ab")  # by keyword
            res["a"] = flagshim.triton.hooks_ran(a)
            res["by_name"] = flagshim.triton.hooks_ran("mul_kernel")
            res["last_results"] = {str(k): v for k, v in flagshim.triton.last_results.items()}
            remove()
            remove()  # idempotent
            res["after_remove"] = len(chain.calls)
            knobs.load_module(c, name="late_kernel")
            res["c"] = flagshim.triton.hooks_ran(c)
            res["unknown"] = flagshim.triton.hooks_ran("never_loaded")
            res["handles"] = [a, b]
            out(res)
            """,
            env,
            stubs=True,
            prelude=support.HOST_LOADER,
        )
        a, b = got["handles"]
        self.assertEqual(got["registered"], 1, "install() adds one hook to the chain")
        self.assertEqual(got["a"], [], "a plain kernel: no hook ran")
        self.assertEqual(got["by_name"], [])
        self.assertEqual(got["last_results"], {str(a): [], str(b): []})
        self.assertEqual(got["after_remove"], 0, "remove() takes the hook out of the chain")
        self.assertIsNone(got["c"], "after remove() nothing is recorded")
        self.assertIsNone(got["unknown"])

    def test_nvshmem_kernel_through_triton(self):
        env = support.cuda_machine(self)
        got = support.result(
            self,
            """
            import flagshim, flagshim.nvshmem, flagshim.triton
            from triton import knobs
            flagshim.nvshmem.enable(0, init=True)
            remove = flagshim.triton.install()
            drv, load = host_loader(os.environ["FLAGOS_LIBCUDA_PATH"], "cu")
            nvs = ctypes.CDLL(os.environ["FLAGOS_LIBNVSHMEM_PATH"])
            shmem, plain, half = load(SHMEM), load(PLAIN), load(HALF_SHMEM)
            knobs.load_module(plain, name="add_kernel")
            knobs.load_module(shmem, name="shmem_kernel")
            c = (ctypes.c_int * 5)()
            nvs.fake_nvshmem_counts(c)
            res = {"plain": flagshim.triton.hooks_ran("add_kernel"), "shmem": flagshim.triton.hooks_ran(shmem),
                   "cumodule_inits": c[0]}
            try:
                knobs.load_module(half, name="broken_kernel")
                res["half"] = None
            except flagshim.HookError as e:
                res["half"] = e.code
            remove()
            out(res)
            """,
            env,
            stubs=True,
            prelude=support.HOST_LOADER,
        )
        self.assertEqual(got["plain"], [], "a plain Triton kernel gets no NVSHMEM init")
        self.assertEqual(got["shmem"], ["nvshmem"])
        self.assertEqual(got["cumodule_inits"], 1)
        self.assertEqual(got["half"], -5, "a failing hook fails Triton's load loudly")

    def test_plain_attribute_hook(self):
        # An older Triton with a plain attribute: flagshim composes with the
        # hook already set, and remove() puts it back.
        env = support.musa_machine(self)
        got = support.result(
            self,
            """
            import flagshim, flagshim.triton
            from triton import knobs
            drv, load = host_loader(os.environ["FLAGOS_LIBMUSA_PATH"], "mu")
            seen = []
            def previous(module, function, name, metadata_group, hash):
                seen.append(name)
            res = {}
            for prev in (previous, None):
                knobs.runtime.kernel_load_end_hook = prev
                remove = flagshim.triton.install(backend="musa")
                composed = knobs.runtime.kernel_load_end_hook
                h = load(PLAIN)
                knobs.load_module(h, name="k")
                res[str(prev is None)] = {
                    "replaced": composed is not prev,
                    "ours": flagshim.triton.hooks_ran(h),
                }
                remove()
                remove()
                res[str(prev is None)]["restored"] = knobs.runtime.kernel_load_end_hook is prev
            res["previous_ran"] = seen
            out(res)
            """,
            env,
            stubs=True,
            prelude=support.HOST_LOADER,
        )
        for case in ("False", "True"):
            self.assertEqual(got[case], {"replaced": True, "ours": [], "restored": True}, case)
        self.assertEqual(got["previous_ran"], ["k"], "the hook that was there runs too")


if __name__ == "__main__":
    unittest.main()
