#!/usr/bin/env bash
# The split among the threads of one process (analyzer/parallel/thread_split.h) against one
# thread, side by side in every round: `collcheck analyze --quiet` on one generated job, the page
# cache read again before each run. Usage:
#   bench/analyzer/threads.sh BUILD_DIR [RANKS=4096] [COLLECTIVES=25000] [ROUNDS=7] [WORK_DIR]
# Prints per round the wall, user and system seconds of each, then the medians.
set -euo pipefail
build=${1:?usage: bench/analyzer/threads.sh BUILD_DIR [RANKS] [COLLECTIVES] [ROUNDS] [WORK_DIR]}
ranks=${2:-4096}
collectives=${3:-25000}
rounds=${4:-7}
# A work folder made here is removed at exit, with everything in it.
work=${5:-} made_work=
[[ -n $work ]] || { work=$(mktemp -d /tmp/collcheck-threads.XXXXXX); made_work=1; }
collcheck=$build/bin/collcheck
for tool in "$collcheck" "$build/bin/collcheck_generate_traces" /usr/bin/time; do
  [[ -x $tool ]] || { echo "threads.sh: $tool is missing" >&2; exit 1; }
done
traces=$work/traces
trap 'rm -rf "$traces" "$work/time" "$work/all"; [[ -z $made_work ]] || rm -rf "$work"' EXIT
"$build/bin/collcheck_generate_traces" "$traces" "$ranks" "$collectives" > /dev/null
threads=$(nproc)
((threads <= 4)) || threads=4
echo "$ranks ranks x $collectives collectives, $(du -sh "$traces" | cut -f1); $(nproc) cores"
printf '%-6s %-24s %-24s\n' round "1 thread" "$threads threads, split"
run() { # label threads least-slots-to-split
  cat "$traces"/*.cctrace > /dev/null
  COLLCHECK_THREAD_SPLIT_MIN_SLOTS=$3 /usr/bin/time -f "%e %U %S" -o "$work/time" "$collcheck" \
    analyze --quiet --progress never --threads "$2" "$traces" > /dev/null 2>&1 || true
  read -r wall user sys < "$work/time"
  echo "$1 $wall $user $sys" >> "$work/all"
  printf '%-24s ' "${wall} s (${user} u ${sys} s)"
}
: > "$work/all"
for ((i = 1; i <= rounds; i++)); do
  printf '%-6s ' "$i"
  run one 1 0
  run split "$threads" 0
  echo
done
python3 - "$work/all" << 'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wall, user, sys_ = line.split()
    runs.setdefault(label, []).append((float(wall), float(user), float(sys_)))
one = statistics.median(w for w, _, _ in runs["one"])
for label in ("one", "split"):
    walls = [w for w, _, _ in runs[label]]
    print(f"{label:6s} median {statistics.median(walls):.3f} s (user {statistics.median(u for _, u, _ in runs[label]):.2f}, "
          f"system {statistics.median(s for _, _, s in runs[label]):.2f}); speed-up over one thread "
          f"{one / max(statistics.median(walls), 1e-3):.2f}")
PY
