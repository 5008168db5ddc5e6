#!/usr/bin/env bash
# What this machine allows a split analysis of one generated job: the job analyzed whole in one
# process, against its two halves analyzed by two processes that share nothing (no MPI, no
# exchange, no handover, no merge), side by side and each alone. Beside them, the split itself
# (`mpirun -np 2`). Every command runs under the same launcher, `--threads 1`, the page cache
# warm, RUNS rounds (default 5) in turn. Usage:
#   bench/analyzer/split_bound.sh BUILD_DIR [RANKS=4096] [COLLECTIVES=25000] [WORK_DIR]
# HALVES chooses the halves:
#   shares (default)  the two planned shares of the split (collcheck_bench_range_cost DIR 2 1 K):
#                     what the split reads, without its handovers, so the two differ in cost.
#   records           two generated jobs of RANKS x COLLECTIVES/2: every process opens every file
#                     and reads half the calls, each with the starts of all files.
#   files             two generated jobs of RANKS/2 x COLLECTIVES: every process opens half the
#                     files (what no split by sequence range does: a bound for any division).
# MPIRUN replaces the launcher (default: mpirun --mca btl self,vader, --allow-run-as-root as root).
# Prints the machine (describe_machine), then per round the wall times (of the whole launcher
# command, and of each process side by side) and the speed-ups over the whole job in one process: of
# the split; of the halves side by side as they ran, and balanced (the slower one's time replaced by
# the mean of the two: the most a split can gain on this machine); and of the halves alone, balanced
# (the most without a second process beside it); then their medians. Beside them, the CPU seconds
# (user and system) and the minor page faults of the split's two processes and of the halves side by
# side: what the split does beyond the halves (MPI, handovers, the gather and the merge).
# First, collcheck_bench_page_cost reads the whole job's files out of the page cache in one process
# and in two side by side, mapped and copied: what the machine gains from a second process in
# reading alone, before any analysis (one round; a machine whose mapping does not scale shows it
# here).
# Needs free disk and page cache for the job (4096 x 25000: 8.6 GB reserved), and twice that with
# generated halves; the traces are deleted afterwards.
set -euo pipefail
build=${1:?usage: bench/analyzer/split_bound.sh BUILD_DIR [RANKS] [COLLECTIVES] [WORK_DIR]}
ranks=${2:-4096}
collectives=${3:-25000}
# A work folder made here is removed at exit, with everything in it.
work=${4:-} made_work=
[[ -n $work ]] || { work=$(mktemp -d /tmp/collcheck-split-bound.XXXXXX); made_work=1; }
halves=${HALVES:-shares}
collcheck=$build/bin/collcheck
generator=$build/bin/collcheck_generate_traces
range_cost=$build/bin/collcheck_bench_range_cost
page_cost=$build/bin/collcheck_bench_page_cost
case $halves in
  shares) half_ranks=0 half_calls=0 ;;
  records) half_ranks=$ranks half_calls=$((collectives / 2)) ;;
  files) half_ranks=$((ranks / 2)) half_calls=$collectives ;;
  *) echo "split_bound.sh: HALVES must be shares, records or files" >&2; exit 2 ;;
esac
[[ $halves == shares ]] || ((half_ranks >= 2 && half_calls >= 1)) ||
  { echo "split_bound.sh: the job is too small" >&2; exit 2; }
# shellcheck source=bench/analyzer/split_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/split_common.sh"
require split_bound.sh "$collcheck" "$generator" "$range_cost" "$page_cost" /usr/bin/time
pick_launcher split_bound.sh
describe_machine

trap 'rm -rf "$work/whole" "$work/half0" "$work/half1" "$work/logs"
  [[ -z $made_work ]] || rm -rf "$work"' EXIT
mkdir -p "$work/logs"
# Disk: each file's records (one per call, plus the member lists and the job's start and end) in
# the writer's 1 MiB chunks, for the whole job and the generated halves.
reserved() { # ranks calls
  (($1 > 0)) || { echo 0; return; }
  reserved_bytes "$1" $(($2 + 200 + $1 / 9))
}
need=$(($(reserved "$ranks" "$collectives") + 2 * $(reserved "$half_ranks" "$half_calls")))
avail=$(($(df -Pk "$work" | awk 'NR == 2 {print $4}') * 1024))
echo "need $((need / 1000000)) MB of disk; free: $((avail / 1000000)) MB"
((need <= avail)) || { echo "split_bound.sh: not enough free disk under $work" >&2; exit 1; }

"$generator" "$work/whole" "$ranks" "$collectives" > /dev/null
dirs=("$work/whole")
if [[ $halves == shares ]]; then
  echo "job: $ranks ranks x $collectives calls ($(du -sh "$work/whole" | cut -f1));" \
    "halves: the split's two planned shares"
else
  for h in 0 1; do "$generator" "$work/half$h" "$half_ranks" "$half_calls" > /dev/null; done
  dirs+=("$work/half0" "$work/half1")
  echo "job: $ranks ranks x $collectives calls ($(du -sh "$work/whole" | cut -f1));" \
    "halves ($halves): $half_ranks ranks x $half_calls calls ($(du -sh "$work/half0" | cut -f1) each)"
fi
# As in split.sh: the page cache holds what a reader of the file system gets (read-ahead's
# folios), the same for every job, and is read again before every run.
for d in "${dirs[@]}"; do drop_from_cache "$d"/*.cctrace; done
warm() { for d in "${dirs[@]}"; do cat "$d"/*.cctrace; done > /dev/null; }
majors() { awk '$1 == "pgmajfault" {print $2}' /proc/vmstat; }
warm
"$page_cost" "$work/whole" 1 | sed -n 's/^round 1, /reading alone, /p'

options=(analyze --quiet --progress=never --threads 1)
# Runs one command with the page cache read again first, and sets `took` to its wall seconds, with
# " (N read from disk)" after it when the machine took N major page faults meanwhile (this VM's kernel
# evicts page cache left untouched for a while). Output is dropped; a failure shows its stderr.
timed() {
  warm
  local s0 s1 m0 m1
  m0=$(majors)
  s0=$(date +%s.%N)
  "$@" > /dev/null 2> "$work/logs/stderr" || sed 's/^/  stderr: /' "$work/logs/stderr" | head -5 >&2
  s1=$(date +%s.%N)
  m1=$(majors)
  took="$(calc "$s1 - $s0") s"
  ((m1 == m0)) || took+=" ($((m1 - m0)) read from disk)"
}
# Half R as a process that runs alone: the launcher's size variables removed (collcheck does not
# split), its wall, user and system seconds and minor faults written to LOGS/half.R;
# SPLIT_BOUND_HALF picks the half of a process run alone (this machine's launcher passes its
# environment on). The sh of each process expands its variables.
# shellcheck disable=SC2016
half=(sh -c "r=$process_rank"'
  [ -z "$SPLIT_BOUND_HALF" ] || r=$SPLIT_BOUND_HALF
  unset OMPI_COMM_WORLD_SIZE PMI_SIZE MV2_COMM_WORLD_SIZE SLURM_STEP_NUM_TASKS
  mode=$1 range_cost=$2 work=$3
  shift 3
  if [ "$mode" = shares ]; then set -- "$range_cost" "$work/whole" 2 1 "$r"
  else set -- "$@" "$work/half$r"; fi
  exec /usr/bin/time -f "%e %U %S %R" -o "$0.$r" "$@"' "$work/logs/half" "$halves" "$range_cost"
  "$work" "$collcheck" "${options[@]}")
# The split's processes, each under /usr/bin/time as the halves (LOGS/split.R).
# shellcheck disable=SC2016
split_process=(sh -c "r=$process_rank"'
  exec /usr/bin/time -f "%e %U %S %R" -o "$0.$r" "$@"' "$work/logs/split" "$collcheck"
  "${options[@]}" "$work/whole")
# From LOGS/NAME.R (wall, user and system seconds, minor faults of one process; fails when that
# process did not run): its wall seconds, and the CPU seconds and minor faults of NAME's processes.
seconds() { awk '{print $1; exit}' "$work/logs/$1.$2"; }
cpu_of() { awk '{s += $2 + $3} END {printf "%.2f", s}' "$work/logs/$1".[01]; }
faults_of() { awk '{s += $4} END {print s}' "$work/logs/$1".[01]; }

declare -a split side balanced alone split_cpu side_cpu split_faults side_faults
for run in $(seq "${RUNS:-5}"); do
  timed "${mpirun[@]}" -np 1 "$collcheck" "${options[@]}" "$work/whole"
  w=$took
  rm -f "$work"/logs/split.* "$work"/logs/half.*
  timed "${mpirun[@]}" -np 2 "${split_process[@]}"
  s=$took
  split_cpu+=("$(cpu_of split)") split_faults+=("$(faults_of split)")
  SPLIT_BOUND_HALF='' timed "${mpirun[@]}" -np 2 "${half[@]}"
  p=$took p0=$(seconds half 0) p1=$(seconds half 1)
  side_cpu+=("$(cpu_of half)") side_faults+=("$(faults_of half)")
  # Balanced: the slower process's wall replaced by the mean of the two.
  pb=$(awk -v p="${p%% *}" -v a="$p0" -v b="$p1" \
    'BEGIN {m = a > b ? a : b; printf "%.2f", p - m + (a + b) / 2}')
  SPLIT_BOUND_HALF=0 timed "${mpirun[@]}" -np 1 "${half[@]}"
  a0=$took
  SPLIT_BOUND_HALF=1 timed "${mpirun[@]}" -np 1 "${half[@]}"
  a1=$took
  split+=("$(calc "${w%% *} / ${s%% *}")") side+=("$(calc "${w%% *} / ${p%% *}")")
  balanced+=("$(calc "${w%% *} / $pb")")
  alone+=("$(calc "${w%% *} / ((${a0%% *} + ${a1%% *}) / 2)")")
  echo "run $run (load $(cut -d' ' -f1 /proc/loadavg)): whole ${w}, split ${s}," \
    "halves side by side ${p} (the processes ${p0} and ${p1} s), alone ${a0} and ${a1};" \
    "speed-ups: split ${split[-1]}, side by side ${side[-1]} (balanced ${balanced[-1]})," \
    "alone balanced ${alone[-1]}; CPU: split ${split_cpu[-1]} s, halves side by side" \
    "${side_cpu[-1]} s; minor faults: split ${split_faults[-1]}, halves ${side_faults[-1]}"
done
echo "median speed-ups over the whole job in one process: split $(median "${split[@]}")," \
  "halves side by side $(median "${side[@]}") (balanced $(median "${balanced[@]}")), halves" \
  "alone balanced $(median "${alone[@]}")"
echo "medians of the CPU seconds: split $(median "${split_cpu[@]}"), halves side by side" \
  "$(median "${side_cpu[@]}"); of the minor faults: split" \
  "$(printf %.0f "$(median "${split_faults[@]}")"), halves" \
  "$(printf %.0f "$(median "${side_faults[@]}")")"
uptime
