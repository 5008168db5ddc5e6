#!/usr/bin/env bash
# Measures `collcheck analyze` against reading the same trace files (cat to /dev/null), in one run,
# and its peak memory (/usr/bin/time -v). Usage:
#   bench/analyzer/measure.sh BUILD_DIR RANKS COLLECTIVES [WORK_DIR]
# BUG_EVERY=N in the environment makes rank 1 pass a wrong count every N calls (slow path).
# Needs RANKS x (COLLECTIVES + 200) x 64 bytes of free disk (1024 x 100000: about 6.6 GB); the
# traces are deleted afterwards.
set -euo pipefail
build=${1:?build folder}
ranks=${2:-1024}
collectives=${3:-100000}
# A work folder made here is removed at exit, with everything in it.
work=${4:-} made_work=
[[ -n $work ]] || { work=$(mktemp -d /tmp/collcheck-bench.XXXXXX); made_work=1; }
traces=$work/traces
trap 'rm -rf "$traces"; [[ -z $made_work ]] || rm -rf "$work"' EXIT
mkdir -p "$work"
df -h "$work" | tail -1
t0=$(date +%s.%N)
"$build/bin/collcheck_generate_traces" "$traces" "$ranks" "$collectives" \
  ${BUG_EVERY:+--bug-every "$BUG_EVERY"}
t1=$(date +%s.%N)
echo "generated: $(du -sh "$traces" | cut -f1) in $(echo "$t1 - $t0" | bc) s"
# Let the writeback of the fresh files finish, then warm the page cache the same way for both.
sync
cat "$traces"/*.cctrace > /dev/null
cpu() { awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u + s}' "$1"; }
for run in 1 2 3; do
  /usr/bin/time -v cat "$traces"/*.cctrace 2> "$work/cat.txt" > /dev/null
  /usr/bin/time -v "$build/bin/collcheck" analyze --quiet --progress=never --timings "$traces" \
    2> "$work/time.txt" || true
  wall() { awk -F': ' '/Elapsed/ {split($2, t, ":"); printf "%.2f", t[1] * 60 + t[2]}' "$1"; }
  read_s=$(wall "$work/cat.txt")
  analyze_s=$(wall "$work/time.txt")
  rss_kb=$(grep "Maximum resident set size" "$work/time.txt" | awk '{print $6}')
  grep "open and validate" "$work/time.txt" | sed 's/^collcheck analyze: /  /'
  echo "run $run: cat ${read_s} s (cpu $(cpu "$work/cat.txt") s), analyze ${analyze_s} s (cpu $(cpu "$work/time.txt") s), ratio $(echo "scale=2; $analyze_s / $read_s" | bc), peak RSS $((rss_kb / 1024)) MiB; load $(cut -d' ' -f1 /proc/loadavg)"
done
"$build/bin/collcheck" analyze --progress=never "$traces" | tail -1 || true
uptime
