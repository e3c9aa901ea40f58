#!/usr/bin/env bash
# Prints what plugins/nvshmem depends on, on the GPU machine: the driver, nvcc,
# the NVSHMEM wheel's files, its exported host symbols and the header text of
# the init attribute, the unique ID and the init status.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
pip list 2>/dev/null | grep -i -E 'nvshmem|cuda'
home=$(python3 -c 'import importlib.util; print(list(importlib.util.find_spec("nvidia.nvshmem").submodule_search_locations)[0])')
echo "home: $home"
ls -la "$home" "$home/lib"
ls "$home/include" "$home/include"/* | head -60
nm -D --defined-only "$home"/lib/libnvshmem_host.so* | grep -E ' T (nvshmemx?_(init|hostlib|get_uniqueid|set_attr|cumodule|culibrary|my_pe|n_pes|finalize|info|vendor|team_my_pe))' | sort -k3
grep -rn -E 'NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION|NVSHMEM_INIT_ATTR_VER|UNIQUEID_PADDING|INIT_ARGS_PADDING' "$home/include" | head
grep -rn -B2 -A12 'typedef struct' "$home/include/bootstrap_device_host/nvshmem_uniqueid.h"
grep -rn -B3 -A8 -E 'nvshmemx_init_args_v|nvshmemx_init_attr_v|init_attr_ver_only|INIT_ARGS_INITIALIZER|INIT_ATTR_INITIALIZER' "$home/include/device_host/nvshmem_types.h" | head -120
grep -rn -A12 -E 'NVSHMEM_STATUS_NOT_INITIALIZED|NVSHMEMX_INIT_WITH_UNIQUEID' "$home/include" | head -60
