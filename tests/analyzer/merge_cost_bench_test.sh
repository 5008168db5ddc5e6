#!/usr/bin/env bash
# The benchmark of rank 0's part of a split (bench/analyzer/merge_cost.cpp) exits non-zero when
# the merged shares do not give the whole job's report byte for byte: it is run here on small
# generated jobs, split several ways, so that the figures it gives docs/performance.md come from a
# merge that is right. Usage:
#   merge_cost_bench_test.sh GENERATOR BENCH WORK_DIR
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 GENERATOR BENCH WORK_DIR" >&2; exit 2; }
generator=$1 bench=$2
mkdir -p "$3"
work=$(mktemp -d "$3/merge-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name, generator options: small communicators beside the world; rank 1 passing wrong counts.
jobs=("sub --sub-comms 4" "bug --bug-every 50")
for job in "${jobs[@]}"; do
  read -r name options <<< "$job"
  # shellcheck disable=SC2086 # the options are words
  "$generator" "$work/$name" 16 300 $options > /dev/null
  out=$("$bench" "$work/$name" 1,2,3,5 1)
  echo "$out"
  for k in 1 2 3 5; do
    grep -q "^K $k: .* merge " <<< "$out" || { echo "FAIL: $name: no line for K $k" >&2; exit 1; }
  done
done
# A merge that is wrong must fail the benchmark: its figures would measure something else.
if "$bench" "$work/none" 2 1 > /dev/null 2>&1; then
  echo "FAIL: the benchmark succeeded on a folder that does not exist" >&2
  exit 1
fi
echo "PASS"
