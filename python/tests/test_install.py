"""The in-tree build backend (python/_build_backend/flagshim_build.py) and
an offline `pip install --no-build-isolation --target`."""

import base64
import contextlib
import csv
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import unittest
import zipfile

import support

BACKEND = os.path.join(support.PYTHON_DIR, "_build_backend", "flagshim_build.py")


def load_backend():
    spec = importlib.util.spec_from_file_location("flagshim_build_under_test", BACKEND)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Env:
    """Sets and restores environment variables around a backend call."""

    def __init__(self, **values):
        self.values = values
        self.saved = {}

    def __enter__(self):
        for k, v in self.values.items():
            self.saved[k] = os.environ.get(k)
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class TestBackend(unittest.TestCase):
    def setUp(self):
        self.backend = load_backend()

    def test_hooks_need_nothing(self):
        self.assertEqual(self.backend.get_requires_for_build_wheel(), [])
        self.assertEqual(self.backend.get_requires_for_build_editable(), [])

    def test_metadata(self):
        d = support.private_dir()
        name = self.backend.prepare_metadata_for_build_wheel(d)
        self.assertEqual(name, "flagshim-0.2.0.dev0.dist-info")
        with open(os.path.join(d, name, "METADATA")) as f:
            meta = f.read()
        self.assertIn("Name: flagshim\n", meta)
        self.assertIn("Version: 0.2.0.dev0\n", meta)
        self.assertIn("Requires-Python: >=3.8\n", meta)

    def test_wheel_from_prebuilt_library(self):
        lib = support.library(self)
        d = support.private_dir()
        with _Env(FLAGSHIM_PREBUILT_LIBRARY=lib), contextlib.redirect_stdout(io.StringIO()):
            name = self.backend.build_wheel(d)
        plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        self.assertEqual(name, f"flagshim-0.2.0.dev0-py3-none-{plat}.whl", "a platform wheel: it holds a .so")
        with zipfile.ZipFile(os.path.join(d, name)) as z:
            names = set(z.namelist())
            for want in ["flagshim/__init__.py", "flagshim/_lib.py", "flagshim/_elf.py", "flagshim/errors.py", "flagshim/nvshmem.py",
                         "flagshim/triton.py", "flagshim/__main__.py", "flagshim/_decided.py", "flagshim/_pathcheck.py",
                         "flagshim/py.typed", "flagshim/libflagshim.so",
                         "flagshim-0.2.0.dev0.dist-info/METADATA", "flagshim-0.2.0.dev0.dist-info/WHEEL",
                         "flagshim-0.2.0.dev0.dist-info/RECORD"]:
                self.assertIn(want, names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.startswith("tests/")], names)
            wheel = z.read("flagshim-0.2.0.dev0.dist-info/WHEEL").decode()
            self.assertIn("Root-Is-Purelib: false\n", wheel)
            self.assertIn(f"Tag: py3-none-{plat}\n", wheel)
            with open(lib, "rb") as f:
                self.assertEqual(z.read("flagshim/libflagshim.so"), f.read())
            mode = (z.getinfo("flagshim/libflagshim.so").external_attr >> 16) & 0o777
            self.assertEqual(mode, 0o755)
            record = list(csv.reader(io.StringIO(z.read("flagshim-0.2.0.dev0.dist-info/RECORD").decode())))
            listed = {row[0] for row in record}
            self.assertEqual(listed, names, "RECORD lists every file")
            for path, digest, size in record:
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), path)

    def test_missing_go(self):
        d = support.private_dir()
        with _Env(FLAGSHIM_PREBUILT_LIBRARY=None, FLAGSHIM_GO="/nonexistent/go"):
            with self.assertRaises(self.backend.BuildError) as cm:
                self.backend.build_wheel(d)
        msg = str(cm.exception)
        for word in ("Go toolchain", "FLAGSHIM_GO", "FLAGSHIM_PREBUILT_LIBRARY", "cgo"):
            self.assertIn(word, msg)
        self.assertEqual(os.listdir(d), [], "no half-written wheel is left")

    def test_relative_prebuilt(self):
        with _Env(FLAGSHIM_PREBUILT_LIBRARY="libflagshim.so"):
            with self.assertRaises(self.backend.BuildError) as cm:
                self.backend.build_wheel(support.private_dir())
        self.assertIn("absolute", str(cm.exception))


class TestPipInstall(unittest.TestCase):
    """pip install --no-build-isolation --no-deps --target <tmp> ./python,
    offline, then the package imported from <tmp> in a new process."""

    def setUp(self):
        if importlib.util.find_spec("pip") is None:
            self.skipTest(f"no pip for {sys.executable}")

    def pip_install(self, env, isolated=False):
        target = os.path.join(support.private_dir(), "site")
        # --no-index: nothing may come from a package index. pip builds in
        # the tree (the backend finds the Go module one folder up) and the
        # backend writes nothing there.
        cmd = [sys.executable, "-m", "pip", "install"] + ([] if isolated else ["--no-build-isolation"]) + [
            "--no-deps", "--no-index", "--disable-pip-version-check", "--no-cache-dir", "--target", target,
            support.PYTHON_DIR]
        full = {k: v for k, v in os.environ.items() if not k.startswith(("FLAGSHIM_", "PIP_"))}
        full.update(env)
        r = subprocess.run(cmd, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)}:\n{r.stdout}")
        return target

    def check_installed(self, target):
        env = {"PYTHONPATH": target, **support.musa_machine(self)}
        got = support.result(
            self,
            "import flagshim; out([flagshim.library_path(), flagshim.__file__, flagshim.resolve('cuda:1')])",
            env,
            library_env=False,
        )
        lib, init, resolved = got
        self.assertEqual(lib, os.path.join(os.path.realpath(target), "flagshim", "libflagshim.so"),
                         "the library installed beside the package")
        self.assertTrue(init.startswith(target), init)
        self.assertEqual(resolved, "flagos:1")
        self.assertTrue(os.path.isdir(os.path.join(target, "flagshim-0.2.0.dev0.dist-info")))

    # Two installs cover the three ways: a prebuilt library with build
    # isolation (the backend requires nothing to download), and the
    # backend's own go build without it (README's command). A third, a
    # prebuilt library without isolation, would add 3 CPU seconds and no
    # path of the backend's: FLAGSHIM_PREBUILT_LIBRARY is read the same way
    # under both (test_wheel_from_prebuilt_library checks the wheel).
    def test_prebuilt_isolated(self):
        lib = support.library(self)
        self.check_installed(self.pip_install({"FLAGSHIM_PREBUILT_LIBRARY": lib}, isolated=True))

    def test_go_build(self):
        go = shutil.which("go")
        if not go:
            self.skipTest("no go command: the backend's own go build cannot run here")
        if not support.cc():
            self.skipTest("no C compiler: the backend's go build needs cgo")
        self.check_installed(self.pip_install({}))
        self.assertFalse(os.path.exists(os.path.join(support.PYTHON_DIR, "build")), "pip left no build folder")


if __name__ == "__main__":
    unittest.main()
