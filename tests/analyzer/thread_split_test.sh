#!/usr/bin/env bash
# The analysis split among threads (`collcheck analyze --threads T`, analyzer/parallel) must print
# exactly what one thread prints: the JSON report byte for byte, with 2 and 3 threads, and with 2
# where thread 0 is slow (the other takes parts of its share over). Usage:
#   thread_split_test.sh BIN_DIR [--work DIR] [--real-traces DIR]...
# BIN_DIR holds collcheck and collcheck_generate_traces. --real-traces names a folder whose
# subfolders hold traces of real jobs (the analyzer_mpi_programs test leaves them in its work
# folder): each is compared too; a folder not there yet is said and passed over. KEEP=1 keeps the
# work folder.
set -euo pipefail

usage() {
  echo "usage: $0 BIN_DIR [--work DIR] [--real-traces DIR]..." >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
bin=$1
shift
work=""
real_traces=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --work) work=${2:?}; shift 2 ;;
  --real-traces) real_traces+=("${2:?}"); shift 2 ;;
  *) usage ;;
  esac
done
collcheck=$bin/collcheck
generator=$bin/collcheck_generate_traces
for tool in "$collcheck" "$generator"; do
  if [[ ! -x $tool ]]; then
    echo "FAIL: $tool is missing (build collcheck and collcheck_generate_traces)" >&2
    exit 1
  fi
done
mkdir -p "${work:=${TMPDIR:-/tmp}}"
work=$(cd "$(mktemp -d "$work/collcheck-threads.XXXXXX")" && pwd)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT

failures=0
checks=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# check_set NAME DIR [PATTERN...]: the single thread's JSON report must hold each grep PATTERN (a
# check of the trace set itself); then every split variant must print it byte for byte.
check_set() {
  local name=$1 dir=$2
  shift 2
  local out=$work/out/$name
  mkdir -p "$out"
  local rc=0
  "$collcheck" analyze --threads 1 --json - --fail-on never "$dir" > "$out/single.json" \
    2> "$out/single.err" || rc=$?
  if [[ $rc != 0 ]]; then
    fail "$name: the single run exited $rc"
    head -c 1000 "$out/single.err"
    return
  fi
  for pattern in "$@"; do
    grep -q -- "$pattern" "$out/single.json" || fail "$name: the report lacks $pattern"
  done
  for variant in 2: 3: 2:0; do
    local threads=${variant%:*} slow=${variant#*:}
    local label="$name, $threads threads${slow:+, thread $slow slow}"
    local json=$out/threads$threads.$slow.json
    rc=0
    COLLCHECK_THREAD_SPLIT_MIN_SLOTS=0 COLLCHECK_THREAD_SPLIT_SLOW=$slow \
      "$collcheck" analyze --threads "$threads" --json - --fail-on never --timings \
      "$dir" > "$json" 2> "$json.err" || rc=$?
    checks=$((checks + 1))
    if [[ $rc != 0 ]]; then
      fail "$label: exited $rc"
      head -c 1000 "$json.err"
      continue
    fi
    if ! grep -q "split over $threads threads" "$json.err"; then
      fail "$label: --timings does not tell the split among the threads"
    fi
    if ! cmp -s "$out/single.json" "$json"; then
      fail "$label: the JSON report differs from the single thread's"
      diff "$out/single.json" "$json" | head -20 || true
    fi
  done
  echo "$name: $(grep -o "split over 2 threads: .*" "$out/threads2..json.err" || echo "not split")"
}

gen() { # name args...
  local name=$1
  shift
  "$generator" "$work/traces/$name" "$@" > /dev/null
}

mkdir -p "$work/traces"
# The files are nearly full (16384 slots each), so that the cuts fall among the records, not in
# the preallocated ends, also where the ends are read (the unfinished files of the hang): clean,
# wrong counts, sub-communicators and wrong counts, a hang, a rank out of step with every kind of
# event (the shares must be read across the cut after the skip), and a wide job of short files.
ranks=64
gen clean $ranks 16300
gen bugs $ranks 16300 --bug-every 500
gen subcomms_bugs $ranks 13000 --sub-comms 8 --bug-every 700
gen hang $ranks 16300 --hang-at 11000
gen skip_everything $ranks 13000 --bug-every 750 --skip-at 2000 --sub-comms 16
gen wide 512 600 --bug-every 97
check_set clean "$work/traces/clean" '"findings": 0,' '"communicators": 1,'
check_set bugs "$work/traces/bugs" '"rule": "count-mismatch"'
check_set subcomms_bugs "$work/traces/subcomms_bugs" '"communicators": 9,' \
  '"rule": "count-mismatch"'
check_set hang "$work/traces/hang" '"rule": "hang"' '"finished": false'
check_set skip_everything "$work/traces/skip_everything" '"communicators": 5,' \
  '"rule": "count-mismatch"' '"rule": "missing-participant"'
# Short files: cut among their records, so that their shares are really merged.
export COLLCHECK_SPLIT_BALANCE=records
check_set wide "$work/traces/wide" '"rule": "count-mismatch"'
rm -rf "$work/traces"

# Traces of real MPI jobs (4 ranks), copied so that a concurrent rerun of their test cannot
# change them; cut among their records too.
real=0
for parent in "${real_traces[@]}"; do
  if [[ ! -d $parent ]]; then
    echo "real traces: $parent not there (its test has not run), passed over"
    continue
  fi
  for dir in "$parent"/*/; do
    dir=${dir%/}
    compgen -G "$dir/*.cctrace" > /dev/null || continue
    name=real_${parent##*/}_${dir##*/}
    mkdir -p "$work/real/$name"
    cp "$dir"/*.cctrace "$work/real/$name/"
    check_set "$name" "$work/real/$name"
    real=$((real + 1))
  done
done
unset COLLCHECK_SPLIT_BALANCE

if [[ $failures -gt 0 ]]; then
  echo "FAILED: $failures failures in $checks comparisons"
  exit 1
fi
echo "PASSED: $checks comparisons ($real real jobs)"
