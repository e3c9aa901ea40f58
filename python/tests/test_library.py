"""Finding and loading libflagshim.so: FLAGSHIM_LIBRARY, the checks made
before loading, and what is refused."""

import json
import os
import platform
import shutil
import struct
import subprocess
import sys
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


# Runs _pathcheck._private_group on each case [gid, uid, passwd, group, want]
# and reports what it answered.
PRIVATE_GROUP = """
import flagshim._pathcheck as lib
out([lib._private_group(gid, uid, passwd, group) for gid, uid, passwd, group, _ in json.loads(sys.argv[1])])
"""

# Runs _lib.check on argv[1]: ["ok", path] or [exception class, message].
CHECK = """
import flagshim._lib as lib
try:
    out(["ok", lib.check(sys.argv[1])])
except Exception as e:
    out([type(e).__name__, str(e)])
"""

# Feeds _elf.why argv[2] mutations of the file argv[1] (seeded) and reports
# how many were refused, accepted, and any exception escaping it.
MUTATE = """
import random
import flagshim._elf as elf
good = open(sys.argv[1], "rb").read()
rng = random.Random(7)
refused = accepted = 0
for _ in range(int(sys.argv[2])):
    b = bytearray(good)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    if rng.random() < 0.2:
        b = b[:rng.randrange(len(b))]
    b = bytes(b)
    try:
        w = elf.why(b[:64], len(b), lambda off, n: b[off:off + n])
    except Exception as e:
        out(["raised", type(e).__name__, str(e), b.hex()])
        sys.exit(0)
    if w is None:
        accepted += 1
    else:
        assert isinstance(w, str) and w, w
        refused += 1
out(["ok", refused, accepted])
"""

# After IMPORT: the ABI version of the library loaded, where the import worked.
ABI = """
if "flagshim" in globals():
    out(["abi", list(flagshim.abi_version())])
"""

# The rest of flagshim.h's functions, for a stub library (test_abi_version).
STUB_FUNCTIONS = """
int flagshim_resolve(const char *d, char *o, int n) { (void)d; (void)o; (void)n; return -2; }
int flagshim_alias_active(void) { return 0; }
int flagshim_ready(void) { return 0; }
int flagshim_info_json(char *o, int n) { (void)o; (void)n; return -2; }
int flagshim_select_json(const char *t, const char *d, char *o, int n) { (void)t; (void)d; (void)o; (void)n; return -2; }
int flagshim_error(char *o, int n) { (void)o; (void)n; return 0; }
int flagshim_module_loaded(const char *b, unsigned long long m, char *o, int n) { (void)b; (void)m; (void)o; (void)n; return -2; }
int flagshim_module_unloading(const char *b, unsigned long long m) { (void)b; (void)m; return -2; }
int flagshim_nvshmem_attach(int d) { (void)d; return -2; }
int flagshim_nvshmem_init(int d) { (void)d; return -2; }
"""

# The ELF e_machine of this process's machine, where the check knows it.
HOST_EM = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}.get(platform.machine().lower())


def root_only(test):
    if os.geteuid() != 0:
        test.skipTest("needs root, to give a file to another user or group")


def unused_gid():
    """A gid that /etc/group does not list (so it is nobody's private group)."""
    with open("/etc/group") as f:
        used = {line.split(":")[2] for line in f if line.count(":") >= 3}
    return next(g for g in range(54321, 1 << 20) if str(g) not in used)


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

    def elf_header(self, folder, e_type=3, e_machine=None):
        """A file holding only a 64-byte ELF header (64-bit, little-endian)
        of type e_type for machine e_machine (default this one's)."""
        if sys.byteorder != "little" or struct.calcsize("P") != 8 or HOST_EM is None:
            self.skipTest(f"the ELF fixtures are for 64-bit little-endian x86_64 or aarch64, not {platform.machine()}")
        ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
        rest = struct.pack("<HHIQQQIHHHHHH", e_type, e_machine or HOST_EM, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
        path = os.path.join(folder, "libflagshim.so")
        with open(path, "wb") as f:
            f.write(ident + rest)
        os.chmod(path, 0o755)
        return path

    def minimal_elf(self, folder, flags1=0, load_type=1, dyn_size=32):
        """The smallest shared object the check accepts, built by hand as
        internal/dl's tests build it: an ELF header, a PT_LOAD (load_type)
        covering the file and a PT_DYNAMIC (dyn_size bytes) holding
        DT_FLAGS_1 = flags1 and DT_NULL."""
        if sys.byteorder != "little" or struct.calcsize("P") != 8 or HOST_EM is None:
            self.skipTest(f"the ELF fixtures are for 64-bit little-endian x86_64 or aarch64, not {platform.machine()}")
        size = 64 + 2 * 56 + 32
        ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
        head = ident + struct.pack("<HHIQQQIHHHHHH", 3, HOST_EM, 1, 0, 64, 0, 0, 64, 56, 2, 64, 0, 0)
        load = struct.pack("<IIQQQQQQ", load_type, 4, 0, 0, 0, size, size, 0x1000)
        dyn = struct.pack("<IIQQQQQQ", 2, 4, 64 + 2 * 56, 64 + 2 * 56, 0, dyn_size, dyn_size, 8)
        path = os.path.join(folder, "libflagshim.so")
        with open(path, "wb") as f:
            f.write(head + load + dyn + struct.pack("<QQQQ", 0x6FFFFFFB, flags1, 0, 0))
        os.chmod(path, 0o755)
        return path

    def check(self, path):
        return support.result(self, CHECK, args=[path])

    def assertCheckRefused(self, path, *words):
        """The check alone (no load) refuses path, naming each of words."""
        got = self.check(path)
        self.assertEqual(got[0], "LibraryError", got)
        for w in words:
            self.assertIn(w, got[1])

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
        self.assertRefused(self.load(lib), f"folder {shared} (mode 0777) is writable by anyone", f"chmod o-w {shared}")

    def test_world_writable_ancestor(self):
        # Not only the library's own folder: every folder from / down.
        d = support.private_dir()
        shared = os.path.join(d, "shared")
        lib = self.copy_into(os.path.join(shared, "sub"))
        os.chmod(shared, 0o777)
        self.assertRefused(self.load(lib), f"folder {shared} (mode 0777) is writable by anyone", f"chmod o-w {shared}")
        os.chmod(shared, 0o755)
        self.assertEqual(self.load(lib), ["ok", os.path.realpath(lib)])

    def test_sticky_folder(self):
        # A sticky world-writable folder (as /tmp) passes when the entry on
        # the path belongs to this user or root: no one else can replace it.
        d = support.private_dir()
        pub = os.path.join(d, "pub")
        lib = self.copy_into(pub)
        os.chmod(pub, 0o1777)
        self.assertEqual(self.load(lib), ["ok", os.path.realpath(lib)])

    def test_sticky_folder_foreign_entry(self):
        root_only(self)
        d = support.private_dir()
        pub = os.path.join(d, "pub")
        lib = self.copy_into(pub)
        os.chmod(pub, 0o1777)
        os.chown(lib, 4321, -1)
        self.assertRefused(self.load(lib), f"folder {pub} (mode 01777) is writable by anyone and sticky",
                           f"its entry {lib} belongs to uid 4321")

    def test_foreign_owned_folder(self):
        root_only(self)
        d = support.private_dir()
        sub = os.path.join(d, "sub")
        lib = self.copy_into(sub)
        os.chown(sub, 4321, -1)
        self.assertRefused(self.load(lib), f"folder {sub} belongs to uid 4321", f"chown root {sub}")

    def test_group_writable_file(self):
        # Root's group may write it; a group that is not the owner's private
        # one may not.
        root_only(self)
        lib = self.copy_into(support.private_dir(), mode=0o775)
        self.assertEqual(self.load(lib), ["ok", os.path.realpath(lib)])
        gid = unused_gid()
        os.chown(lib, -1, gid)
        os.chmod(lib, 0o775)
        self.assertRefused(self.load(lib), f"file {lib} (mode 0775) is writable by group {gid}", f"chmod g-w {lib}")

    def test_private_group(self):
        passwd = "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n"
        group = "root:x:0:\nalice:x:1000:\n"
        bob = "bob:x:1001:1000::/home/bob:/bin/sh\n"
        cases = [
            [1000, 1000, passwd, group, True],  # alice's primary group, nobody else's
            [1000, 1000, passwd, "root:x:0:\nalice:x:1000:alice\n", True],  # listed as its member too
            [1000, 1000, "# users\r\n" + passwd.replace("\n", "\r\n"), "\n" + group, True],  # comments, CRLF
            [2000, 1000, passwd, group + "dev:x:2000:alice\n", True],  # its one member by the list
            [2000, 1000, passwd, group + "dev:x:2000:\n", False],  # no member at all
            [1000, 1000, passwd + bob, group, False],  # bob's primary group as well
            [1000, 1000, passwd, "root:x:0:\nalice:x:1000:alice,bob\n", False],  # bob listed
            [1000, 1001, passwd + "bob:x:1001:1001::/:/bin/sh\n", group, False],  # not bob's
            [3000, 1000, passwd, group, False],  # a group the file does not list
            [1000, 1002, passwd, group, False],  # a user it does not list
            [1000, 1000, passwd + "+bob:x:1001:1001::/:/bin/sh\n", group, False],  # NIS in passwd
            [1000, 1000, passwd, group + "+nis:x:3000:\n", False],  # NIS in group
            [1000, 1000, passwd + "-bob:x:1001:1001::/:/bin/sh\n", group, False],
            [1000, 1000, passwd + "carol:x:nope:1002::/:/bin/sh\n", group, False],  # a line it cannot read
            [1000, 1000, passwd, group + "short:x\n", False],
        ]
        got = support.result(self, PRIVATE_GROUP, args=[json.dumps(cases)])
        self.assertEqual(got, [c[4] for c in cases], [c[:2] + [c[4]] for c in cases])

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
        self.assertRefused(self.load(link), f"folder {shared} (mode 0777) is writable by anyone",
                           f"(checking {link} via {link} -> {real})")
        os.chmod(shared, 0o700)
        self.assertEqual(self.load(link), ["ok", real])

    def test_symlink_hop_through_shared_folder(self):
        # A link in the middle of the chain lies in a folder anyone may
        # write: the target is safe, the way to it is not.
        d = support.private_dir()
        real = self.copy_into(os.path.join(d, "real"))
        shared = os.path.join(d, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        middle = os.path.join(shared, "libflagshim.so")
        os.symlink(real, middle)
        link = os.path.join(d, "libflagshim.so")
        os.symlink(middle, link)
        self.assertRefused(self.load(link), f"folder {shared} (mode 0777) is writable by anyone",
                           f"via {link} -> {middle}")

    def test_relative_symlink(self):
        # A relative target is resolved against the link's folder, ".." included.
        d = support.private_dir()
        real = self.copy_into(os.path.join(d, "real"))
        os.mkdir(os.path.join(d, "links"))
        link = os.path.join(d, "links", "libflagshim.so")
        os.symlink("../real/./libflagshim.so", link)
        self.assertEqual(self.load(link), ["ok", os.path.realpath(real)])

    def test_symlink_loop(self):
        d = support.private_dir()
        a, b = os.path.join(d, "a.so"), os.path.join(d, "b.so")
        os.symlink("b.so", a)
        os.symlink("a.so", b)
        self.assertRefused(self.load(a), "more than 40 symbolic links (a loop?)", f"via {a} -> b.so, {b} -> a.so")

    def test_not_elf(self):
        d = support.private_dir()
        path = os.path.join(d, "libflagshim.so")
        with open(path, "w") as f:
            f.write("INPUT(libflagshim.so.1)\n")  # a linker script, say
        os.chmod(path, 0o755)
        self.assertRefused(self.load(path), "not an ELF file", "reinstall the library")

    def test_truncated_library(self):
        d = support.private_dir()
        path = os.path.join(d, "libflagshim.so")
        with open(self.lib, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read(4096))
        os.chmod(path, 0o755)
        self.assertRefused(self.load(path), "ends past the end of the file (4096 bytes): truncated or corrupt")

    def test_elf_for_another_machine(self):
        d = support.private_dir()
        other = 183 if HOST_EM == 62 else 62
        path = self.elf_header(d, e_machine=other)
        names = {62: "EM_X86_64", 183: "EM_AARCH64"}
        self.assertRefused(self.load(path), f"built for {names[other]}", f"runs on {names[HOST_EM]}")

    def test_elf_executable(self):
        d = support.private_dir()
        path = self.elf_header(d, e_type=2)
        self.assertRefused(self.load(path), "ELF type ET_EXEC, not a shared library (ET_DYN)")

    def test_minimal_elf_passes_the_check(self):
        path = self.minimal_elf(support.private_dir())
        self.assertEqual(self.check(path), ["ok", os.path.realpath(path)])
        # Other DT_FLAGS_1 bits (DF_1_NOW) are fine.
        path = self.minimal_elf(support.private_dir(), flags1=0x1)
        self.assertEqual(self.check(path), ["ok", os.path.realpath(path)])

    def test_pie_flag_refused(self):
        path = self.minimal_elf(support.private_dir(), flags1=0x08000000)
        self.assertCheckRefused(path, "a position-independent executable (DF_1_PIE), not a shared library")

    def test_pie_executable_refused(self):
        # A real PIE is ET_DYN like a library; only its dynamic section
        # tells them apart, as the Go loader reads it.
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler (cc, gcc or $CC) to build a position-independent executable")
        d = support.private_dir()
        src, exe = os.path.join(d, "main.c"), os.path.join(d, "libflagshim.so")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        subprocess.run([cc, "-fPIE", "-pie", "-o", exe, src], check=True)
        os.chmod(exe, 0o755)
        self.assertRefused(self.load(exe), "position-independent executable (DF_1_PIE)")

    def test_no_loadable_segment(self):
        path = self.minimal_elf(support.private_dir(), load_type=4)  # PT_NOTE
        self.assertCheckRefused(path, "no loadable segment")

    def test_segment_past_the_end(self):
        path = self.minimal_elf(support.private_dir(), dyn_size=4096)
        self.assertCheckRefused(
            path, "segment 1 (PT_DYNAMIC) covers [0xb0, 0xb0+0x1000) of the file, which has 208 bytes")

    def test_mutated_elf_never_raises(self):
        # Every mutation of a good header is refused with a reason or
        # accepted; none makes the check itself raise.
        path = self.minimal_elf(support.private_dir())
        got = support.result(self, MUTATE, args=[path, "3000"])
        self.assertEqual(got[0], "ok", got)
        self.assertGreater(got[1], 0, "mutations are refused")
        self.assertGreater(got[2], 0, "some mutations (of bytes the check ignores) still pass")

    def test_not_libflagshim(self):
        other = support.Fakes.build(self, "mtml")  # a shared library without flagshim's functions
        self.assertRefused(self.load(other), "lacks flagshim_")

    def stub(self, abi, only_version=False):
        """A library with flagshim.h's functions (or flagshim_abi_version
        alone) whose flagshim_abi_version returns abi."""
        d = support.private_dir()
        src = os.path.join(d, "stub.c")
        with open(src, "w") as f:
            f.write(f"int flagshim_abi_version(void) {{ return {abi}; }}\n")
            if not only_version:
                f.write(STUB_FUNCTIONS)
        out = os.path.join(d, "libflagshim.so")
        support.Fakes._compile(self, out, [src], [])
        return out

    def test_abi_version(self):
        # The import checks the library's ABI major first: another major is
        # refused whatever functions it has; a newer minor is fine.
        for abi, only_version, want in [
            (20000, False, "ABI version 2.0 (flagshim_abi_version() = 20000)"),
            (20000, True, "ABI version 2.0"),
            (0, False, "ABI version 0.0"),
            (-8, False, "flagshim_abi_version() = -8"),
            (10003, False, None),
        ]:
            got = support.result(self, IMPORT + ABI,
                                 {"FLAGSHIM_LIBRARY": self.stub(abi, only_version)})
            if want is None:
                self.assertEqual(got, ["abi", [1, 3]], "a newer minor of ABI 1 is accepted")
                continue
            self.assertRefused(got, want, "knows ABI 1.x only")
        got = support.result(self, IMPORT + ABI)
        self.assertEqual(got, ["abi", [1, 3]], "the library of this checkout: ABI 1.3")

    def test_older_minor(self):
        # An ABI 1.0 library loads; what 1.1 added raises LibraryError.
        code = IMPORT + """
try:
    flagshim.get_device_properties(0)
except flagshim.LibraryError as e:
    out(["LibraryError", str(e)])
"""
        got = support.result(self, code, {"FLAGSHIM_LIBRARY": self.stub(10000)})
        self.assertEqual(got[0], "LibraryError")
        self.assertIn("has ABI 1.0 and lacks flagshim_device_json (ABI 1.1)", got[1])

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


class TestImportCost(unittest.TestCase):
    """import flagshim stays cheap for the host that pays it at its start
    (issue 40: json, re, enum and typing were most of the package's import
    time, then ctypes, then os and struct): the modules the package imports
    are the ones it needs to load the library (_ctypes, not ctypes; posix,
    not os). Its functions import what they use (json in info()) when
    called."""

    HEAVY = ("json", "re", "enum", "typing", "platform", "threading", "importlib", "collections", "ctypes",
             "os", "posixpath", "stat", "struct", "errno", "__future__",
             "flagshim.nvshmem", "flagshim.triton", "flagshim.devices")

    def test_import_loads_no_heavy_module(self):
        code = (
            "import sys\n"
            "import flagshim\n"
            f"print(','.join(m for m in {self.HEAVY!r} if m in sys.modules))\n"
            "flagshim.resolve('cpu')\n"  # the first answer imports nothing heavy either
            "flagshim.resolve('cuda:0')\n"
            f"print(','.join(m for m in {self.HEAVY!r} if m in sys.modules))\n"
            # the submodules load on first use, after a plain import flagshim
            "print(flagshim.nvshmem.enable.__module__, flagshim.triton.install.__module__)\n"
        )
        p = subprocess.run(support.PYTHON + ["-c", code], env=support.scenario_env(self, support.no_libraries()),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)
        self.assertEqual(0, p.returncode, p.stderr)
        self.assertEqual(["", "", "flagshim.nvshmem flagshim.triton"], p.stdout.splitlines(),
                         "modules imported by import flagshim, then by resolve; then the submodules on first use")

    def test_library_set_in_os_environ(self):
        # The package reads the environment without os (posix.environ): a
        # host that set FLAGSHIM_LIBRARY in os.environ before the import is
        # heard, as when the package read os.environ.
        lib = support.library(self)
        env = support.scenario_env(self, support.no_libraries())
        env["FLAGSHIM_LIBRARY"] = "relative/libflagshim.so"  # refused, were it read
        code = (
            "import os, sys\n"
            f"os.environ['FLAGSHIM_LIBRARY'] = {lib!r}\n"
            "import flagshim\n"
            "print(flagshim.library_path() == os.path.realpath(os.environ['FLAGSHIM_LIBRARY']))\n"
        )
        p = subprocess.run(support.PYTHON + ["-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=support.TIMEOUT)
        self.assertEqual(0, p.returncode, p.stderr)
        self.assertEqual("True", p.stdout.strip())

    def test_info_still_parses(self):
        code = "import flagshim\nprint(sorted(flagshim.info())[:2])\n"
        p = subprocess.run(support.PYTHON + ["-c", code], env=support.scenario_env(self, support.no_libraries()),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)
        self.assertEqual(0, p.returncode, p.stderr)
        self.assertEqual("['alias', 'backends']", p.stdout.strip())


class TestNVMLSession(unittest.TestCase):
    """The C library leaves the NVML session of its presence probe open
    (flagshim.WithoutShutdown: nvmlShutdown was 2.9 ms of a host's first
    answer on an H100, issue 40), and a later query in the process ends it
    before starting its own (tier/presence's TestQueryWithoutShutdown)."""

    def test_first_answer_leaves_nvml_open(self):
        log = os.path.join(support.private_dir("flagshim-nvml-log-"), "calls")
        env = {**support.no_libraries(), "FLAGOS_LIBNVML_PATH": support.Fakes.build(self, "nvml"),
               "FAKE_NVML_LOG": log, "FLAGOS_PROBE": "presence"}
        code = "import flagshim\nflagshim.resolve('cuda:0')\nflagshim.info()\n"
        p = subprocess.run(support.PYTHON + ["-c", code], env=support.scenario_env(self, env),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)
        self.assertEqual(0, p.returncode, p.stderr)
        with open(log) as f:
            calls = f.read().split()
        self.assertEqual(1, calls.count("nvmlInit_v2"), calls)
        self.assertIn("nvmlDeviceGetCount_v2", calls)
        self.assertNotIn("nvmlShutdown", calls, "the presence probe's session is left for the exit")
