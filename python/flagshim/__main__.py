"""``python -m flagshim``: what flagshim decided in this process.

Prints what ``cuda:0`` resolves to, whether the alias is active, and the
whole of :func:`flagshim.info` as indented JSON. Exits 1 with the message on
a flagshim error (a bad setting, say).
"""

import json
import sys

import flagshim


def main() -> int:
    try:
        summary = {
            "library": flagshim.library_path(),
            "resolve": {"cuda:0": flagshim.resolve("cuda:0")},
            "alias_active": flagshim.alias_active(),
            "info": flagshim.info(),
        }
    except flagshim.Error as e:
        print(f"flagshim: {e}", file=sys.stderr)
        return 1
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
