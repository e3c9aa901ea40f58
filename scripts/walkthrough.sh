#!/usr/bin/env bash
# Reproduces the walkthroughs (README.md, docs/walkthroughs.md) on any Linux
# machine with Go and a C compiler: builds the fake vendor library the tests use (a MUSA driver, a
# HIP runtime, a Cambricon CNDrv, Ascend's AscendCL, a MetaX MACA runtime, an
# Enflame TOPS runtime or a Kunlunxin XRE runtime, each with two devices that
# call themselves "Fake GPU 0" and "Fake GPU 1" where the API names its
# devices) into a private temporary folder, points flagshim at it and runs
# the CLI.
#
#   scripts/walkthrough.sh VENDOR [VAR=value...] [flagshim arguments...]   # default: info
#   scripts/walkthrough.sh VENDOR --console < commands
#   scripts/walkthrough.sh VENDOR --recipe     # how the fake is built: source, soname, flags
#
# VENDOR is a vendor's device type (every registered vendor but cuda, whose
# machines have the real thing; TestWalkthroughRecipes checks the table
# below against the registry).
#
# With --console, each line of the input that starts with "$ " is a shell
# command (flagshim is on its PATH): it is printed, then run, its output
# (stdout and stderr) printed after it, as the pages' console blocks show
# them. TestREADMEWalkthroughs (cmd/flagshim) runs the pages' blocks so
# and fails when a page differs from what they print.
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
musa) src=drivers/musa/testdata/fake_libmusa.c soname=libmusa.so.1 defs= var=FLAGOS_LIBMUSA_PATH ;;
hip) src=drivers/hip/testdata/fake_libamdhip64.c soname=libamdhip64.so.6 defs= var=FLAGOS_LIBHIP_PATH ;;
mlu) src=drivers/mlu/testdata/fake_libcndrv.c soname=libcndrv.so defs= var=FLAGOS_LIBCNDRV_PATH ;;
npu) src=drivers/npu/testdata/fake_libascendcl.c soname=libascendcl.so defs= var=FLAGOS_LIBASCENDCL_PATH ;;
maca) src=drivers/maca/testdata/fake_libmcruntime.c soname=libmcruntime.so defs= var=FLAGOS_LIBMCRUNTIME_PATH ;;
gcu) src=drivers/gcu/testdata/fake_libtopsrt.c soname=libtopsrt.so defs= var=FLAGOS_LIBTOPSRT_PATH ;;
kunlunxin) src=drivers/kunlunxin/testdata/fake_libxpurt.c soname=libxpurt.so.1 defs= var=FLAGOS_LIBXPURT_PATH ;;
*)
	echo "usage: $0 musa|hip|mlu|npu|maca|gcu|kunlunxin [VAR=value...] [flagshim arguments...]" >&2
	echo "       $0 musa|hip|mlu|npu|maca|gcu|kunlunxin --console < commands" >&2
	exit 2
	;;
esac
shift
if [[ ${1:-} == --recipe ]]; then
	# One line, tab-separated: the source (from the repository root), the
	# soname, then the compiler flags besides -shared -fPIC -Wl,-soname.
	printf '%s\t%s\t-Idriver/drivertest/testdata%s\n' "$src" "$soname" "${defs:+$'\t'$defs}"
	exit 0
fi
# A flagshim binary already built from this checkout, and the fake built by
# the --recipe (the walkthrough drift test builds both once, in the fixtures'
# cache); else the script builds them.
prebuilt=${WALKTHROUGH_FLAGSHIM:-}
fake=${WALKTHROUGH_FAKE:-}
unset WALKTHROUGH_FLAGSHIM WALKTHROUGH_FAKE
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
if [[ -n $fake ]]; then
	cp "$fake" "$dir/$soname"
else
	cc=$(cd "$root" && go env CC)
	${cc:-cc} -shared -fPIC -Wl,-soname,$soname -I "$root/driver/drivertest/testdata" $defs \
		-o "$dir/$soname" "$root/$src"
fi
if [[ -n $prebuilt ]]; then
	cp "$prebuilt" "$dir/flagshim"
else
	(cd "$root" && go build -o "$dir/flagshim" ./cmd/flagshim)
fi
# Every vendor's driver and management library, hidden; then the fake.
for lib in CUDA:libcuda.so.1 MUSA:libmusa.so.1 HIP:libamdhip64.so.6 CNDRV:libcndrv.so \
	ASCENDCL:libascendcl.so MCRUNTIME:libmcruntime.so TOPSRT:libtopsrt.so XPURT:libxpurt.so.1 \
	NVML:libnvidia-ml.so.1 MTML:libmtml.so CNDEV:libcndev.so DCMI:libdcmi.so \
	MXSML:libmxsml.so EFML:libefml.so XPUML:libxpuml.so.1; do
	[[ -v FLAGOS_LIB${lib%%:*}_PATH ]] || export "FLAGOS_LIB${lib%%:*}_PATH=/nonexistent/${lib#*:}"
done
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
