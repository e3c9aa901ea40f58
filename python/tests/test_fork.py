"""Forking after flagshim was imported: the child may exit or exec, but
every flagshim call in it raises ForkError; the parent is unaffected."""

import unittest

import support

# wait(pid) is the child's exit status, or "hung" after 30 s (the child is
# killed then): a child stuck in the Go runtime fails the test, not the run.
WAIT = """
import signal, time
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
"""

# In a child: 0 when call raises ForkError naming the remedy, 3 when it
# raises it without, 4 when it raises something else, 5 when it answers.
CHILD_CALL = """
def child_call(call):
    try:
        call()
        code = 5
    except flagshim.ForkError as e:
        code = 0 if ("before forking" in str(e) and "spawn" in str(e)) else 3
    except BaseException:
        code = 4
    os._exit(code)
"""


class TestFork(unittest.TestCase):
    def setUp(self):
        self.env = support.musa_machine(self)

    def test_fork_after_import(self):
        got = support.result(
            self,
            """
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            exit_only = wait(pid)
            pid = os.fork()
            if pid == 0:
                child_call(lambda: flagshim.resolve("cuda:1"))
            call = wait(pid)
            out({"exit_only": exit_only, "call": call, "parent": flagshim.resolve("cuda:1"),
                 "alias": flagshim.alias_active()})
            """,
            self.env,
            prelude="import flagshim\n" + WAIT + CHILD_CALL,
        )
        self.assertEqual(got["exit_only"], 0, "a child that only exits, exits cleanly")
        self.assertEqual(got["call"], 0, "a call in the child raises ForkError saying what to do")
        self.assertEqual(got["parent"], "flagos:1", "the parent's calls work after the forks")
        self.assertTrue(got["alias"])

    def test_fork_after_use(self):
        got = support.result(
            self,
            """
            first = flagshim.resolve("cuda:1")
            info = flagshim.info()["probe"]
            children = {}
            for name, call in [("resolve", lambda: flagshim.resolve("cuda:1")), ("alias", flagshim.alias_active),
                               ("info", flagshim.info), ("module", lambda: flagshim.module_loaded(1, "musa"))]:
                pid = os.fork()
                if pid == 0:
                    child_call(call)
                children[name] = wait(pid)
            out({"first": first, "probe": info, "children": children, "parent": flagshim.resolve("cuda:0")})
            """,
            self.env,
            prelude="import flagshim\n" + WAIT + CHILD_CALL,
        )
        self.assertEqual(got["first"], "flagos:1")
        self.assertEqual(got["probe"], "presence")
        self.assertEqual(got["children"], {"resolve": 0, "alias": 0, "info": 0, "module": 0},
                         "every call in a child raises ForkError (0), none hangs or answers")
        self.assertEqual(got["parent"], "flagos:0", "the parent keeps working")

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
