"""The fakes' build cache (support.Fakes): a later run copies what the
first compiled; a changed source, header, command or compiler is a new
build; a cache folder that anyone else may enter, or something else in its
place, is neither read nor written. Each run here is a Python process of its
own with a private TMPDIR and a C compiler wrapper that logs what it was
asked to compile."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import textwrap
import unittest
from typing import Dict, List, Optional, Tuple
from unittest import mock

import support

# One run: build the fake named by argv[1] as the suite does, print its path
# and the sha256 of its bytes.
_CHILD = textwrap.dedent(
    """
    import hashlib, sys, unittest
    sys.path.insert(0, sys.argv[2])
    import support
    class Case(unittest.TestCase):
        def runTest(self):
            pass
    path = support.Fakes.build(Case(), sys.argv[1])
    with open(path, "rb") as f:
        print(path, hashlib.sha256(f.read()).hexdigest())
    """
)


class TestFakesCache(unittest.TestCase):
    def setUp(self):
        self.compiler = support.cc()
        if not self.compiler:
            self.skipTest("no C compiler (gcc, cc or $CC) to build the fake vendor libraries")
        self.tmp = support.private_dir("flagshim-cache-test-")
        self.log = os.path.join(self.tmp, "cc.log")
        self.wrapper = os.path.join(self.tmp, "cc-logged")
        with open(self.wrapper, "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >> "{self.log}"\nexec {self.compiler} "$@"\n')
        os.chmod(self.wrapper, 0o755)
        self.cache = os.path.join(self.tmp, f"flagshim-test-fakes-{os.geteuid()}")

    def run_build(self, name: str = "nvml", **env: str) -> Tuple[str, str]:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGSHIM_", "TMP", "TEMP"))}
        full.update({"TMPDIR": self.tmp, "CC": self.wrapper, **env})
        r = subprocess.run([sys.executable, "-S", "-c", _CHILD, name, support.TESTS], env=full,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=support.TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stdout)
        path, digest = r.stdout.split()
        return path, digest

    def compiles(self) -> List[str]:
        """The compiler's invocations that built something (not --version)."""
        try:
            with open(self.log) as f:
                return [line for line in f if "-shared" in line]
        except FileNotFoundError:
            return []

    def test_used_only_while_ours_alone(self):
        # The first run compiles and fills the cache.
        first, digest = self.run_build()
        self.assertEqual(len(self.compiles()), 1)
        entries = os.listdir(self.cache)
        self.assertEqual(len(entries), 1, entries)
        self.assertTrue(entries[0].startswith("py-"), entries)
        self.assertEqual(stat.S_IMODE(os.lstat(self.cache).st_mode), 0o700)
        aside = self.cache + ".aside"

        # In each of these states a run compiles again and the cache's
        # entry is neither read nor joined by another.
        def mode(m):
            return lambda: os.chmod(self.cache, m), lambda: os.chmod(self.cache, 0o700), {}

        def replaced(make):
            def setup():
                os.rename(self.cache, aside)
                make()

            def undo():
                if os.path.islink(self.cache) or os.path.isfile(self.cache):
                    os.remove(self.cache)
                os.rename(aside, self.cache)

            return setup, undo, {}

        states = {
            "group may enter (0770)": mode(0o770),
            "others may enter (0707)": mode(0o707),
            "group and others may read (0755)": mode(0o755),
            "a symlink to a private folder holding the entry": replaced(lambda: os.symlink(aside, self.cache)),
            "a file in its place": replaced(lambda: open(self.cache, "w").close()),
            "FLAGSHIM_TEST_NO_CACHE=1": (lambda: None, lambda: None, {"FLAGSHIM_TEST_NO_CACHE": "1"}),
        }
        for what, (setup, undo, env) in states.items():
            with self.subTest(what):
                before = len(self.compiles())
                setup()
                try:
                    _, got = self.run_build(**env)
                finally:
                    undo()
                self.assertEqual(len(self.compiles()) - before, 1, "the run compiled")
                self.assertEqual(got, digest)
                self.assertEqual(os.listdir(self.cache), entries, "and left the cache as it was")

        # Ours alone again, the next run copies the first run's build.
        before = len(self.compiles())
        second, got = self.run_build()
        self.assertEqual(len(self.compiles()), before, "the last run compiled nothing")
        self.assertNotEqual(os.path.dirname(first), os.path.dirname(second), "each run has its own fakes' folder")
        self.assertEqual(got, digest, "and loads the same bytes")


class TestFakesCacheKey(unittest.TestCase):
    """support._cache_key on sources of the test's own: what makes a new
    build, and what does not."""

    def setUp(self):
        self.src = support.private_dir("flagshim-key-src-")
        self.inc = support.private_dir("flagshim-key-inc-")
        self.files: Dict[str, str] = {
            os.path.join(self.src, "fake.c"): '#include "fake.h"\nint f(void) { return F; }\n',
            os.path.join(self.src, "fake.h"): "#define F 1\n",
            os.path.join(self.inc, "common.h"): "#define G 2\n",
            os.path.join(self.src, "notes.txt"): "not a source\n",
        }
        for path, text in self.files.items():
            self.write(path, text)
        cache = support.private_dir("flagshim-key-cache-")
        patch = mock.patch.dict(support._cache_state, {"dir": cache, "version": "cc 1.0"})
        patch.start()
        self.addCleanup(patch.stop)

    def write(self, path: str, text: str) -> None:
        with open(path, "w") as f:
            f.write(text)

    def key(self, cmd: Optional[List[str]] = None) -> str:
        cmd = cmd or ["cc", "-shared", "-o", "$OUT", f"-I{self.inc}", "$SRC0"]
        return support._cache_key(cmd, [os.path.join(self.src, "fake.c")])

    def test_same_build_same_key(self):
        k = self.key()
        self.assertTrue(k.startswith("py-"), k)
        self.assertEqual(k, self.key())
        self.assertEqual(len(k), len("py-") + 2 * hashlib.sha256().digest_size)

    def test_what_changes_the_key(self):
        base = self.key()
        changes = {
            "the source": (os.path.join(self.src, "fake.c"), "int f(void) { return 3; }\n"),
            "a header beside it": (os.path.join(self.src, "fake.h"), "#define F 9\n"),
            "a header in an -I folder": (os.path.join(self.inc, "common.h"), "#define G 7\n"),
            "a new header": (os.path.join(self.src, "extra.h"), "#define H 1\n"),
        }
        for what, (path, text) in changes.items():
            with self.subTest(what):
                old = self.files.get(path)
                self.write(path, text)
                try:
                    self.assertNotEqual(self.key(), base)
                finally:
                    if old is None:
                        os.remove(path)
                    else:
                        self.write(path, old)
                self.assertEqual(self.key(), base, "restored, the key is the first build's")
        with self.subTest("the command"):
            self.assertNotEqual(self.key(["cc", "-shared", "-O0", "-o", "$OUT", f"-I{self.inc}", "$SRC0"]), base)
        with self.subTest("the compiler's version"):
            with mock.patch.dict(support._cache_state, {"version": "cc 2.0"}):
                self.assertNotEqual(self.key(), base)

    def test_other_files_do_not(self):
        base = self.key()
        self.write(os.path.join(self.src, "notes.txt"), "changed\n")
        self.assertEqual(self.key(), base)

    def test_unreadable_source_is_no_key(self):
        self.assertEqual(support._cache_key(["cc", "$SRC0"], [os.path.join(self.src, "missing.c")]), "")

    def test_cache_off_is_no_key(self):
        with mock.patch.dict(support._cache_state, {"dir": ""}):
            self.assertEqual(self.key(), "")


if __name__ == "__main__":
    unittest.main()
