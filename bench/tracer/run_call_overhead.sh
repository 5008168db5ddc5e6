#!/usr/bin/env bash
# Measures the tracer's added cost per MPI collective call and the trace bytes per call.
# Usage: bench/tracer/run_call_overhead.sh [build-dir [batches [calls-per-batch [elements]]]]
set -euo pipefail
build=$(realpath "${1:-build}")
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 1)
echo "untraced: $("${mpirun[@]}" "$build/bin/collcheck-bench-call-overhead" "$@")"
traced=$(COLLCHECK_OUTPUT="$out/traces" LD_PRELOAD="$build/lib/libcollcheck_preload.so" \
  "${mpirun[@]}" "$build/bin/collcheck-bench-call-overhead" "$@")
echo "traced:   $traced"
calls=$(sed -E 's/.*"calls": ([0-9]+).*/\1/' <<<"$traced")
bytes=$(du -b --apparent-size "$out"/traces/*.cctrace | awk '{s+=$1} END {print s}')
allocated=$(du -B1 "$out"/traces/*.cctrace | awk '{s+=$1} END {print s}')
echo "trace: $calls intercepted calls, $bytes bytes file length ($allocated allocated):" \
  "$(awk -v b="$bytes" -v c="$calls" 'BEGIN {printf "%.1f", b / c}') bytes per call"
