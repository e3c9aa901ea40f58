#!/usr/bin/env bash
# The Python package's tests (python/tests, unittest, standard library only):
#
#   bash scripts/python-test.sh [unittest discover args...]
#
# Builds libflagshim.so with cgo into a private temporary folder (or takes
# FLAGSHIM_TEST_LIBRARY, an absolute path to one built from this tree: the
# Go test hands over its cached build), points FLAGSHIM_LIBRARY at it and
# runs `python3 -m unittest discover -s
# python/tests -v` with python/ on PYTHONPATH. The tests compile the Go
# repository's fake vendor libraries with gcc and run every scenario in a
# process of its own. Where python3, a C compiler or cgo is missing it prints
# "python-test: skipped: <reason>" and exits 0. PYTHON names another
# interpreter; FLAGSHIM_GO another go binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

skip() {
	echo "python-test: skipped: $*"
	exit 0
}

py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || skip "no $py"
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "$py is older than 3.8"
go=${FLAGSHIM_GO:-go}
command -v "$go" >/dev/null 2>&1 || skip "no go command to build libflagshim.so with"
cc=$("$go" env CC 2>/dev/null || true)
cc=${cc:-gcc}
command -v "${cc%% *}" >/dev/null 2>&1 || skip "no C compiler ($cc): -buildmode=c-shared needs cgo"
export CC=$cc
[ "$(CGO_ENABLED=1 "$go" env CGO_ENABLED)" = 1 ] || skip "cgo cannot be enabled for $("$go" env GOOS)/$("$go" env GOARCH)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flagshim-python-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"
lib=${FLAGSHIM_TEST_LIBRARY:-}
if [ -n "$lib" ]; then
	case $lib in
	/*) ;;
	*) echo "python-test: FLAGSHIM_TEST_LIBRARY=$lib is not an absolute path: give the absolute path of a libflagshim.so built from this tree, or unset it to build one" >&2; exit 2 ;;
	esac
	[ -f "$lib" ] || { echo "python-test: FLAGSHIM_TEST_LIBRARY=$lib: no such file; build it (CGO_ENABLED=1 go build -buildmode=c-shared -o $lib ./cmd/libflagshim) or unset the variable" >&2; exit 2; }
	echo "python-test: the library built by the caller: $lib"
else
	lib=$tmp/libflagshim.so
	echo "python-test: CGO_ENABLED=1 $go build -tags netgo -buildmode=c-shared -o $lib ./cmd/libflagshim"
	CGO_ENABLED=1 "$go" build -tags netgo -buildmode=c-shared -o "$lib" ./cmd/libflagshim
fi

export FLAGSHIM_LIBRARY=$lib
export FLAGSHIM_GO=$go
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
# Compiled modules go to the run's own folder, not beside the sources: the
# tree stays clean, and each of the suite's 70 interpreters reads the
# package compiled once instead of compiling its 17 modules (20 ms each
# time on the 2-vCPU machine).
export PYTHONPYCACHEPREFIX=$tmp/pycache
unset PYTHONDONTWRITEBYTECODE
if [ $# -gt 0 ]; then
	exec "$py" -m unittest discover -s python/tests -t python/tests -v "$@"
fi
# The pip install scenarios (test_install.py, about half the suite's time,
# most of it pip's and the compiler's) run beside the rest: two processes,
# each its own log, printed whole one after the other.
"$py" -m unittest discover -s python/tests -t python/tests -v -p 'test_install.py' >"$tmp/install.log" 2>&1 &
install=$!
rc=0
"$py" -m unittest discover -s python/tests -t python/tests -v -p 'test_[!i]*.py' >"$tmp/rest.log" 2>&1 || rc=$?
wait "$install" || rc=$?
cat "$tmp/rest.log" "$tmp/install.log"
exit "$rc"
