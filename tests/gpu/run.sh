#!/usr/bin/env bash
# The GPU check (README.md), on a machine with an NVIDIA GPU, CUDA, PyTorch and its NCCL, and no
# MPI: builds the tracer and `collcheck` from this tree, then
#   1. nccl_device_calls on device buffers, untraced and traced: same results, every call in the
#      trace with its fields (check_calls.sh);
#   2. torch.distributed over NCCL (torchrun, world size 1) with a DDP step, traced: the calls of
#      PyTorch's own libnccl are in the trace;
#   3. the count reductions' values copied from device memory (checked in 1 and 2);
#   4. the host cost of an ncclAllReduce call, untraced and traced, alternating in one run.
# Every step runs even when an earlier one failed; the summary at the end lists them.
#   tests/gpu/run.sh OUTDIR
# Build inputs this machine may lack are taken from .gpu/ when present (see README.md): the
# nlohmann/json package (.gpu/prefix) and an nccl.h (.gpu/include).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${1:?usage: run.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${COLLCHECK_GPU_WORK:-/tmp/collcheck-gpu}
mkdir -p "$out" "$work"
results=()
step() { # step NAME COMMAND...: runs it, timed, and remembers how it ended
  local name=$1 start=$SECONDS rc
  shift
  echo "=== $name"
  "$@"
  rc=$?
  echo "=== $name: exit $rc after $((SECONDS - start)) s"
  results+=("$name: $([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")
  return $rc
}

describe_machine() {
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -n 2
  c++ --version | head -n 1
  cmake --version | head -n 1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"nccl", ".".join(map(str, torch.cuda.nccl.version())), torch.cuda.get_device_name(0))'
  grep -m1 "model name" /proc/cpuinfo
  nproc
}

cuda=${CUDA_HOME:-/usr/local/cuda}
# NVIDIA's NCCL: the one PyTorch ships (nvidia-nccl wheel), else the toolkit's or the system's.
find_nccl() {
  local dir
  dir=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null) ||
    dir=/nonexistent
  nccl_lib='' nccl_inc=''
  for lib in "$dir/lib" "$cuda/lib64" /usr/lib/x86_64-linux-gnu; do
    [ -e "$lib/libnccl.so.2" ] && { nccl_lib=$lib; break; }
  done
  for inc in "$dir/include" "$cuda/include" /usr/include "$root/.gpu/include"; do
    [ -e "$inc/nccl.h" ] && { nccl_inc=$inc; break; }
  done
  echo "libnccl.so.2 in ${nccl_lib:-?}, nccl.h in ${nccl_inc:-?}"
  [ -n "${nccl_lib:-}" ] && [ -n "${nccl_inc:-}" ] &&
    grep -m3 -E "define NCCL_(MAJOR|MINOR|PATCH) " "$nccl_inc/nccl.h"
}

configure_and_build() { # configure_and_build NCCL_INCLUDE
  local prefix=()
  [ -d "$root/.gpu/prefix" ] && prefix=(-DCMAKE_PREFIX_PATH="$root/.gpu/prefix")
  # Warnings stay warnings here: this compiler is not CI's, and the build must not be lost.
  rm -rf "$work/build"
  CXXFLAGS="-isystem $cuda/include" cmake -S "$root" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLCHECK_WERROR=OFF -DCOLLCHECK_BUILD_TESTS=OFF \
    -DCOLLCHECK_BUILD_BENCH=OFF -DCOLLCHECK_BUILD_LINT=OFF -DCOLLCHECK_NCCL_INCLUDE="$1" \
    "${prefix[@]}" &&
    cmake --build "$work/build" -j"$(nproc)" --target collcheck collcheck_preload
}

# Against the header of the NCCL that runs; if the wrappers do not compile against it (another
# NCCL version), against the header they were written for (.gpu/include, NCCL 2.28).
build_collcheck() {
  configure_and_build "$nccl_inc" ||
    { [ -e "$root/.gpu/include/nccl.h" ] && echo "--- again with .gpu/include/nccl.h" &&
      configure_and_build "$root/.gpu/include"; } || return 1
  echo "NCCL entry points the preload library exports: $(nm -D --defined-only \
    "$work/build/lib/libcollcheck_preload.so" | grep -c ' T nccl')"
}

build_program() {
  c++ -std=c++20 -O2 -Wall -Wextra -o "$work/nccl_device_calls" "$root/tests/gpu/nccl_device_calls.cpp" \
    -isystem "$nccl_inc" -isystem "$cuda/include" -L"$cuda/lib64" -lcudart \
    "$nccl_lib/libnccl.so.2" -ldl -Wl,-rpath,"$nccl_lib:$cuda/lib64"
}

torch_job() {
  rm -rf "$work/torch"
  mkdir -p "$work/torch"
  mkdir -p "$work/torch/nccl_log"
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL NCCL_DEBUG_FILE="$work/torch/nccl_log/nccl.%p.log" \
    "$collcheck" run -o "$work/torch/trace" -- python3 -m torch.distributed.run --standalone \
    --nproc_per_node=1 "$root/tests/gpu/torch_nccl_job.py" "$work/torch/manifest.txt" &&
    python3 "$root/tests/gpu/check_traces.py" --collcheck "$collcheck" torch "$work/torch/trace" \
      "$work/torch/manifest.txt" --nccl-log "$work/torch/nccl_log" &&
    { "$collcheck" analyze "$work/torch/trace" | tail -n 8; }
}

# The tracer's cost per call, paired in one process (nccl_device_calls cost); first without the
# tracer, where the paired difference is the method's noise.
call_cost() {
  local calls=${COLLCHECK_GPU_COST_CALLS:-100000}
  echo "--- untraced" && "$work/nccl_device_calls" cost "$calls" &&
    echo "--- traced" && LD_PRELOAD="$work/build/lib/libcollcheck_preload.so" \
    COLLCHECK_OUTPUT="$work/cost_trace" "$work/nccl_device_calls" cost "$calls"
}

main() {
  step "machine" describe_machine
  step "find NCCL" find_nccl
  step "build collcheck" build_collcheck
  collcheck=$work/build/bin/collcheck
  step "build nccl_device_calls" build_program
  step "1+3. NCCL calls on device buffers" "$root/tests/gpu/check_calls.sh" "$collcheck" \
    "$work/nccl_device_calls" "$work/calls" nccl-log
  step "2+3. PyTorch over NCCL" torch_job
  step "4. host cost per ncclAllReduce" call_cost

  echo "=== summary"
  printf '%s\n' "${results[@]}"
  # The traces and what was printed beside them, for the record.
  tar -C "$work" -czf "$out/traces.tar.gz" --exclude=build --exclude=nccl_device_calls \
    --exclude=cost_trace . 2>/dev/null
  ! printf '%s\n' "${results[@]}" | grep -qv ': ok$'
}

main 2>&1 | tee "$out/log.txt"
exit "${PIPESTATUS[0]}"
