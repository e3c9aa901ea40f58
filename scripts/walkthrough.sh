#!/usr/bin/env bash
# Reproduces the README's walkthroughs on any Linux machine with Go and a C
# compiler: builds the fake vendor library the tests use (a MUSA driver, a
# HIP runtime, a Cambricon CNDrv, Ascend's AscendCL, a MetaX MACA runtime, an
# Enflame TOPS runtime or a Kunlunxin XRE runtime, each with two devices)
# into a private temporary folder, points flagshim at it and runs the CLI.
#
#   scripts/walkthrough.sh musa [flagshim arguments...]   # default: info
#   scripts/walkthrough.sh hip  [flagshim arguments...]
#   scripts/walkthrough.sh mlu  [flagshim arguments...]
#   scripts/walkthrough.sh npu  [flagshim arguments...]
#   scripts/walkthrough.sh maca [flagshim arguments...]
#   scripts/walkthrough.sh gcu  [flagshim arguments...]
#   scripts/walkthrough.sh kunlunxin [flagshim arguments...]
#
# The machine's own libcuda, if it has one, is hidden (FLAGOS_LIBCUDA_PATH
# names a file that does not exist), so the output is that of a machine
# without CUDA. Nothing is installed; the folder is removed afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vendor=${1:-}
case $vendor in
musa) src=driver/drivertest/testdata/fake_cufamily.c soname=libmusa.so.1 defs=-DFAKE_MU var=FLAGOS_LIBMUSA_PATH ;;
hip) src=drivers/hip/testdata/fake_libamdhip64.c soname=libamdhip64.so.6 defs= var=FLAGOS_LIBHIP_PATH ;;
mlu) src=drivers/mlu/testdata/fake_libcndrv.c soname=libcndrv.so defs= var=FLAGOS_LIBCNDRV_PATH ;;
npu) src=drivers/npu/testdata/fake_libascendcl.c soname=libascendcl.so defs= var=FLAGOS_LIBASCENDCL_PATH ;;
maca) src=drivers/maca/testdata/fake_libmcruntime.c soname=libmcruntime.so defs= var=FLAGOS_LIBMCRUNTIME_PATH ;;
gcu) src=drivers/gcu/testdata/fake_libtopsrt.c soname=libtopsrt.so defs= var=FLAGOS_LIBTOPSRT_PATH ;;
kunlunxin) src=drivers/kunlunxin/testdata/fake_libxpurt.c soname=libxpurt.so.1 defs= var=FLAGOS_LIBXPURT_PATH ;;
*)
	echo "usage: $0 musa|hip|mlu|npu|maca|gcu|kunlunxin [flagshim arguments...]" >&2
	exit 2
	;;
esac
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/flagshim-walkthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
cc=$(cd "$root" && go env CC)
${cc:-cc} -shared -fPIC -Wl,-soname,$soname -I "$root/driver/drivertest/testdata" $defs \
	-o "$dir/$soname" "$root/$src"
(cd "$root" && go build -o "$dir/flagshim" ./cmd/flagshim)
export FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1
export "$var=$dir/$soname"
cd "$dir"
PATH=$dir:$PATH "$dir/flagshim" "$@"
