"""``python -m flagshim``: what flagshim decided in this process.

Prints one JSON object: the library loaded and its ABI version, what each
device string resolves to (``cuda:0`` unless ``--resolve`` names others),
whether the cuda->flagos alias is active, what serves ``cuda`` (its vendor,
whether it is available, how many devices), and the whole of
:func:`flagshim.info` unless ``--brief``. ``--help`` says so. Exits 1 with
the message on a flagshim error (a bad setting, a bad device string).
"""

import argparse
import json
import sys
from typing import List, Optional

import flagshim

DESCRIPTION = """\
Print what flagshim decided in this process, as one JSON object:
  verdict       the answer in one line: the accelerators, what cuda means, the tier that answered and why
  library       the libflagshim.so loaded
  abi_version   its C ABI version, [major, minor]
  resolve       what each device string means here ("cuda:0" -> "flagos:0" where cuda means flagos)
  alias_active  whether cuda means flagos
  cuda          what serves cuda: {"vendor", "available", "device_count"}
  info          everything flagshim found (`flagshim info --json`, docs/json.md); left out by --brief
Settings are read from the environment (FLAGOS_ALIAS_CUDA, FLAGOS_BACKEND, FLAGOS_PROBE, ...:
see docs/environment.md); FLAGSHIM_LIBRARY names the library to load."""

EPILOG = "Exit status: 0; 1 on a flagshim error (a bad setting, a bad device string), with the message on stderr; 2 on bad usage."


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m flagshim",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--resolve", metavar="DEVICE", action="append",
                   help="a device string to resolve (repeat for more; default: cuda:0)")
    p.add_argument("--brief", action="store_true", help="leave info out")
    p.add_argument("--version", action="version",
                   version=f"flagshim {flagshim.__version__} (C ABI {'.'.join(map(str, flagshim.abi_version()))})",
                   help="print the package's version and the library's C ABI version, and exit")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        info = flagshim.info()
        summary = {
            "verdict": info["verdict"],
            "library": flagshim.library_path(),
            "abi_version": list(flagshim.abi_version()),
            "resolve": {d: flagshim.resolve(d) for d in (args.resolve or ["cuda:0"])},
            "alias_active": flagshim.alias_active(),
            "cuda": {
                "vendor": flagshim.current_vendor(),
                "available": flagshim.is_available(),
                "device_count": flagshim.device_count(),
            },
        }
        if not args.brief:
            summary["info"] = info
    except flagshim.Error as e:
        print(e, file=sys.stderr)  # its one prefix says which call failed
        return 1
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
