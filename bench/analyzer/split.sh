#!/usr/bin/env bash
# Measures the split analysis: `collcheck analyze --threads 1` under `mpirun -np 1` and
# `mpirun -np 2` (the records divided by sequence range across the processes), against the default
# single process (which reads ahead on a second thread), RUNS rounds (default 5) of the three in
# turn, on one generated job. Usage:
#   bench/analyzer/split.sh BUILD_DIR [RANKS=4096] [COLLECTIVES=25000] [WORK_DIR]
# In the environment: SUB_COMMS=G adds communicators of G consecutive ranks (one small call on them
# every 4 world calls), BUG_EVERY=N makes rank 1 pass a wrong count every N calls (slow path),
# MPIRUN replaces the launcher (default: mpirun --mca btl self,vader, --allow-run-as-root as root),
# RUNS sets the number of rounds.
# Prints the machine (describe_machine), then per run: wall seconds (of the whole mpirun, and of the
# slowest process), CPU seconds (all processes), peak RSS and major page faults (reads from disk) of
# each process, the lines of --timings, and the speed-ups; then the median and the best of each.
# Needs about RANKS x (COLLECTIVES + 200) x 64 bytes of free disk (4096 x 25000: about 6.6 GB; the
# writer reserves whole MiB, so a little more), and as much free memory for the page cache; the
# traces are deleted afterwards.
set -euo pipefail
build=${1:?usage: bench/analyzer/split.sh BUILD_DIR [RANKS] [COLLECTIVES] [WORK_DIR]}
ranks=${2:-4096}
collectives=${3:-25000}
# A work folder made here is removed at exit, with everything in it.
work=${4:-} made_work=
[[ -n $work ]] || { work=$(mktemp -d /tmp/collcheck-split-bench.XXXXXX); made_work=1; }
collcheck=$build/bin/collcheck
generator=$build/bin/collcheck_generate_traces
# shellcheck source=bench/analyzer/split_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/split_common.sh"
require split.sh "$collcheck" "$generator" /usr/bin/time
pick_launcher split.sh
describe_machine

traces=$work/traces
logs=$work/split-logs
trap 'rm -rf "$traces" "$logs"; [[ -z $made_work ]] || rm -rf "$work"' EXIT
mkdir -p "$work" "$logs"

# Disk: the records (one per call, plus the small communicators' calls and the member lists), in
# the writer's 1 MiB chunks per file.
records=$((collectives + 200))
[[ -z ${SUB_COMMS:-} ]] || records=$((records + collectives / 4 + 2 + SUB_COMMS / 9))
records=$((records + ranks / 9))
need=$(reserved_bytes "$ranks" "$records")
avail=$(($(df -Pk "$work" | awk 'NR == 2 {print $4}') * 1024))
df -h "$work" | tail -1
echo "need: $((ranks * (collectives + 200) * 64 / 1000000)) MB of records," \
  "$((need / 1000000)) MB reserved; free: $((avail / 1000000)) MB"
if ((need > avail)); then
  echo "split.sh: not enough free disk under $work" >&2
  exit 1
fi

t0=$(date +%s.%N)
"$generator" "$traces" "$ranks" "$collectives" ${SUB_COMMS:+--sub-comms "$SUB_COMMS"} \
  ${BUG_EVERY:+--bug-every "$BUG_EVERY"}
t1=$(date +%s.%N)
job="$ranks ranks x $collectives calls${SUB_COMMS:+, sub-comms of $SUB_COMMS}"
job+="${BUG_EVERY:+, a wrong count every $BUG_EVERY calls}"
echo "generated: $job: $(du -sh "$traces" | cut -f1) in $(calc "$t1 - $t0") s"
# The page cache then holds what a reader of a file system gets, the same in every run of this
# script.
drop_from_cache "$traces"/*.cctrace
# Read again before each run: an idle machine may evict page cache that nobody maps (this VM's
# kernel pages out what was not touched for a minute), and a run would then read from disk.
warm() { cat "$traces"/*.cctrace > /dev/null; }
warm

options=(analyze --quiet --progress=never --timings)
# From /usr/bin/time -v: elapsed wall seconds ([h:]m:s), user + system seconds, peak RSS in MiB.
wall() {
  awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]
                         printf "%.2f", s}' "$1"
}
cpu() { awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.2f", u + s}' "$1"; }
rss() { awk '/Maximum resident set size/ {printf "%d", $6 / 1024}' "$1"; }
majors() { awk -F': ' '/Major \(requiring I\/O\) page faults/ {printf "%d", $2}' "$1"; }

# One measured run; writes LOGS/NAME.time.R (/usr/bin/time -v) and LOGS/NAME.err.R (stderr) for
# each process R, prints its line, and sets run_wall to the wall seconds of the whole command.
measure() { # name np(0: no mpirun) args...
  local name=$1 np=$2
  shift 2
  rm -f "$logs/$name".*
  local s0 s1
  warm
  s0=$(date +%s.%N)
  if [[ $np == 0 ]]; then
    /usr/bin/time -v -o "$logs/$name.time.0" "$collcheck" "$@" 2> "$logs/$name.err.0" || true
  else
    # Each process writes its own statistics and stderr, so that those of several do not mix, and
    # exits 0: Open MPI kills the others when one exits non-zero (findings), before their
    # statistics are written.
    # shellcheck disable=SC2016 # expanded by the sh of each process
    "${mpirun[@]}" -np "$np" sh -c \
      "r=$process_rank"'
       /usr/bin/time -v -o "$0.time.$r" "$@" 2> "$0.err.$r"
       exit 0' \
      "$logs/$name" "$collcheck" "$@" 2> "$logs/$name.mpirun" || cat "$logs/$name.mpirun" >&2
  fi
  s1=$(date +%s.%N)
  run_wall=$(calc "$s1 - $s0")
  local f total_cpu=0 slowest=0 per=""
  for f in "$logs/$name".time.*; do
    [[ -e $f ]] || { echo "  $name: no statistics (did it start?)"; run_wall=0; return; }
    local r=${f##*.}
    total_cpu=$(calc "$total_cpu + $(cpu "$f")")
    slowest=$(awk -v a="$(wall "$f")" -v b="$slowest" 'BEGIN {print (a > b ? a : b)}')
    per+=" [$r] $(wall "$f") s, $(rss "$f") MiB, $(majors "$f");"
  done
  echo "  $name: wall ${run_wall} s (slowest process ${slowest} s), cpu ${total_cpu} s;" \
    "per process (wall, peak RSS, major faults):${per}"
  for f in "$logs/$name".err.*; do
    grep "^collcheck analyze: " "$f" | sed "s/^collcheck analyze: /    [${f##*.}] /" || true
    # Anything else on stderr (an error) is shown too.
    grep -v "^collcheck analyze: " "$f" | head -5 | sed "s/^/    [${f##*.}] stderr: /" || true
  done
}

declare -a np1 np2 single ratios
for run in $(seq "${RUNS:-5}"); do
  echo "run $run (load $(cut -d' ' -f1 /proc/loadavg)):"
  measure np1 1 "${options[@]}" --threads 1 "$traces"
  np1+=("$run_wall")
  measure np2 2 "${options[@]}" --threads 1 "$traces"
  np2+=("$run_wall")
  measure single 0 "${options[@]}" "$traces"
  single+=("$run_wall")
  ratios+=("$(calc "${np1[-1]} / ${np2[-1]}")")
  echo "  speed-up np1/np2 ${ratios[-1]}, single/np2 $(calc "${single[-1]} / ${np2[-1]}")"
done
best() { printf '%s\n' "$@" | sort -n | head -1; }
b1=$(best "${np1[@]}") b2=$(best "${np2[@]}") bs=$(best "${single[@]}")
echo "best of ${#np1[@]}: np1 ${b1} s, np2 ${b2} s, single ${bs} s;" \
  "speed-up np1/np2 $(calc "$b1 / $b2"), single/np2 $(calc "$bs / $b2")"
echo "median of ${#np1[@]}: np1 $(median "${np1[@]}") s, np2 $(median "${np2[@]}") s," \
  "single $(median "${single[@]}") s; speed-ups np1/np2 of each round: ${ratios[*]}" \
  "(median $(median "${ratios[@]}"))"
"$collcheck" analyze --progress=never "$traces" | tail -1 || true
uptime
