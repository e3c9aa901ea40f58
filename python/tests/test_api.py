"""resolve, alias_active, info and the errors, each scenario in a process of
its own on a fake machine."""

import os
import subprocess
import sys
import unittest

import support

# docs/json.md: the keys and types of info().
TOP = {"schema_version": int, "probe": str, "alias": dict, "backends": list, "probes": list, "phases": list, "env": list}
ALIAS = {"active": bool, "from": str, "to": str, "reason": str}
BACKEND = {
    "type": str,
    "available": bool,
    "devices": int,
    "reason": str,
    "library": str,
    "driver_version": str,
    "attempts": list,
    "properties": list,
}
PROPERTY = {
    "index": int,
    "name": str,
    "vendor": str,
    "uuid": str,
    "total_memory": int,
    "major": int,
    "minor": int,
    "multiprocessors": int,
}
PROBE_ANSWER = {"available": bool, "devices": int, "reason": str}
PHASE = {"name": str, "step": str, "duration_ns": int, "error": str}
ENV = {"name": str, "value": str, "set": bool}
ENV_NAMES = [
    "FLAGOS_ALIAS_CUDA",
    "FLAGOS_BACKEND",
    "FLAGOS_PROBE",
    "FLAGOS_PROBE_TIMEOUT",
    "FLAGOS_LIBCUDA_PATH",
    "FLAGOS_LIBMUSA_PATH",
    "FLAGOS_LIBHIP_PATH",
    "FLAGOS_LIBNVML_PATH",
    "FLAGOS_LIBMTML_PATH",
    "FLAGOS_LIBNVSHMEM_PATH",
    "FLAGOS_LOG",
    "CUDA_VISIBLE_DEVICES",
    "MUSA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
]


class TestMusaMachine(unittest.TestCase):
    """A MUSA-only machine (fake libmusa and MTML, no CUDA): cuda means flagos."""

    def setUp(self):
        self.env = support.musa_machine(self)

    def test_resolve_and_alias(self):
        got = support.result(
            self,
            """
            import flagshim
            out({"cuda:1": flagshim.resolve("cuda:1"), "cuda": flagshim.resolve("cuda"),
                 "musa:1": flagshim.resolve("musa:1"), "cpu": flagshim.resolve("cpu"),
                 "alias": flagshim.alias_active(), "probe_env": os.environ.get("FLAGOS_PROBE")})
            """,
            self.env,
        )
        self.assertEqual(
            got,
            {"cuda:1": "flagos:1", "cuda": "flagos", "musa:1": "musa:1", "cpu": "cpu", "alias": True, "probe_env": None},
        )

    def check_keys(self, obj, schema, where):
        for key, typ in schema.items():
            self.assertIn(key, obj, f"{where} lacks {key!r} (docs/json.md)")
            self.assertIsInstance(obj[key], typ, f"{where}.{key}")
            if typ is int:
                self.assertNotIsInstance(obj[key], bool, f"{where}.{key}")

    def test_info(self):
        log = os.path.join(support.private_dir(), "fake.log")
        info = support.result(self, "import flagshim; out(flagshim.info())", dict(self.env, FAKE_LOG=log))
        self.assertEqual(list(info)[0], "schema_version")
        self.check_keys(info, TOP, "info()")
        self.assertEqual(info["schema_version"], 1)
        self.assertEqual(info["probe"], "presence", "FLAGOS_PROBE unset: the C library's default tier")
        self.check_keys(info["alias"], ALIAS, "alias")
        self.assertTrue(info["alias"]["active"])
        self.assertEqual((info["alias"]["from"], info["alias"]["to"]), ("cuda", "flagos"))
        types = [b["type"] for b in info["backends"]]
        self.assertEqual(types, sorted(types), "backends sorted by type")
        self.assertTrue({"cpu", "cuda", "flagos", "musa"} <= set(types), types)
        for b in info["backends"]:
            self.check_keys(b, BACKEND, f"backends[{b['type']}]")
            for p in b["properties"]:
                self.check_keys(p, PROPERTY, f"backends[{b['type']}].properties")
        by = {b["type"]: b for b in info["backends"]}
        self.assertEqual((by["musa"]["available"], by["musa"]["devices"]), (True, 2))
        self.assertEqual(by["musa"]["tier"], "presence")
        self.assertEqual(by["flagos"]["routes_to"], "musa")
        self.assertFalse(by["cuda"]["available"])
        self.assertEqual(len(by["musa"]["properties"]), 2)
        for p in info["probes"]:
            self.assertIsInstance(p["name"], str)
            self.check_keys(p["live"], PROBE_ANSWER, "probes[].live")
            self.check_keys(p["original"], PROBE_ANSWER, "probes[].original")
            self.assertIsInstance(p["redirected_by"], list)
        for ph in info["phases"]:
            self.check_keys(ph, PHASE, "phases[]")
        for e in info["env"]:
            self.check_keys(e, ENV, "env[]")
        self.assertEqual([e["name"] for e in info["env"]], ENV_NAMES)
        self.assertFalse(os.path.exists(log), "presence: libmusa was found and checked, never loaded: none of its code ran")

    def test_alias_forbidden(self):
        got = support.result(
            self,
            "import flagshim; out([flagshim.resolve('cuda:1'), flagshim.alias_active()])",
            dict(self.env, FLAGOS_ALIAS_CUDA="0"),
        )
        self.assertEqual(got, ["cuda:1", False])

    def test_exact_tier(self):
        log = os.path.join(support.private_dir(), "fake.log")
        got = support.result(
            self,
            "import flagshim; out([flagshim.resolve('cuda:1'), flagshim.info()['probe']])",
            dict(self.env, FLAGOS_PROBE="exact", FAKE_LOG=log),
        )
        self.assertEqual(got, ["flagos:1", "exact"])
        with open(log) as f:
            self.assertIn("init", f.read(), "FLAGOS_PROBE=exact initializes the driver in the process")

    def test_bad_setting_is_init_error(self):
        got = support.result(
            self,
            """
            import flagshim
            res = {}
            for name, call in [("resolve", lambda: flagshim.resolve("cuda:0")), ("alias", flagshim.alias_active),
                               ("info", flagshim.info)]:
                try:
                    call()
                    res[name] = None
                except flagshim.InitError as e:
                    res[name] = [type(e).__name__, str(e), e.code, e.cause, isinstance(e, flagshim.Error)]
            out(res)
            """,
            dict(self.env, FLAGOS_ALIAS_CUDA="bogus"),
        )
        for name in ("resolve", "alias", "info"):
            self.assertIsNotNone(got[name], f"{name} with FLAGOS_ALIAS_CUDA=bogus did not raise InitError")
            cls, msg, code, cause, is_error = got[name]
            self.assertEqual(cls, "InitError")
            self.assertIn("FLAGOS_ALIAS_CUDA", msg, "the message names the variable")
            self.assertIn("FLAGOS_ALIAS_CUDA", cause)
            self.assertEqual(code, -1)
            self.assertTrue(is_error)

    def test_bad_device(self):
        got = support.result(
            self,
            """
            import flagshim
            res = []
            for s in ["cuda:x", "CUDA", "nope:0", "", "cpu:-1", "cuda:0\\0junk"]:
                try:
                    res.append(["ok", flagshim.resolve(s)])
                except flagshim.DeviceError as e:
                    res.append([str(e), e.code, e.cause, isinstance(e, ValueError), isinstance(e, flagshim.Error)])
            try:
                flagshim.resolve(1)
            except TypeError as e:
                res.append(["TypeError", str(e)])
            out(res)
            """,
            self.env,
        )
        msg, code, cause, is_value, is_error = got[0]
        self.assertIn("'cuda:x'", msg, "the message quotes the string")
        self.assertIn(cause, msg, "the message includes flagshim_error's text")
        self.assertIn("invalid device string", cause)
        self.assertEqual(code, -3)
        self.assertTrue(is_value and is_error, "DeviceError is a flagshim.Error and a ValueError")
        for r in got[1:5]:
            self.assertNotEqual(r[0], "ok", r)
            self.assertEqual(r[1], -3, r)
        self.assertNotEqual(got[5][0], "ok", "a NUL inside a device string is refused, not cut")
        self.assertEqual(got[6][0], "TypeError")

    def test_settings_are_read_at_import(self):
        # The Go runtime copies the environment when the library is loaded:
        # a setting made after `import flagshim` is not seen (README says so).
        got = support.result(
            self,
            """
            import flagshim
            os.environ["FLAGOS_ALIAS_CUDA"] = "0"
            out([flagshim.resolve("cuda:1"), flagshim.alias_active()])
            """,
            self.env,
        )
        self.assertEqual(got, ["flagos:1", True])

    def test_python_m_flagshim(self):
        env = support.scenario_env(self, self.env)
        p = subprocess.run([sys.executable, "-m", "flagshim"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=support.TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        import json

        summary = json.loads(p.stdout)
        self.assertEqual(summary["resolve"], {"cuda:0": "flagos:0"})
        self.assertTrue(summary["alias_active"])
        self.assertEqual(summary["info"]["schema_version"], 1)
        p = subprocess.run([sys.executable, "-m", "flagshim"], env=dict(env, FLAGOS_ALIAS_CUDA="bogus"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FLAGOS_ALIAS_CUDA", p.stderr)


class TestNoAccelerator(unittest.TestCase):
    def test_plain_machine(self):
        none = support.nowhere()
        env = {f"FLAGOS_LIB{n}_PATH": os.path.join(none, f) for n, f in
               [("CUDA", "libcuda.so.1"), ("MUSA", "libmusa.so.1"), ("HIP", "libamdhip64.so.6"),
                ("NVML", "libnvidia-ml.so.1"), ("MTML", "libmtml.so")]}
        got = support.result(
            self,
            "import flagshim; out([flagshim.resolve('cuda:1'), flagshim.alias_active(), flagshim.info()['alias']['active']])",
            env,
        )
        self.assertEqual(got, ["cuda:1", False, False], "no flagos device: no alias")


if __name__ == "__main__":
    unittest.main()
