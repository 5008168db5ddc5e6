#!/usr/bin/env bash
# Measures the tracer's added cost per MPI call (mean over every call, and the tail of single
# calls) and the trace bytes per call, for each case of collcheck-bench-call-overhead, with the
# trace folder on the file systems given.
# Usage: bench/tracer/run_call_overhead.sh [build-dir [calls [cases [folders [pin]]]]]
#   cases: space-separated (default: allreduce16 count1 count4 derived userop threads8)
#   folders: where the traces go, space-separated (default: /var/tmp /dev/shm)
#   pin: "thread" (default): the calling thread of a single-threaded case is pinned to the last
#     CPU after its warm-up, the tracer's own thread may run on any; "process": the whole process
#     on the last CPU, so the tracer's thread takes its time from the calling thread's.
# Everything runs at nice -5; the load average is printed beside each result, since other
# processes on the machine move the mean and the tail.
# COLLCHECK_BENCH_PRELOAD=LIB measures another build of the preload library with the same
# benchmark program (an A/B comparison of two tracer versions, run interleaved on one machine).
set -euo pipefail
build=$(realpath "${1:-build}")
calls=${2:-10000000}
cases=${3:-allreduce16 count1 count4 derived userop threads8}
folders=${4:-/var/tmp /dev/shm}
pin_mode=${5:-thread}
bench="$build/bin/collcheck-bench-call-overhead"
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 1)
last_cpu=$(($(nproc) - 1))
for folder in $folders; do
  for case in $cases; do
    pin=(nice -n -5)
    cpu=-1
    if [[ $case != threads* ]]; then
      [[ $pin_mode == process ]] && pin=(taskset -c "$last_cpu" nice -n -5) || cpu=$last_cpu
    fi
    out=$(mktemp -d "$folder/collcheck-bench.XXXXXX")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    preload=${COLLCHECK_BENCH_PRELOAD:-$build/lib/libcollcheck_preload.so}
    result=$(COLLCHECK_OUTPUT="$out" LD_PRELOAD="$preload" \
      "${pin[@]}" "${mpirun[@]}" "$bench" "$case" "$calls" 10000 "$cpu")
    all=$(sed -E 's/.*"intercepted_in_all": ([0-9]+).*/\1/' <<<"$result")
    bytes=$(du -b --apparent-size "$out"/*.cctrace | awk '{s+=$1} END {print s}')
    echo "$folder pin=$pin_mode load=[$load] $result"
    echo "  trace: $bytes bytes for $all intercepted calls:" \
      "$(awk -v b="$bytes" -v c="$all" 'BEGIN {printf "%.1f", b / c}') bytes per call" \
      "(file length: header and the preallocated end of the last chunk included)"
    rm -rf "$out"
  done
done
