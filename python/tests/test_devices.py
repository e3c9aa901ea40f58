"""get_device_properties, get_device_name, get_device_capability and
mem_get_info (flagshim.devices), each scenario in a process of its own on a
fake machine."""

import os
import unittest

import support

UUIDS = ["GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", "GPU-20212223-2425-2627-2829-2a2b2c2d2e2f"]

# The fake GPUs' memory, an H100's with driver 580 in proportion: NVML's
# total is 80 GiB, 480 MiB of it reserved (nvmlDeviceGetMemoryInfo_v2); the
# driver's total (cuDeviceTotalMem, torch's total_memory) is the rest.
RESERVED = 480 << 20
DRIVER_TOTAL = (80 << 30) - RESERVED

# What each scenario reports of the two fake GPUs.
REPORT = """
import flagshim
def props(i, t="cuda"):
    p = flagshim.get_device_properties(i, type=t)
    return {"name": p.name, "uuid": p.uuid, "pci_bus_id": p.pci_bus_id, "total_memory": p.total_memory,
            "reserved_memory": p.record.get("reserved_memory"),
            "major": p.major, "minor": p.minor, "multi_processor_count": p.multi_processor_count,
            "vendor": p.vendor, "device": p.device, "type": p.type, "index": p.index,
            "visible_index": p.visible_index, "numa_node": p.numa_node, "tier": p.tier,
            "unknown": sorted(p.unknown)}
"""


def gpu_machine(test, **extra):
    """Two fake GPUs the fake libcuda and the fake NVML describe alike, in a
    sysfs tree that says they are NVIDIA's."""
    env = {
        **support.no_libraries(),
        "FLAGOS_TEST_ROOT": support.nvidia_sysfs(),
        "FLAGOS_LIBCUDA_PATH": support.Fakes.build(test, "cuda"),
        "FLAGOS_LIBNVML_PATH": support.Fakes.build(test, "nvml"),
        "FAKE_CUDA_DEVICE_NAMES": "Fake H100,Fake H100",
        "FAKE_NVML_NAMES": "Fake H100,Fake H100",
        "FAKE_NVML_UUIDS": ",".join(UUIDS),
        "FAKE_CUDA_TOTAL_MEM": str(DRIVER_TOTAL),
        "FAKE_NVML_RESERVED_MB": str(RESERVED >> 20),
    }
    env.update(extra)
    return env


class TestDeviceProperties(unittest.TestCase):
    def test_presence_and_exact_agree(self):
        code = REPORT + """
out({"props": [props(0), props(1)], "name": flagshim.get_device_name(1),
     "capability": flagshim.get_device_capability(0), "mem": list(flagshim.mem_get_info(1))})
"""
        pres = support.result(self, code, gpu_machine(self))
        exact = support.result(self, code, gpu_machine(self, FLAGOS_PROBE="exact"))
        for got, tier in ((pres, "presence"), (exact, "exact")):
            p1 = got["props"][1]
            self.assertEqual(p1["tier"], tier)
            self.assertEqual([p1["name"], p1["uuid"], p1["pci_bus_id"], p1["total_memory"], p1["major"], p1["minor"]],
                             ["Fake H100", UUIDS[1], "0000:19:00.0", DRIVER_TOTAL, 9, 0], tier)
            self.assertEqual([p1["vendor"], p1["device"], p1["type"], p1["visible_index"]], ["nvidia", "cuda:1", "cuda", 1], tier)
            self.assertEqual(got["name"], "Fake H100", tier)
            self.assertEqual(got["capability"], [9, 0], tier)
            self.assertEqual(got["mem"][1], DRIVER_TOTAL, tier + ": torch's total, the driver's, in every tier")
            self.assertLessEqual(got["mem"][0], got["mem"][1], tier)
        self.assertIsNone(pres["props"][0]["multi_processor_count"], "NVML gives no multiprocessor count: None")
        self.assertIn("multiprocessors", pres["props"][0]["unknown"])
        self.assertEqual(exact["props"][0]["multi_processor_count"], 132, "the driver gives it")
        self.assertEqual(pres["mem"][0], DRIVER_TOTAL - (1 << 30), "the presence tier: NVML's free memory (the fake uses 1 GiB)")
        self.assertEqual(pres["props"][1]["reserved_memory"], RESERVED, "the presence tier: NVML's reserve beside the total")
        self.assertIn("reserved_memory", exact["props"][1]["unknown"], "the exact tier's driver does not tell the reserve")

    def test_through_the_alias(self):
        # A MUSA-only machine: cuda means flagos, which routes to musa; the
        # record is the musa device's.
        env = support.musa_machine(self)
        got = support.result(self, REPORT + "out([props(0), props(1, 'musa')['uuid'], flagshim.get_device_name()])", env)
        self.assertEqual(got[0]["device"], "musa:0")
        self.assertEqual(got[0]["type"], "musa")
        self.assertEqual(got[0]["vendor"], "mthreads")
        self.assertIsNotNone(got[1])

    def test_errors(self):
        code = """
import flagshim
def err(f, *a, **k):
    try:
        f(*a, **k)
    except Exception as e:
        return [type(e).__name__, isinstance(e, IndexError), isinstance(e, ValueError), isinstance(e, TypeError), str(e)]
    return None
out({"range": err(flagshim.get_device_properties, 2), "mem_range": err(flagshim.mem_get_info, 9),
     "negative": err(flagshim.get_device_name, -2), "bool": err(flagshim.get_device_name, True),
     "str_index": err(flagshim.get_device_name, "0"), "bad_type": err(flagshim.get_device_name, 0, type="CUDA"),
     "colon": err(flagshim.get_device_name, 0, type="cuda:0"), "not_str": err(flagshim.get_device_name, 0, type=3),
     "cpu": err(flagshim.get_device_properties, 0, type="cpu"), "musa": err(flagshim.get_device_properties, 0, type="musa")})
"""
        got = support.result(self, code, gpu_machine(self))
        self.assertEqual(got["range"][:3], ["NoSuchDevice", True, True])
        self.assertIn("cuda:2", got["range"][4])
        self.assertIn("out of range", got["range"][4])
        self.assertEqual(got["mem_range"][:2], ["NoSuchDevice", True])
        self.assertEqual(got["negative"][0], "NoSuchDevice")
        self.assertIn("index -2 is outside", got["negative"][4])
        self.assertEqual(got["bool"][:3], ["DeviceError", False, True])
        self.assertIn("index is an int", got["bool"][4])
        self.assertEqual(got["str_index"][0], "DeviceError")
        self.assertEqual(got["bad_type"][0], "DeviceError")
        self.assertIn('invalid device string "CUDA:0"', got["bad_type"][4])
        self.assertEqual(got["colon"][0], "DeviceError")
        self.assertEqual(got["not_str"][:4], ["NotADeviceString", False, True, True])
        self.assertEqual(got["cpu"][0], "BackendError")
        self.assertIn("no device records", got["cpu"][4])
        self.assertEqual(got["musa"][0], "NoSuchDevice", "musa is not available here")

    def test_forked_child_answers_from_the_parent(self):
        code = """
import flagshim
flagshim.get_device_properties(0)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    res = {}
    try:
        res["name1"] = flagshim.get_device_name(1)
        res["cap"] = flagshim.get_device_capability(0)
        try:
            flagshim.get_device_properties(2)
        except flagshim.NoSuchDevice as e:
            res["range"] = str(e)
        try:
            flagshim.mem_get_info(0)
        except flagshim.ForkError as e:
            res["mem"] = "ForkError"
    except Exception as e:
        res["error"] = repr(e)
    os.write(w, json.dumps(res).encode())
    os._exit(0)
os.close(w)
data = b""
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
out(json.loads(data))
"""
        got = support.result(self, code, gpu_machine(self))
        self.assertEqual(got.get("name1"), "Fake H100", got)
        self.assertEqual(got.get("cap"), [9, 0], got)
        self.assertIn("the parent saw 2 cuda device(s)", got.get("range", ""))
        self.assertEqual(got.get("mem"), "ForkError")


if __name__ == "__main__":
    unittest.main()
