"""Forking after flagshim was imported, by os.fork and by C code (ctypes'
libc fork, which runs none of Python's fork hooks): the child may exit or
exec; what the parent decided (resolve, alias_active, info and what derives
from them) answers in the child without entering the library, from the info
answer the parent built before the fork (os.fork's hook builds it; before a
C fork, flagshim.info() does); every call that needs the library raises
ForkError; the parent is unaffected."""

import unittest

import support

# wait(pid) is the child's exit status, or "hung" after 30 s (the child is
# killed then): a child stuck in the Go runtime fails the test, not the run.
# fork(kind) forks with os.fork or with libc's fork() called through ctypes.
# in_child(kind, f) runs f in a child and returns its JSON-able result, or
# {"hung": ...} / {"exit": ...} when the child did not report.
FORKS = """
import ctypes, signal, time
_libc = ctypes.CDLL(None, use_errno=True)
def fork(kind):
    if kind == "os":
        return os.fork()
    pid = _libc.fork()
    assert pid >= 0, ctypes.get_errno()
    return pid
def wait(pid):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"
def in_child(kind, f):
    r, w = os.pipe()
    pid = fork(kind)
    if pid == 0:
        os.close(r)
        try:
            data = json.dumps({"ok": f()})
        except BaseException as e:
            data = json.dumps({"raised": [type(e).__name__, str(e), getattr(e, "code", None),
                                          getattr(e, "cause", None)]})
        os.write(w, data.encode())
        os._exit(0)
    os.close(w)
    status = wait(pid)
    with os.fdopen(r) as f:
        data = f.read()
    return json.loads(data) if data else {"exit": status}
def raised(f):
    try:
        return ["answered", f()]
    except BaseException as e:
        return [type(e).__name__, str(e), getattr(e, "code", None)]
"""

KINDS = ("os", "c")


class TestFork(unittest.TestCase):
    def setUp(self):
        self.env = support.musa_machine(self)

    def scenario(self, code, **kw):
        return support.result(self, code, self.env, prelude="import flagshim, flagshim.nvshmem\n" + FORKS, **kw)

    def test_fork_before_any_call(self):
        # Nothing was decided in the parent: the child has no answer to give
        # and says so; a child that only exits, exits cleanly.
        got = self.scenario(
            """
            res = {}
            for kind in ("os", "c"):
                pid = fork(kind)
                if pid == 0:
                    os._exit(0)
                res[kind] = {"exit_only": wait(pid), "resolve": in_child(kind, lambda: raised(lambda: flagshim.resolve("cuda:1")))}
            res["parent"] = flagshim.resolve("cuda:1")
            out(res)
            """
        )
        for kind in KINDS:
            self.assertEqual(got[kind]["exit_only"], 0, kind)
            cls, msg, _ = got[kind]["resolve"]["ok"]
            self.assertEqual(cls, "ForkError", kind)
            self.assertIn("before forking", msg)
            self.assertIn("spawn", msg)
            self.assertIn("Nothing was decided before the fork", msg)
        self.assertEqual(got["parent"], "flagos:1", "the parent's calls work after the forks")

    def test_child_answers_what_the_parent_decided(self):
        got = self.scenario(
            """
            first = flagshim.resolve("cuda:1")  # runs Init: the decision is kept
            parent = {"resolve": [flagshim.resolve("cuda:1"), flagshim.resolve("cuda"), flagshim.resolve("musa:01")],
                      "alias": flagshim.alias_active(), "info": flagshim.info(), "available": flagshim.is_available(),
                      "count": flagshim.device_count(), "musa": flagshim.device_count("musa"),
                      "vendor": flagshim.current_vendor(), "abi": list(flagshim.abi_version())}
            res = {"parent": parent}
            for kind in ("os", "c"):
                res[kind] = in_child(kind, lambda: {
                    "resolve": [flagshim.resolve("cuda:1"), flagshim.resolve("cuda"), flagshim.resolve("musa:01")],
                    "alias": flagshim.alias_active(), "info": flagshim.info(), "available": flagshim.is_available(),
                    "count": flagshim.device_count(), "musa": flagshim.device_count("musa"),
                    "vendor": flagshim.current_vendor(), "abi": list(flagshim.abi_version()),
                    "bad": raised(lambda: flagshim.resolve("nope:0")),
                    "module": raised(lambda: flagshim.module_loaded(1, "musa")),
                    "unloading": raised(lambda: flagshim.module_unloading(1, "musa")),
                    "nvshmem": raised(lambda: flagshim.nvshmem.enable(0)),
                    "error": raised(flagshim._last_error),
                })
            res["after"] = flagshim.resolve("cuda:0")
            out(res)
            """
        )
        parent = got["parent"]
        self.assertEqual(parent["resolve"], ["flagos:1", "flagos", "musa:1"])
        self.assertTrue(parent["alias"])
        self.assertEqual([parent["available"], parent["count"], parent["musa"]], [True, 2, 2])
        self.assertEqual(parent["vendor"], "Moore Threads")
        for kind in KINDS:
            child = got[kind].get("ok")
            self.assertIsNotNone(child, f"{kind} fork: the child did not answer: {got[kind]}")
            for key in ("resolve", "alias", "info", "available", "count", "musa", "vendor", "abi"):
                self.assertEqual(child[key], parent[key], f"{kind} fork: {key} is what the parent decided")
            cls, msg, _ = child["bad"]
            self.assertEqual(cls, "DeviceError", f"{kind} fork: a bad string is still a DeviceError")
            self.assertIn("unknown device type", msg)
            self.assertIn("'nope:0'", msg)
            for key in ("module", "unloading", "nvshmem", "error"):
                self.assertEqual(child[key][0], "ForkError", f"{kind} fork: {key} needs the library")
                self.assertIn("before forking", child[key][1])
        self.assertEqual(got["after"], "flagos:0", "the parent keeps working")

    def test_os_fork_hook_builds_the_answer(self):
        # The parent only resolves: the first call reads no info answer (it
        # used to, for every process; issue 40), and the library's fork
        # handler builds none (it runs under libc's atfork lock). os.fork's
        # before hook reads it, outside that lock: the child answers from it.
        got = self.scenario(
            """
            import flagshim._decided as D
            first = flagshim.resolve("cuda:1")
            res = {"first": first, "kept_before": D._text is not None}
            res["os"] = in_child("os", lambda: {
                "resolve": [flagshim.resolve("cuda:1"), flagshim.resolve("cuda")],
                "alias": flagshim.alias_active(), "available": flagshim.is_available(),
                "count": flagshim.device_count(), "vendor": flagshim.current_vendor(),
                "info": flagshim.info(), "module": raised(lambda: flagshim.module_loaded(1, "musa")),
            })
            res["kept_after"] = D._text is not None
            res["parent_info"] = flagshim.info()
            out(res)
            """
        )
        self.assertEqual(got["first"], "flagos:1")
        self.assertFalse(got["kept_before"], "the first resolve reads no info answer")
        self.assertTrue(got["kept_after"], "os.fork's hook read it in the parent")
        child = got["os"].get("ok")
        self.assertIsNotNone(child, f"the child did not answer: {got['os']}")
        self.assertEqual(child["resolve"], ["flagos:1", "flagos"])
        self.assertTrue(child["alias"])
        self.assertEqual([child["available"], child["count"], child["vendor"]], [True, 2, "Moore Threads"])
        self.assertEqual(child["info"]["alias"], got["parent_info"]["alias"])
        self.assertEqual([b["type"] for b in child["info"]["backends"]],
                         [b["type"] for b in got["parent_info"]["backends"]])
        self.assertEqual(child["module"][0], "ForkError")

    def test_c_fork_needs_an_answer_built_before(self):
        # A fork made by C code runs none of Python's hooks: after a resolve
        # only, nothing built the answer (not the first call, not the fork),
        # so the child's answers raise ForkError naming flagshim.info();
        # after flagshim.info() in the parent, they answer.
        got = self.scenario(
            """
            flagshim.resolve("cuda:1")
            def answers():
                return {"resolve": raised(lambda: flagshim.resolve("cuda:1")), "alias": raised(flagshim.alias_active),
                        "available": raised(flagshim.is_available), "count": raised(flagshim.device_count),
                        "info": raised(lambda: flagshim.info()["alias"])}
            res = {"before": in_child("c", answers)}
            parent_info = flagshim.info()
            res["after"] = in_child("c", answers)
            res["parent_alias"] = parent_info["alias"]
            out(res)
            """
        )
        before = got["before"].get("ok")
        self.assertIsNotNone(before, f"the child did not answer: {got['before']}")
        for key, (cls, msg, _) in before.items():
            self.assertEqual(cls, "ForkError", key)
            self.assertIn("call flagshim.info() in the parent before such a fork", msg, key)
            self.assertIn("outside os.fork", msg, key)
        after = got["after"].get("ok")
        self.assertIsNotNone(after, f"the child did not answer: {got['after']}")
        self.assertEqual(after["resolve"], ["answered", "flagos:1"])
        self.assertEqual(after["alias"], ["answered", True])
        self.assertEqual(after["available"], ["answered", True])
        self.assertEqual(after["count"], ["answered", 2])
        self.assertEqual(after["info"], ["answered", got["parent_alias"]])

    def test_c_fork_answers_the_librarys_copy(self):
        # A host (a C extension, say) built the answer through the library
        # itself: Python read none, and the child forked by C reads the
        # library's copy (ABI 1.3, plain C), twice.
        got = self.scenario(
            """
            import flagshim._decided as D, flagshim._lib as L
            flagshim.resolve("cuda:1")
            n = L._LIB.flagshim_info_json(None, 0)
            res = {"n": n, "kept": D._text is not None}
            for kind in ("c", "c2"):
                res[kind] = in_child("c", lambda: {
                    "kept": D._text is not None, "resolve": flagshim.resolve("cuda:1"),
                    "alias": flagshim.alias_active(), "count": flagshim.device_count(),
                    "info": flagshim.info()["alias"],
                })
            res["parent_alias"] = flagshim.info()["alias"]
            out(res)
            """
        )
        self.assertGreater(got["n"], 0)
        self.assertFalse(got["kept"], "Python read no answer in the parent")
        for kind in ("c", "c2"):
            child = got[kind].get("ok")
            self.assertIsNotNone(child, f"{kind}: the child did not answer: {got[kind]}")
            self.assertEqual(child, {"kept": False, "resolve": "flagos:1", "alias": True, "count": 2,
                                     "info": got["parent_alias"]}, kind)

    def test_child_parses_as_the_library_does(self):
        # The child's parser (pure Python, over the parent's table) answers
        # every string as the library's did in the parent: the same device,
        # or a DeviceError.
        got = self.scenario(
            """
            corpus = ["cuda", "cuda:0", "cuda:1", "cuda:007", "cuda:" + "0" * 40 + "3", "cuda:2147483647",
                      "cuda:2147483648", "cuda:99999999999", "musa:1", "flagos", "cpu", "cpu:0", "hip:3",
                      "", ":", ":1", "cuda:", "cuda::1", "cuda:1:2", "CUDA", "Cuda:0", "cuda:-1", "cuda:+1",
                      "cuda: 1", " cuda", "cuda:1 ", "cuda:1\\n", "cuda\\t", "cuda:0x1", "cuda:1e3", "cuda:½",
                      "cuda:\\u0661", "cuda:\\uff11", "c\\u00fada", "cuda\\u200b", "nope", "nope:0", "_cuda",
                      "9cuda", "cu-da", "cu_da", "a", "z9_:0", "\\u0130", "cuda:1\\ud800", "\\udcff", "cuda:" + "1" * 1100]
            def answers():
                res = []
                for s in corpus:
                    try:
                        res.append(["ok", flagshim.resolve(s)])
                    except flagshim.DeviceError as e:
                        res.append(["DeviceError", isinstance(e, ValueError)])
                return res
            res = {"parent": answers()}
            for kind in ("os", "c"):
                res[kind] = in_child(kind, answers)
            out(res)
            """
        )
        parent = got["parent"]
        self.assertIn(["ok", "flagos:3"], parent)
        self.assertIn(["DeviceError", True], parent)
        for kind in KINDS:
            self.assertEqual(got[kind].get("ok"), parent, f"{kind} fork: the child's answers are the library's")

    def test_library_answers_efork(self):
        # Below Python's guard: in a child forked by C, the library's own
        # entry points answer FLAGSHIM_EFORK (-8) without entering Go, and
        # flagshim_error names it. Where Python missed the fork (its process
        # id check bypassed here, as a fork into a new pid namespace could),
        # the code still becomes a ForkError, and the calls that can answer
        # from the parent's decision do so from then on.
        got = self.scenario(
            """
            import flagshim._lib as L
            flagshim.resolve("cuda:1")
            flagshim.info()  # the answer the child's resolve gives, once Python sees the fork
            def child():
                buf = ctypes.create_string_buffer(64)
                raw = {"resolve": L._LIB.flagshim_resolve(b"cuda:1", buf, 64), "out": buf.value.decode(),
                       "alias": L._LIB.flagshim_alias_active(), "abi": L._LIB.flagshim_abi_version()}
                n = L._LIB.flagshim_error(None, 0)
                err = ctypes.create_string_buffer(n + 1)
                L._LIB.flagshim_error(err, n + 1)
                raw["error"] = err.value.decode()
                L._PID = os.getpid()  # Python misses the fork
                missed = L.forked()
                module = raised(lambda: flagshim.module_loaded(1, "musa"))
                return {"raw": raw, "missed": missed, "module": module, "resolve": flagshim.resolve("cuda:1")}
            out({"c": in_child("c", child), "from_code": type(flagshim.errors.from_code(-8, "m")).__name__})
            """
        )
        child = got["c"]["ok"]
        self.assertEqual(child["raw"]["resolve"], -8)
        self.assertEqual(child["raw"]["out"], "")
        self.assertEqual(child["raw"]["alias"], -8)
        self.assertEqual(child["raw"]["abi"], 10003, "the ABI version, a constant, still answers")
        self.assertTrue(child["raw"]["error"].startswith("FLAGSHIM_EFORK"), child["raw"]["error"])
        self.assertFalse(child["missed"])
        cls, msg, code = child["module"]
        self.assertEqual([cls, code], ["ForkError", -8], "the library's EFORK is a ForkError")
        self.assertIn("FLAGSHIM_EFORK", msg)
        self.assertEqual(child["resolve"], "flagos:1", "then answered from the parent's decision")
        self.assertEqual(got["from_code"], "ForkError")

    def test_init_error_is_kept(self):
        # A bad setting: the parent's InitError is the child's too.
        got = support.result(
            self,
            """
            import flagshim
            parent = raised(lambda: flagshim.resolve("cuda:1"))
            out({"parent": parent, "c": in_child("c", lambda: [raised(lambda: flagshim.resolve("cuda:1")),
                                                             raised(flagshim.alias_active), raised(flagshim.info)])})
            """,
            dict(self.env, FLAGOS_ALIAS_CUDA="bogus"),
            prelude=FORKS,
        )
        self.assertEqual(got["parent"][0], "InitError")
        for cls, msg, code in got["c"]["ok"]:
            self.assertEqual([cls, code], ["InitError", -1])
            self.assertIn("FLAGOS_ALIAS_CUDA", msg)

    def test_exec_in_child(self):
        # A child that execs (subprocess's fork+exec) is a new program: fine.
        got = support.result(
            self,
            """
            import subprocess
            import flagshim
            flagshim.resolve("cuda:1")
            r = subprocess.run([sys.executable, "-c", "print('child ok')"], stdout=subprocess.PIPE, text=True)
            out([r.returncode, r.stdout.strip(), flagshim.resolve("cuda:1")])
            """,
            self.env,
        )
        self.assertEqual(got, [0, "child ok", "flagos:1"])


if __name__ == "__main__":
    unittest.main()
