#!/usr/bin/env bash
# Compares two builds of the analyzer on the split: per round, `mpirun -np 1` and `mpirun -np 2`
# of `collcheck analyze --threads 1` for build A, then for build B, on one generated job, ROUNDS
# rounds (default 12). The host's speed changes within minutes (docs/performance.md), far more than
# most changes gain: side by side in every round, the two builds meet the same moments, and the
# round-by-round differences say what the change did. Usage:
#   bench/analyzer/split_ab.sh BUILD_A BUILD_B [RANKS=4096] [COLLECTIVES=25000] [WORK_DIR]
# Each build folder holds bin/collcheck and lib/libcollcheck_mpi.so (a copy of a build tree's bin
# and lib is enough); the traces come from BUILD_B's collcheck_generate_traces. MPIRUN replaces the
# launcher, ROUNDS the number of rounds, SUB_COMMS=G adds communicators of G consecutive ranks (as
# in split.sh). Prints per round the wall and CPU seconds of the four runs, then the medians and
# means, the mean difference B - A and in how many rounds B was faster.
set -euo pipefail
usage="usage: bench/analyzer/split_ab.sh BUILD_A BUILD_B [RANKS] [COLLECTIVES] [WORK_DIR]"
build_a=${1:?$usage}
build_b=${2:?$usage}
ranks=${3:-4096}
collectives=${4:-25000}
# A work folder made here is removed at exit, with everything in it.
work=${5:-} made_work=
[[ -n $work ]] || { work=$(mktemp -d /tmp/collcheck-split-ab.XXXXXX); made_work=1; }
rounds=${ROUNDS:-12}
generator=$build_b/bin/collcheck_generate_traces
# shellcheck source=bench/analyzer/split_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/split_common.sh"
require split_ab.sh "$build_a/bin/collcheck" "$build_b/bin/collcheck" \
  "$build_a/lib/libcollcheck_mpi.so" "$build_b/lib/libcollcheck_mpi.so" "$generator" /usr/bin/time
pick_launcher split_ab.sh
describe_machine

traces=$work/traces
trap 'rm -rf "$traces" "$work/time"; [[ -z $made_work ]] || rm -rf "$work"' EXIT
mkdir -p "$work"
# The small communicators' calls (SUB_COMMS=G, as split.sh) count too.
records=$((collectives + 200 + ranks / 9))
[[ -z ${SUB_COMMS:-} ]] || records=$((records + collectives / 4 + 2 + SUB_COMMS / 9))
need=$(reserved_bytes "$ranks" "$records")
avail=$(($(df -Pk "$work" | awk 'NR == 2 {print $4}') * 1024))
((need <= avail)) || { echo "split_ab.sh: not enough free disk under $work" >&2; exit 1; }
"$generator" "$traces" "$ranks" "$collectives" ${SUB_COMMS:+--sub-comms "$SUB_COMMS"} > /dev/null
drop_from_cache "$traces"/*.cctrace
cat "$traces"/*.cctrace > /dev/null
echo "job: $ranks ranks x $collectives calls ($(du -sh "$traces" | cut -f1)); A: $build_a; B: $build_b"

# One run: wall and CPU seconds (user + system) of the whole launcher.
run() { # build np
  /usr/bin/time -f "%e %U %S" -o "$work/time" "${mpirun[@]}" -np "$2" \
    -x COLLCHECK_MPI_PLUGIN="$1/lib/libcollcheck_mpi.so" "$1/bin/collcheck" analyze --quiet \
    --progress=never --threads 1 "$traces" > /dev/null 2>&1 ||
    { echo "split_ab.sh: $1 -np $2 failed" >&2; exit 1; }
  awk '{printf "%.2f %.2f", $1, $2 + $3}' "$work/time"
}

results=$work/rounds
: > "$results"
echo "round: np1 A (wall cpu), np1 B, np2 A, np2 B"
for round in $(seq "$rounds"); do
  line="$(run "$build_a" 1) $(run "$build_b" 1) $(run "$build_a" 2) $(run "$build_b" 2)"
  echo "$line" >> "$results"
  echo "round $round (load $(cut -d' ' -f1 /proc/loadavg)): $line"
done
awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    for (c = 1; c <= 8; ++c) { v[c, NR] = $c; sum[c] += $c }
    ua[NR] = $1 / $5; ub[NR] = $3 / $7
    d1 += $3 - $1; d2 += $7 - $5; f1 += $3 < $1; f2 += $7 < $5
  }
  END {
    n = NR
    split("np1 A,np1 B,np2 A,np2 B", name, ",")
    for (k = 1; k <= 4; ++k) {
      for (r = 1; r <= n; ++r) { w[r] = v[2 * k - 1, r]; u[r] = v[2 * k, r] }
      printf "%s: wall median %.3f s, mean %.3f s; CPU median %.3f s, mean %.3f s\n", name[k],
        median(w, n), sum[2 * k - 1] / n, median(u, n), sum[2 * k] / n
    }
    printf "speed-up np1/np2 (each build its own): A median %.3f, B median %.3f\n", median(ua, n),
      median(ub, n)
    printf "B - A, mean of the rounds: np1 %+.3f s (B faster in %d of %d), np2 %+.3f s (B faster in %d of %d)\n",
      d1 / n, f1, n, d2 / n, f2, n
  }' "$results"
rm -f "$results"
uptime
