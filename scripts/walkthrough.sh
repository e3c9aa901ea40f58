#!/usr/bin/env bash
# Reproduces the README's walkthroughs on any Linux machine with Go and a C
# compiler: builds the fake vendor library the tests use (a MUSA driver, or a
# HIP runtime, each with two devices that call themselves "Fake GPU 0" and
# "Fake GPU 1": 80 GiB, compute capability 9.0, 132 multiprocessors) into a
# private temporary folder, points flagshim at it and runs the CLI.
#
#   scripts/walkthrough.sh musa [VAR=value...] [flagshim arguments...]   # default: info
#   scripts/walkthrough.sh hip  [VAR=value...] [flagshim arguments...]
#   scripts/walkthrough.sh musa --console < commands
#
# With --console, each line of the input that starts with "$ " is a shell
# command (flagshim is on its PATH): it is printed, then run, its output
# (stdout and stderr) printed after it, as the README's console blocks show
# them. TestREADMEWalkthroughs (cmd/flagshim) runs the README's blocks so
# and fails when the README differs from what they print.
#
# The output is the same on every machine: the other vendors' driver
# libraries are given as files that do not exist (FLAGOS_LIB*_PATH), so the
# machine's own libcuda, libmusa or libamdhip64 is never found, and
# flagshim's variables (FLAGOS_*, the *_VISIBLE_DEVICES, the fakes' FAKE_*)
# are unset first; set one for a run with VAR=value before the arguments.
# Nothing is installed; the folder is removed afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vendor=${1:-}
case $vendor in
musa) src=driver/drivertest/testdata/fake_cufamily.c soname=libmusa.so.1 defs=-DFAKE_MU var=FLAGOS_LIBMUSA_PATH ;;
hip) src=drivers/hip/testdata/fake_libamdhip64.c soname=libamdhip64.so.6 defs= var=FLAGOS_LIBHIP_PATH ;;
*)
	echo "usage: $0 musa|hip [VAR=value...] [flagshim arguments...]" >&2
	echo "       $0 musa|hip --console < commands" >&2
	exit 2
	;;
esac
shift
for v in $(compgen -e); do
	case $v in
	FLAGOS_* | FLAGSHIM_* | FAKE_* | *_VISIBLE_DEVICES) unset "$v" ;;
	esac
done
while [[ ${1:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
	export "${1?}"
	shift
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/flagshim-walkthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
cc=$(cd "$root" && go env CC)
${cc:-cc} -shared -fPIC -Wl,-soname,$soname -I "$root/driver/drivertest/testdata" $defs \
	-o "$dir/$soname" "$root/$src"
(cd "$root" && go build -o "$dir/flagshim" ./cmd/flagshim)
export FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1
export FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1
export FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6
export "$var=$dir/$soname"
cd "$dir"
export PATH=$dir:$PATH
if [[ ${1:-} != --console ]]; then
	code=0
	"$dir/flagshim" "$@" || code=$?
	exit $code
fi
while IFS= read -r line; do
	[[ $line == '$ '* ]] || continue
	printf '%s\n' "$line"
	bash -c "${line#\$ }" 2>&1 || true
done
