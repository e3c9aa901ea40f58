"""resolve, alias_active, info and the errors, each scenario in a process of
its own on a fake machine."""

import os
import re
import subprocess
import unittest

import support

# docs/json.md: the keys and types of info().
TOP = {"schema_version": int, "verdict": str, "probe": str, "probe_source": str, "alias": dict, "backends": list,
       "probes": list, "phases": list, "env": list}
ALIAS = {"active": bool, "from": str, "to": str, "reason": str}
BACKEND = {
    "type": str,
    "available": bool,
    "devices": int,
    "reason": str,
}
# Keys omitted when empty (docs/json.md).
BACKEND_OPTIONAL = {"library": str, "driver_version": str, "attempts": list, "properties": list, "tier": str}
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
PHASE = {"name": str, "step": str, "duration_ns": int}
ENV = {"name": str, "value": str, "set": bool}
# flagshim's own variables come first, in this order; every vendor adds its
# own after them (flagshim.Variables: docs/json.md gives the order).
ENV_FIRST = ["FLAGOS_ALIAS_CUDA", "FLAGOS_BACKEND", "FLAGOS_PROBE", "FLAGOS_PROBE_TIMEOUT"]
ENV_NAMES = [
    "FLAGOS_LIBCUDA_PATH",
    "FLAGOS_LIBMUSA_PATH",
    "FLAGOS_LIBHIP_PATH",
    "FLAGOS_LIBCNDRV_PATH",
    "FLAGOS_LIBASCENDCL_PATH",
    "FLAGOS_LIBMCRUNTIME_PATH",
    "FLAGOS_LIBTOPSRT_PATH",
    "FLAGOS_LIBXPURT_PATH",
    "FLAGOS_LIBNVML_PATH",
    "FLAGOS_LIBMTML_PATH",
    "FLAGOS_LIBCNDEV_PATH",
    "FLAGOS_LIBDCMI_PATH",
    "FLAGOS_LIBMXSML_PATH",
    "FLAGOS_LIBEFML_PATH",
    "FLAGOS_LIBXPUML_PATH",
    "FLAGOS_LIBNVSHMEM_PATH",
    "FLAGOS_LOG",
    "CUDA_VISIBLE_DEVICES",
    "MUSA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ASCEND_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    "MLU_VISIBLE_DEVICES",
    "TOPS_VISIBLE_DEVICES",
    "MACA_VISIBLE_DEVICES",
    "XPU_VISIBLE_DEVICES",
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

    def test_select_env(self):
        # cuda means flagos, which routes to musa: the variable is MUSA's.
        # A child started with it sees exactly the devices selected, in
        # order (the UUIDs MTML gives, through flagshim.info()).
        env = dict(self.env, FAKE_MTML_COUNT="3", FAKE_DEVICE_COUNT="3")
        got = support.result(
            self,
            """
            import flagshim
            info = flagshim.select_info("cuda", ["2", "00000000-aaaa"])
            out({"env": flagshim.select_env("cuda", "1"), "info": info})
            """,
            env,
        )
        self.assertEqual(got["env"], {"MUSA_VISIBLE_DEVICES": "1"})
        info = got["info"]
        self.assertEqual(info["env"], {"MUSA_VISIBLE_DEVICES": "2,0"})
        self.assertEqual((info["type"], info["runtime"]), ("musa", "MUSA"))
        self.assertEqual([d["spec"] for d in info["devices"]], ["2", "00000000-aaaa"])
        child = support.result(
            self,
            """
            import flagshim
            out([d["uuid"] for b in flagshim.info()["backends"] if b["type"] == "musa" for d in b["properties"]])
            """,
            dict(env, **info["env"]),
        )
        self.assertEqual(child, [d["uuid"] for d in info["devices"]], "the child sees the devices selected")

    def test_select_env_refuses(self):
        got = support.result(
            self,
            """
            import flagshim
            res = {}
            for devs in (["9"], ["00000000-aaaa", "0"], ["ffff"]):
                try:
                    flagshim.select_env("musa", devs)
                except flagshim.SelectionError as e:
                    res[",".join(devs)] = [e.code, isinstance(e, ValueError), "\\n" in str(e), str(e)]
            try:
                flagshim.select_env("musa:0", ["0"])
            except flagshim.DeviceError as e:
                res["type"] = [e.code]
            out(res)
            """,
            self.env,
        )
        self.assertEqual(got["9"][:3], [-10, True, False])
        self.assertIn("index 9 is out of range", got["9"][3])
        self.assertIn("is given twice", got["00000000-aaaa,0"][3])
        self.assertIn('no device has the UUID "ffff"', got["ffff"][3])
        self.assertEqual(got["type"], [-3])

    def test_inherited_probe_child_variable(self):
        # The isolated tier's child role in a host's environment, as a host
        # may inherit it (its parent's pid and a vendor, the old protocol's
        # form, or a token): the library never acts as a probe child, so the
        # host neither exits nor loses its answers.
        for value in (f"{os.getpid()}:cuda", "0123456789abcdef0123456789abcdef"):
            with self.subTest(value=value):
                r = support.run(
                    self,
                    """
                    import flagshim
                    out({"cuda:1": flagshim.resolve("cuda:1"), "alias": flagshim.alias_active(),
                         "count": flagshim.device_count()})
                    """,
                    {**self.env, "FLAGSHIM_PROBE_CHILD": value},
                )
                self.assertEqual(r["result"], {"cuda:1": "flagos:1", "alias": True, "count": 2}, r["stderr"])

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
        self.assertEqual(info["schema_version"], 2)
        self.assertEqual(info["probe"], "presence", "FLAGOS_PROBE unset: the C library's default tier")
        # The CLI's default tier is isolated: the answer says which tier
        # answered here and why.
        self.assertEqual(info["probe_source"], "default")
        self.assertEqual(info["verdict"], "musa: 2 devices (MTT S4000); cuda means flagos (routes to musa); "
                         "presence tier, the default of libflagshim (the C library and Python)")
        self.check_keys(info["alias"], ALIAS, "alias")
        self.assertTrue(info["alias"]["active"])
        self.assertEqual((info["alias"]["from"], info["alias"]["to"]), ("cuda", "flagos"))
        types = [b["type"] for b in info["backends"]]
        self.assertEqual(types, sorted(types), "backends sorted by type")
        self.assertTrue({"cpu", "cuda", "flagos", "musa"} <= set(types), types)
        for b in info["backends"]:
            self.check_keys(b, BACKEND, f"backends[{b['type']}]")
            self.check_keys(b, {k: t for k, t in BACKEND_OPTIONAL.items() if k in b}, f"backends[{b['type']}]")
            for p in b.get("properties", []):
                self.check_keys(p, PROPERTY, f"backends[{b['type']}].properties")
        by = {b["type"]: b for b in info["backends"]}
        self.assertEqual((by["musa"]["available"], by["musa"]["devices"]), (True, 2))
        self.assertEqual(by["musa"]["tier"], "presence")
        self.assertEqual(by["flagos"]["routes_to"], "musa")
        self.assertFalse(by["cuda"]["available"])
        self.assertEqual(len(by["musa"]["properties"]), 2)
        # Only the probes that say more than their backend: here the cuda
        # probe, which the alias redirected.
        self.assertEqual([p["name"] for p in info["probes"]], ["cuda"])
        for p in info["probes"]:
            self.assertIsInstance(p["name"], str)
            self.check_keys(p["live"], PROBE_ANSWER, "probes[].live")
            self.check_keys(p["original"], PROBE_ANSWER, "probes[].original")
            self.assertEqual(p["redirected_by"], ["alias"])
        for ph in info["phases"]:
            self.check_keys(ph, PHASE, "phases[]")
        for e in info["env"]:
            self.check_keys(e, ENV, "env[]")
        # Only the variables that are set, in flagshim.Variables' order.
        names = [e["name"] for e in info["env"]]
        self.assertEqual(names, [n for n in ENV_FIRST + ENV_NAMES if self.env.get(n)])
        self.assertTrue(all(e["set"] and e["value"] == self.env[e["name"]] for e in info["env"]))
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

    def test_one_prefix(self):
        # Every error says where it comes from once: the call
        # ("flagshim.resolve('cuda:0'): ..."), or "flagshim: " where no
        # call is involved (loading the library); never the library's
        # "flagshim: " again inside, and a bad setting said once.
        code = """
            import flagshim
            res = []
            for call in [lambda: flagshim.resolve("cuda:0"), flagshim.alias_active, flagshim.info,
                         lambda: flagshim.is_available("cuda"), lambda: flagshim.device_count("cuda"),
                         lambda: flagshim.current_vendor(), lambda: flagshim.resolve("CUDA"),
                         lambda: flagshim.module_loaded(5, "nope"), lambda: flagshim.module_loaded(0, "cuda"),
                         lambda: flagshim.resolve(1), lambda: flagshim.resolve("x" * 2000)]:
                try:
                    call()
                    res.append(None)
                except Exception as e:
                    res.append([type(e).__name__, str(e)])
            out(res)
            """
        prefix = re.compile(r"^(flagshim(\.[a-z_]+)+(\(.*?\))?|flagshim): ")
        for env, bad in [(dict(self.env, FLAGOS_ALIAS_CUDA="bogus"), 'FLAGOS_ALIAS_CUDA="bogus"'),
                         (dict(self.env, FLAGOS_LOG="loud"), 'FLAGOS_LOG="loud"'), (self.env, None)]:
            got = support.result(self, code, env)
            raised = [r for r in got if r is not None]
            self.assertGreaterEqual(len(raised), 4, got)
            for cls, msg in raised:
                m = prefix.match(msg)
                self.assertIsNotNone(m, f"{cls}: {msg!r} starts with the call or flagshim:")
                rest = msg[m.end():]
                self.assertNotIn("flagshim: ", rest, f"{cls}: one prefix: {msg!r}")
                self.assertNotRegex(rest, r"flagshim\.[a-z_]+\(", f"{cls}: one prefix: {msg!r}")
                if bad and cls == "InitError":
                    self.assertEqual(rest.count(bad), 1, f"the bad setting once: {msg!r}")
                    self.assertTrue(rest.startswith("invalid setting: " + bad), msg)
            if bad:
                self.assertEqual(raised[0][0], "InitError")
                self.assertTrue(raised[0][1].startswith("flagshim.resolve('cuda:0'): invalid setting: " + bad), raised[0])

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

    def test_hostile_inputs(self):
        # Whatever is passed where a device string (or type) is due, the
        # answer is a device string or a DeviceError (a ValueError; for what
        # is not a str, NotADeviceString, also a TypeError), with a message
        # of bounded size: never another exception, never a hang.
        got = support.result(
            self,
            """
            import random
            import flagshim

            class Evil(str):
                def encode(self, *a, **k): raise RuntimeError("encode")
                def __contains__(self, x): raise RuntimeError("contains")
                def __len__(self): raise RuntimeError("len")
                def __repr__(self): raise RuntimeError("repr")
                def __str__(self): return 42
                def __getitem__(self, i): raise RuntimeError("getitem")
                def __iter__(self): raise RuntimeError("iter")
                def partition(self, sep): raise RuntimeError("partition")

            class Liar:
                __class__ = property(lambda self: str)  # isinstance(Liar(), str) is True

            class Num:
                def __index__(self): return 1

            hostile = ["\\ud800", "cuda:\\udfff", "\\udcff\\udcfe", "cuda\\0", "\\0", "cuda:0\\0junk",
                       "c" * 10**6, "cuda:" + "0" * 2000 + "1", "x" * 1025, "\\uff43\\uff55\\uff44\\uff41",
                       "cuda\\u200b", "\\u202ecuda", "\\U0001f680", "cu\\u0301da", "cuda:\\u0661", "\\n",
                       None, 1, 1.5, True, b"cuda", bytearray(b"cuda"), memoryview(b"cuda"), ["cuda"], {"cuda": 1},
                       ("cuda",), object(), Liar(), Num(), Evil("\\ud800"), Evil("x" * 2000), str]
            rng = random.Random(1234)
            alphabet = "cudamsfloph:0123456789 _-\\0\\ud800\\udfff\\u00e9\\u0661\\uff11\\U0001f680\\t\\n"
            fuzz = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(1000)]
            for _ in range(1000):  # near-valid strings, one character changed in half of them
                s = rng.choice(["cuda", "musa", "cpu", "flagos", "hip"]) + rng.choice(["", ":"]) + str(rng.randint(0, 12))
                if rng.random() < 0.5:
                    i = rng.randint(0, len(s))
                    s = s[:i] + rng.choice(alphabet) + s[i + 1:]
                fuzz.append(s)

            def classify(call, value):
                try:
                    answer = call(value)
                except flagshim.DeviceError as e:
                    return ["DeviceError", isinstance(e, ValueError), isinstance(e, TypeError), len(str(e)),
                            type(e).__name__]
                except BaseException as e:
                    return ["other", type(e).__name__, str(e)[:200]]
                return ["answer", type(answer).__name__]

            res = {"resolve": [classify(flagshim.resolve, v) for v in hostile],
                   "fuzz": [classify(flagshim.resolve, v) for v in fuzz],
                   "is_available": [classify(flagshim.is_available, v) for v in hostile + ["cuda:0", "nope"]],
                   "device_count": [classify(flagshim.device_count, v) for v in hostile + ["cuda:0", "nope"]],
                   "kinds": [isinstance(v, str) and type(v) is not Liar for v in hostile],
                   "evil": flagshim.resolve(Evil("cuda:1"))}
            out(res)
            """,
            self.env,
        )
        for name in ("resolve", "fuzz", "is_available", "device_count"):
            for i, r in enumerate(got[name]):
                self.assertNotEqual(r[0], "other", f"{name}: input {i} raised {r[1:]}")
                if r[0] == "DeviceError":
                    self.assertTrue(r[1], f"{name}: input {i}: a DeviceError is a ValueError")
                    self.assertLess(r[3], 600, f"{name}: input {i}: the message is bounded")
        for i, (r, is_str) in enumerate(zip(got["resolve"], got["kinds"])):
            self.assertEqual(r[0], "DeviceError", f"input {i} is refused")
            if not is_str:
                self.assertEqual((r[2], r[4]), (True, "NotADeviceString"),
                                 f"input {i}, not a str: NotADeviceString, also a TypeError")
        self.assertTrue(any(r == ["answer", "str"] for r in got["fuzz"]), "the fuzz reaches valid strings too")
        self.assertEqual(got["evil"], "flagos:1", "a str subclass is read as the str it holds, its overrides ignored")
        self.assertEqual(got["is_available"][-2][0], "DeviceError", "a device, not a type")
        self.assertEqual(got["is_available"][-1][0], "DeviceError", "an unknown type")

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

    def test_like_torch_cuda(self):
        # is_available, device_count and current_vendor answer as torch.cuda
        # would, following the alias: cuda means flagos, which routes to musa.
        code = """
            import flagshim
            out({"available": flagshim.is_available(), "count": flagshim.device_count(),
                 "cuda": [flagshim.is_available("cuda"), flagshim.device_count(type="cuda")],
                 "musa": [flagshim.is_available("musa"), flagshim.device_count("musa")],
                 "flagos": [flagshim.is_available("flagos"), flagshim.device_count("flagos")],
                 "hip": [flagshim.is_available("hip"), flagshim.device_count("hip")],
                 "cpu": [flagshim.is_available("cpu"), flagshim.device_count("cpu")],
                 "vendor": flagshim.current_vendor(), "abi": list(flagshim.abi_version())})
            """
        got = support.result(self, code, self.env)
        self.assertEqual(got, {"available": True, "count": 2, "cuda": [True, 2], "musa": [True, 2], "flagos": [True, 2],
                               "hip": [False, 0], "cpu": [True, 1], "vendor": "Moore Threads", "abi": [1, 3]})
        got = support.result(self, code, dict(self.env, FLAGOS_ALIAS_CUDA="0"))
        self.assertEqual([got["available"], got["count"], got["cuda"], got["musa"], got["vendor"]],
                         [False, 0, [False, 0], [True, 2], None], "no alias: cuda has no device here")

    def test_python_m_flagshim_options(self):
        env = support.scenario_env(self, self.env)

        def run(*args):
            return subprocess.run([*support.PYTHON, "-m", "flagshim", *args], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)

        p = run("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for want in ["usage: python -m flagshim", "--resolve DEVICE", "--brief", "--version", "alias_active",
                     "abi_version", "info", "Exit status"]:
            self.assertIn(want, p.stdout)
        p = run("--version")
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "flagshim 0.2.0.dev0 (C ABI 1.3)"))
        import json

        p = run("--brief", "--resolve", "cuda:1", "--resolve", "musa")
        self.assertEqual(p.returncode, 0, p.stderr)
        summary = json.loads(p.stdout)
        self.assertNotIn("info", summary, "--brief leaves info out")
        self.assertEqual(summary["resolve"], {"cuda:1": "flagos:1", "musa": "musa"})
        self.assertEqual(summary["abi_version"], [1, 3])
        self.assertEqual(list(summary)[0], "verdict")
        self.assertTrue(summary["verdict"].startswith("musa: 2 devices"), summary["verdict"])
        self.assertEqual(summary["cuda"], {"vendor": "Moore Threads", "available": True, "device_count": 2})
        p = run("--resolve", "nope:1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("'nope:1'", p.stderr)
        self.assertTrue(p.stderr.startswith("flagshim.resolve('nope:1'): "), "one prefix: " + p.stderr)
        self.assertEqual(run("--bogus").returncode, 2, "bad usage")

    def test_python_m_flagshim(self):
        env = support.scenario_env(self, self.env)
        p = subprocess.run([*support.PYTHON, "-m", "flagshim"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=support.TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        import json

        summary = json.loads(p.stdout)
        self.assertEqual(summary["resolve"], {"cuda:0": "flagos:0"})
        self.assertTrue(summary["alias_active"])
        self.assertEqual(summary["info"]["schema_version"], 2)
        p = subprocess.run([*support.PYTHON, "-m", "flagshim"], env=dict(env, FLAGOS_ALIAS_CUDA="bogus"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=support.TIMEOUT)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FLAGOS_ALIAS_CUDA", p.stderr)


class TestCudaMachine(unittest.TestCase):
    """A machine with a usable CUDA runtime (the fake libcuda, exact tier)."""

    def test_like_torch_cuda(self):
        got = support.result(
            self,
            """
            import flagshim
            b = {x["type"]: x for x in flagshim.info()["backends"]}
            out([flagshim.is_available(), flagshim.device_count(), flagshim.current_vendor(), flagshim.alias_active(),
                 b["cuda"]["devices"]])
            """,
            support.cuda_machine(self),
        )
        available, count, vendor, alias, devices = got
        self.assertEqual([available, alias, vendor], [True, False, "NVIDIA"], "cuda is CUDA, by NVIDIA")
        self.assertEqual(count, devices)
        self.assertGreater(count, 0)


class TestNoAccelerator(unittest.TestCase):
    def test_plain_machine(self):
        none = support.nowhere()
        env = {f"FLAGOS_LIB{n}_PATH": os.path.join(none, f) for n, f in
               [("CUDA", "libcuda.so.1"), ("MUSA", "libmusa.so.1"), ("HIP", "libamdhip64.so.6"),
                ("MCRUNTIME", "libmcruntime.so"), ("XPURT", "libxpurt.so.1"), ("NVML", "libnvidia-ml.so.1"),
                ("MTML", "libmtml.so"), ("MXSML", "libmxsml.so"), ("XPUML", "libxpuml.so.1")]}
        got = support.result(
            self,
            "import flagshim; out([flagshim.resolve('cuda:1'), flagshim.alias_active(), flagshim.info()['alias']['active']])",
            env,
        )
        self.assertEqual(got, ["cuda:1", False, False], "no flagos device: no alias")
        got = support.result(
            self,
            "import flagshim; out([flagshim.is_available(), flagshim.device_count(), flagshim.current_vendor(),"
            " flagshim.is_available('cpu')])",
            env,
        )
        self.assertEqual(got, [False, 0, None, True], "no accelerator: cuda has no device, no vendor")


if __name__ == "__main__":
    unittest.main()
