#!/usr/bin/env python3
"""Reads `go test -json` from stdin, run with no C compiler (CC=/nonexistent).

Every test that needs the compiler must say so: a test that fails must
print "no C compiler" (the fixtures' and the conformance kit's message), a
test that skips gives its reason (go test prints it), and nothing else may fail (a panic, a
build error, an assertion). The conformance kit fails rather than skips
(a kit that cannot build its fakes proves nothing), so failures are
expected; a failure for any other reason fails this check.
Exit 0 when every failure is the missing compiler, 1 otherwise.
"""
import json
import sys

out = {}      # (package, test) -> output text
action = {}   # (package, test) -> final action
for line in sys.stdin:
    try:
        ev = json.loads(line)
    except ValueError:
        print("not go test -json: " + line.rstrip(), file=sys.stderr)
        sys.exit(1)
    key = (ev.get("Package", ""), ev.get("Test", ""))
    if ev.get("Action") == "output":
        out[key] = out.get(key, "") + ev.get("Output", "")
    elif ev.get("Action") in ("pass", "fail", "skip"):
        action[key] = ev["Action"]

failed = [k for k, a in action.items() if a == "fail"]
bad = []
for pkg, test in failed:
    if test:
        # A parent fails with its failing subtests: judge the leaves.
        if any(p == pkg and t.startswith(test + "/") for p, t in failed):
            continue
        if "no C compiler" not in out.get((pkg, test), ""):
            bad.append((pkg, test))
    elif not any(p == pkg and t for p, t in failed):
        # A package that failed with no failing test: its output must say why.
        if "no C compiler" not in out.get((pkg, ""), ""):
            bad.append((pkg, "(package)"))
for pkg, test in bad:
    print("FAIL for another reason than the missing C compiler: %s %s" % (pkg, test))
    text = out.get((pkg, test if test != "(package)" else ""), "")
    print("".join("    " + l + "\n" for l in text.splitlines()[-15:]))
skipped = [k for k, a in action.items() if a == "skip" and k[1]]
ran = sum(1 for k, a in action.items() if a == "pass" and k[1])
verdict = "every failure names it" if not bad else "%d failed for another reason" % len(bad)
print("without a C compiler: %s (%d tests failed, %d skipped saying why, %d ran)"
      % (verdict, len([k for k in failed if k[1]]), len(skipped), ran))
sys.exit(1 if bad else 0)
