"""Finding and loading libflagshim.so: FLAGSHIM_LIBRARY, the checks made
before loading, and what is refused."""

import os
import shutil
import unittest

import support

# Imports flagshim and reports the outcome: ["ok", library_path] or
# [exception class, message, is an ImportError, is a flagshim Error].
IMPORT = """
try:
    import flagshim
    out(["ok", flagshim.library_path()])
except Exception as e:
    # The package's import failed, so it is not importable; its errors
    # module, imported first, stays in sys.modules.
    Error = sys.modules["flagshim.errors"].Error
    out([type(e).__name__, str(e), isinstance(e, ImportError), isinstance(e, Error)])
"""


class TestLibrary(unittest.TestCase):
    def setUp(self):
        self.lib = support.library(self)

    def load(self, path):
        return support.result(self, IMPORT, {"FLAGSHIM_LIBRARY": path})

    def copy_into(self, folder, name="libflagshim.so", mode=0o755):
        os.makedirs(folder, exist_ok=True)
        dst = os.path.join(folder, name)
        shutil.copyfile(self.lib, dst)
        os.chmod(dst, mode)
        return dst

    def assertRefused(self, got, *words):
        self.assertEqual(got[0], "LibraryError", got)
        self.assertTrue(got[2] and got[3], "LibraryError is an ImportError and a flagshim.Error")
        for w in words:
            self.assertIn(w, got[1])

    def test_loads(self):
        got = self.load(self.lib)
        self.assertEqual(got, ["ok", os.path.realpath(self.lib)])

    def test_relative_path(self):
        got = self.load("build/libflagshim.so")
        self.assertRefused(got, "FLAGSHIM_LIBRARY", "absolute")

    def test_missing(self):
        got = self.load(os.path.join(support.private_dir(), "libflagshim.so"))
        self.assertRefused(got, "not found", "go build")

    def test_world_writable_folder(self):
        d = support.private_dir()
        shared = os.path.join(d, "shared")
        lib = self.copy_into(shared)
        os.chmod(shared, 0o777)
        self.assertRefused(self.load(lib), "writable by group or others", shared)

    def test_group_writable_file(self):
        lib = self.copy_into(support.private_dir(), mode=0o775)
        self.assertRefused(self.load(lib), "writable by group or others", "0775")

    def test_not_a_regular_file(self):
        d = support.private_dir()
        os.mkdir(os.path.join(d, "libflagshim.so"), 0o700)
        self.assertRefused(self.load(os.path.join(d, "libflagshim.so")), "not a regular file")

    def test_symlink_checks_the_target(self):
        d = support.private_dir()
        shared = os.path.join(d, "shared")
        real = self.copy_into(shared)
        os.chmod(shared, 0o777)
        link = os.path.join(d, "libflagshim.so")
        os.symlink(real, link)
        self.assertRefused(self.load(link), shared)
        os.chmod(shared, 0o700)
        self.assertEqual(self.load(link), ["ok", real])

    def test_not_libflagshim(self):
        other = support.Fakes.build(self, "mtml")  # a shared library without flagshim's functions
        self.assertRefused(self.load(other), "lacks flagshim_")

    def test_beside_the_package(self):
        # Without FLAGSHIM_LIBRARY the library beside the package is loaded:
        # a copy of the package with the library in it.
        d = support.private_dir()
        pkg = os.path.join(d, "flagshim")
        shutil.copytree(os.path.join(support.PYTHON_DIR, "flagshim"), pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "libflagshim.so"))
        self.copy_into(pkg)
        got = support.result(self, IMPORT, {"PYTHONPATH": d}, library_env=False)
        self.assertEqual(got, ["ok", os.path.join(os.path.realpath(pkg), "libflagshim.so")])


if __name__ == "__main__":
    unittest.main()
