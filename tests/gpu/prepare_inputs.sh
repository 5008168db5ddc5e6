#!/usr/bin/env bash
# Fills .gpu/ (not tracked) with the build inputs a GPU machine without the project's packages
# lacks, taken from this machine's: the nlohmann/json package (a prefix CMake finds it in) and the
# NCCL header the tracer's wrappers are written against. run.sh uses them when present.
#   tests/gpu/prepare_inputs.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
out=$root/.gpu
rm -rf "$out"
mkdir -p "$out/prefix/include" "$out/prefix/share/cmake" "$out/include"
cp -r /usr/include/nlohmann "$out/prefix/include/"
cp -r /usr/share/cmake/nlohmann_json "$out/prefix/share/cmake/"
cp "$cuda/include/nccl.h" "$out/include/"
grep -qx '/.gpu/' "$root/.git/info/exclude" 2>/dev/null || echo '/.gpu/' >>"$root/.git/info/exclude"
du -sh "$out"
