#!/usr/bin/env bash
# The NCCL half of the GPU check (README.md): runs nccl_device_calls untraced and under
# `collcheck run`, compares the two runs' results byte for byte, checks the trace against the
# calls the program made (check_traces.py), and analyzes it (one rank: no finding expected).
#   check_calls.sh COLLCHECK PROGRAM OUTDIR [nccl-log]
# With nccl-log (real NCCL), the traced run also has NCCL log every call it receives, and the
# trace must hold exactly those.
set -euo pipefail
collcheck=$1 program=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
log=()
if [ "${4:-}" = nccl-log ]; then
  mkdir -p "$out/nccl_log"
  export NCCL_DEBUG_SUBSYS=COLL NCCL_DEBUG_FILE="$out/nccl_log/nccl.%p.log"
  log=(--nccl-log "$out/nccl_log")
fi
"$program" results "$out/manifest_untraced.txt" >"$out/results_untraced.txt"
NCCL_DEBUG=${log:+INFO} "$collcheck" run -o "$out/trace" -- "$program" results "$out/manifest.txt" \
  >"$out/results_traced.txt"
if cmp -s "$out/results_untraced.txt" "$out/results_traced.txt"; then
  echo "ok    results identical with and without the tracer ($(grep -c '^[a-z]' \
"$out/results_traced.txt") results, $(wc -c <"$out/results_traced.txt") bytes)"
else
  echo "FAIL  results differ with and without the tracer:"
  diff "$out/results_untraced.txt" "$out/results_traced.txt" | head -20
  exit 1
fi
python3 "$here/check_traces.py" --collcheck "$collcheck" calls "$out/trace" "$out/manifest.txt" \
  "${log[@]}"
"$collcheck" analyze "$out/trace" >"$out/analyze.txt" || {
  echo "FAIL  collcheck analyze exited $? on the trace:"
  cat "$out/analyze.txt"
  exit 1
}
echo "ok    collcheck analyze: $(tail -n 1 "$out/analyze.txt")"
