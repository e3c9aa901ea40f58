#!/usr/bin/env bash
# Builds the real-GPU test binaries: every package with a `//go:build gpu`
# test file (or only the packages given as arguments, e.g. ./drivers/cuda) is
# compiled with CGO_ENABLED=0 go test -c -tags gpu into
# .gpu/<package path with _>.test. The binaries need only glibc, so they run
# on a GPU machine without Go: copy .gpu there and run scripts/gpu-run.sh.
# A package that fails to build is reported and skipped; the exit status is 1
# when any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu
rm -f .gpu/*.test .gpu/*.pkg
if [ $# -gt 0 ]; then
	pkgs=("$@")
else
	mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^//go:build .*\bgpu\b' . | xargs -r -n1 dirname | sort -u)
fi
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "gpu-build: no package has gpu tests" >&2
	exit 1
fi
status=0
for p in "${pkgs[@]}"; do
	p=./${p#./}
	name=$(echo "${p#./}" | tr / _)
	case $name in "" | .) name=root ;; esac
	# -s -w: no symbol table or DWARF (panics still name functions: Go keeps
	# its own line table), so that .gpu stays small enough to carry.
	if CGO_ENABLED=0 go test -c -tags gpu -ldflags="-s -w" -o ".gpu/$name.test" "$p"; then
		# gpu-run.sh runs each binary from its package's folder, as go test
		# does: tests read their testdata and sources relative to it.
		echo "${p#./}" >".gpu/$name.pkg"
		echo "gpu-build: $p -> .gpu/$name.test"
	else
		echo "gpu-build: $p FAILED to build; skipped" >&2
		status=1
	fi
done
# The CLI itself, for scripts/cdi-gpu.sh and scripts/visible-gpu.sh (gpu-run.sh runs them).
if CGO_ENABLED=0 go build -ldflags="-s -w" -o .gpu/flagshim ./cmd/flagshim; then
	echo "gpu-build: ./cmd/flagshim -> .gpu/flagshim"
else
	echo "gpu-build: ./cmd/flagshim FAILED to build" >&2
	status=1
fi
ls -l .gpu/*.test 2>/dev/null
exit $status
