#!/usr/bin/env bash
# A split analysis (`mpirun -np K collcheck analyze ...`: the records divided by sequence range
# across K processes) must print exactly what one `collcheck analyze ...` prints: the JSON report
# byte for byte, the text report byte for byte, only rank 0 writing to stdout, and every process
# exiting with the single run's exit status. Usage:
#   split_analysis_test.sh BIN_DIR MPIRUN [--work DIR] [--real-traces DIR]... [--np "1 2 4"]
# BIN_DIR holds collcheck and collcheck_generate_traces; MPIRUN is the launcher prefix as one
# string (e.g. "mpirun --allow-run-as-root --oversubscribe --mca btl self,vader"). --real-traces
# names a folder whose subfolders hold traces of real jobs (the analyzer_mpi_programs test leaves
# them in its work folder): each is compared too; without it, or when it is empty, they are
# skipped. KEEP=1 keeps the work folder (a new folder, inside --work when given).
set -euo pipefail

usage() {
  echo "usage: $0 BIN_DIR MPIRUN [--work DIR] [--real-traces DIR] [--np \"1 2 4\"]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
bin=$1
read -r -a mpirun <<< "$2"
shift 2
work=""
real_traces=()
nps="1 2 4"
while [[ $# -gt 0 ]]; do
  case $1 in
  --work) work=${2:?}; shift 2 ;;
  --real-traces) real_traces+=("${2:?}"); shift 2 ;;
  --np) nps=${2:?}; shift 2 ;;
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
[[ ${#mpirun[@]} -gt 0 ]] || usage
# A fresh folder of our own (inside --work when given), removed at the end.
mkdir -p "${work:=${TMPDIR:-/tmp}}"
work=$(cd "$(mktemp -d "$work/collcheck-split.XXXXXX")" && pwd)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$work"' EXIT
# A split run that deadlocks fails the test instead of hanging it.
launch_timeout=${SPLIT_TEST_TIMEOUT:-120}

# Runs one process of the launched job: records its exit status in RCDIR/rc.RANK and, unless OUT
# is '-', sends its stdout to OUT/out.RANK instead of the launcher's (merged) stdout. With MASK 1
# it exits 0 whatever the status: Open MPI kills the other processes as soon as one exits non-zero,
# so they would not get to record theirs.
wrap=$work/wrap.sh
cat > "$wrap" <<'EOF'
#!/bin/sh
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-unknown}}}
rcdir=$1 out=$2 mask=$3
shift 3
# Each process's stderr is kept in RCDIR/err.RANK too (then passed on): the launcher forwards
# the processes' streams interleaved, and may cut a line of one with another's.
if [ "$out" = - ]; then "$@" 2> "$rcdir/err.$rank"; else "$@" > "$out/out.$rank" 2> "$rcdir/err.$rank"; fi
rc=$?
cat "$rcdir/err.$rank" >&2
echo "$rc" > "$rcdir/rc.$rank"
[ "$mask" = 1 ] && exit 0
exit "$rc"
EOF
chmod +x "$wrap"

failures=0
checks=0
# Messages go to fd 3, the test's stdout, also from inside functions whose stdout is a report.
exec 3>&1
fail() {
  echo "FAIL: $*" >&3
  failures=$((failures + 1))
}

# Prints where two files differ: a diff excerpt (the reports are line oriented).
show_diff() {
  cmp "$1" "$2" || true
  diff "$1" "$2" | head -n 30 || true
}

# Checks the exit statuses the wrapper recorded: one per process, each equal to EXPECTED.
check_statuses() { # label rcdir k expected
  local label=$1 rcdir=$2 k=$3 expected=$4 count=0 f
  for f in "$rcdir"/rc.*; do
    [[ -e $f ]] || continue
    count=$((count + 1))
    if [[ $(cat "$f") != "$expected" ]]; then
      fail "$label: process ${f##*/rc.} exited $(cat "$f"), the single run $expected"
    fi
  done
  [[ $count == "$k" ]] || fail "$label: $count of $k processes recorded an exit status"
}

# Launches K processes of `collcheck ARGS...` through the wrapper; sets launch_rc.
launch() { # k rcdir out mask args...
  local k=$1 rcdir=$2 out=$3 mask=$4
  shift 4
  rm -rf "$rcdir"
  mkdir -p "$rcdir"
  launch_rc=0
  timeout -k 10 "$launch_timeout" "${mpirun[@]}" -np "$k" "$wrap" "$rcdir" "$out" "$mask" \
    "$collcheck" "$@" \
    || launch_rc=$?
  if [[ $launch_rc == 124 || $launch_rc == 137 ]]; then
    fail "mpirun -np $k collcheck $* did not finish within ${launch_timeout} s"
  fi
}

count_reports() { grep -c '"schema": "collcheck-report"' "$1" || true; }

# Compares the split analysis of trace folder DIR with the single one, for each process count in
# $set_nps, through the launcher's stdout too when $set_merged is 1. EXPECT: grep patterns the
# single JSON report must contain (a check of the trace set itself).
set_nps=$nps
set_merged=1
# The same split among the threads of one process (thread_split.h), forced at any size: 2 and 3
# threads, and 2 with thread 0 slow (the other takes parts of its share over): the JSON report
# byte for byte.
check_threads() { # name dir single_json
  local name=$1 dir=$2 single_json=$3 out=$work/out/$1 variant
  for variant in 2: 3: 2:0; do
    local threads=${variant%:*} slow=${variant#*:} rc=0
    local json=$out/threads$threads${slow:+.slow$slow}.json label="$name, $threads threads${slow:+, thread $slow slow}"
    checks=$((checks + 1))
    COLLCHECK_THREAD_SPLIT_MIN_SLOTS=0 COLLCHECK_THREAD_SPLIT_SLOW=$slow \
      "$collcheck" analyze --threads "$threads" --json - --fail-on never --timings "$dir" \
      > "$json" 2> "$json.err" || rc=$?
    [[ $rc == 0 ]] || fail "$label: exited $rc: $(head -c 500 "$json.err")"
    local said
    said=$(grep -o "split over $threads threads: .*" "$json.err" || true)
    [[ -n $said ]] || fail "$label: --timings does not tell the split among the threads"
    [[ $set_split != any && $said == *"analyzed whole"* ]] && fail "$label: not merged ($said)"
    if ! cmp -s "$single_json" "$json"; then
      fail "$label: the JSON report differs from the single run's"
      show_diff "$single_json" "$json"
    fi
    echo "  $threads threads${slow:+, thread $slow slow}: ${said#*: }"
  done
}
# The records copied with pread instead of matched where the files are mapped (`--read copy`, what
# a machine whose page mapping costs more than copying gets): in one process with one thread, among
# 2 threads, and split over 2 processes, the JSON report byte for byte; --timings says so.
check_reading() { # name dir single_json
  local name=$1 dir=$2 single_json=$3 out=$work/out/$1 how
  for how in threads1 threads2 np2; do
    local json=$out/copy.$how.json label="$name, --read copy, $how" rc=0
    checks=$((checks + 1))
    case $how in
    threads1 | threads2)
      COLLCHECK_THREAD_SPLIT_MIN_SLOTS=0 "$collcheck" analyze --threads "${how#threads}" \
        --read copy --json - --fail-on never --timings "$dir" > "$json" 2> "$json.err" || rc=$?
      ;;
    np2)
      launch 2 "$out/rc.copy" - 0 analyze --threads 1 --read copy --json - --fail-on never \
        --timings "$dir" > "$json" 2> "$json.err"
      rc=$launch_rc
      ;;
    esac
    [[ $rc == 0 ]] || fail "$label: exited $rc: $(head -c 500 "$json.err")"
    grep -q "records copied (--read copy)" "$json.err" \
      || fail "$label: --timings does not say the records were copied"
    if ! cmp -s "$single_json" "$json"; then
      fail "$label: the JSON report differs from the single run's"
      show_diff "$single_json" "$json"
    fi
  done
}
set_split=any # merged: every split must merge; joined: by reading cuts across (out of step)
check_set() { # name dir expect...
  local name=$1 dir=$2
  shift 2
  local out=$work/out/$name
  mkdir -p "$out"
  local single_json=$out/single.json single_text=$out/single.txt single_color=$out/single.color.txt
  local rc=0 text_rc=0
  "$collcheck" analyze --json - --fail-on never "$dir" > "$single_json" 2> "$out/single.json.err" \
    || rc=$?
  if [[ $rc != 0 ]]; then
    fail "$name: analyze --json - --fail-on never exited $rc: $(head -c 500 "$out/single.json.err")"
    return
  fi
  "$collcheck" analyze "$dir" > "$single_text" 2> "$out/single.txt.err" || text_rc=$?
  if [[ $text_rc -gt 1 ]]; then
    fail "$name: collcheck analyze exited $text_rc: $(head -c 500 "$out/single.txt.err")"
    return
  fi
  "$collcheck" analyze --color always "$dir" > "$single_color" 2> /dev/null || true
  local pattern
  for pattern in "$@"; do
    grep -Eq -- "$pattern" "$single_json" || fail "$name: the single report lacks /$pattern/"
  done
  echo "$name: $(grep -m1 '"text":' "$single_json" | sed 's/^ *"text": //'), exit status $text_rc"
  check_threads "$name" "$dir" "$single_json"
  check_reading "$name" "$dir" "$single_json"
  local k
  for k in $set_nps; do
    checks=$((checks + 1))
    local label="$name, -np $k"
    # JSON, through the launcher's stdout: one report, the same bytes.
    local split_json=$out/split$k.json
    launch "$k" "$out/rc$k.json" - 0 analyze --json - --fail-on never --timings "$dir" \
      > "$split_json" 2> "$out/split$k.json.err"
    [[ $launch_rc == 0 ]] || fail "$label: mpirun exited $launch_rc with --fail-on never"
    # Whether rank 0 merged the shares or analyzed alone (--timings says which, and why).
    if [[ $k -gt 1 ]]; then
      local alone across
      alone=$(grep -o "analyzed by rank 0 alone: .*" "$out/split$k.json.err" || true)
      across=$(grep -o "([0-9]* cut(s) read across)" "$out/split$k.json.err" | tr -dc 0-9 || true)
      [[ $set_split != any && -n $alone ]] && fail "$label: not merged ($alone)"
      [[ $set_split == joined && ${across:-0} == 0 ]] \
        && fail "$label: merged as planned, though its cuts are out of step"
      # Every process tells its own phases (--timings).
      local r told=0
      for ((r = 0; r < k; r++)); do
        grep -q "^collcheck analyze: process $r of $k: open " "$out/rc$k.json/err.$r" 2> /dev/null \
          && told=$((told + 1))
      done
      [[ $told == "$k" ]] || fail "$label: $told of $k processes printed their timings"
      echo "  -np $k: ${alone:-merged, ${across:-?} cut(s) read across}"
    fi
    check_statuses "$label --json" "$out/rc$k.json" "$k" 0
    local reports
    reports=$(count_reports "$split_json")
    [[ $reports == 1 ]] || fail "$label: stdout holds $reports JSON reports, not 1"
    if ! cmp -s "$single_json" "$split_json"; then
      fail "$label: the JSON report differs from the single run's"
      show_diff "$single_json" "$split_json"
      head -c 1000 "$out/split$k.json.err" && echo
    fi
    # The text report, each process's stdout apart: rank 0 prints it, the others nothing; each
    # exits with the single run's status.
    local per_rank=$out/text$k
    rm -rf "$per_rank"
    mkdir -p "$per_rank"
    launch "$k" "$out/rc$k.txt" "$per_rank" 1 analyze "$dir" 2> "$out/split$k.txt.err"
    check_statuses "$label text" "$out/rc$k.txt" "$k" "$text_rc"
    if [[ ! -f $per_rank/out.0 ]]; then
      fail "$label: no stdout of rank 0"
    elif ! cmp -s "$single_text" "$per_rank/out.0"; then
      fail "$label: rank 0's text report differs from the single run's"
      show_diff "$single_text" "$per_rank/out.0"
      head -c 1000 "$out/split$k.txt.err" && echo
    fi
    local f
    for f in "$per_rank"/out.*; do
      [[ $f == "$per_rank/out.0" || ! -s $f ]] \
        || fail "$label: process ${f##*/out.} wrote $(wc -c < "$f") bytes to stdout"
    done
    # The text report as a person gets it, through the launcher's stdout. Open MPI gives each
    # process a pseudo-terminal there, so `--color auto` may color it: either form is accepted.
    [[ $set_merged == 1 ]] || continue
    local merged=$out/split$k.merged.txt
    # mpirun's own exit status: Open MPI passes on the first non-zero one.
    launch "$k" "$out/rc$k.merged" - 0 analyze "$dir" > "$merged" 2> /dev/null
    [[ $launch_rc == "$text_rc" ]] \
      || fail "$label: mpirun exited $launch_rc, the single run $text_rc"
    if ! cmp -s "$single_text" "$merged" && ! cmp -s "$single_color" "$merged"; then
      fail "$label: the text report on mpirun's stdout differs from the single run's" \
        "(plain and colored)"
      show_diff "$single_text" "$merged"
    fi
  done
}

# Handovers: with process SLOW made slow (COLLCHECK_SPLIT_SLOW_RANK: it waits at its first look for
# askers until one asks, then pauses 1 ms at each look, one per 16 records read of every file), the
# others finish first and take over the rest of its share, maybe again and again: the JSON report
# must still be the single run's (check_set NAME left it), and more ranges than processes must
# have been merged.
check_handover() { # name dir k slow
  local name=$1 dir=$2 k=$3 slow=$4
  local out=$work/out/$name label="$name, -np $k, rank $4 slow"
  local json=$out/split$k.slow$slow.json err=$out/split$k.slow$slow.err
  checks=$((checks + 1))
  export COLLCHECK_SPLIT_SLOW_RANK=$slow
  launch "$k" "$out/rc$k.slow$slow" - 0 analyze --json - --fail-on never --timings --chunk 16 \
    "$dir" > "$json" 2> "$err"
  unset COLLCHECK_SPLIT_SLOW_RANK
  [[ $launch_rc == 0 ]] || fail "$label: mpirun exited $launch_rc with --fail-on never"
  check_statuses "$label" "$out/rc$k.slow$slow" "$k" 0
  local alone ranges
  alone=$(grep -o "analyzed by rank 0 alone: .*" "$err" || true)
  ranges=$(grep -o "[0-9]* range(s) merged" "$err" | tr -dc 0-9 || true)
  [[ -z $alone ]] || fail "$label: not merged ($alone)"
  [[ ${ranges:-0} -gt $k ]] || fail "$label: nothing was handed over (${ranges:-no} ranges merged)"
  echo "  -np $k, rank $slow slow: ${ranges:-?} ranges merged"
  if ! cmp -s "$out/single.json" "$json"; then
    fail "$label: the JSON report differs from the single run's"
    show_diff "$out/single.json" "$json"
    head -c 1000 "$err" && echo
  fi
}

gen() { # name args...
  local name=$1
  shift
  "$generator" "$work/traces/$name" "$@"
}

mkdir -p "$work/traces"
# The files are nearly full (16384 slots each), so that the cuts fall among the records, not in
# the preallocated ends, also where the ends are read (the unfinished files of the hang): (a) clean, (b) wrong counts, (c) many small communicators, (d) a hang,
# (e) sub-communicators and wrong counts, (f) wrong counts right at the cuts of 2 and 4
# processes; then (g) a rank out of step, (h) the same with every kind of event, where rank 0
# must read the cuts after the skip across (the skip well before the first cut of 2 and 4).
ranks=64
calls=16300
subcalls=13000
gen clean $ranks $calls
gen bugs $ranks $calls --bug-every 500
gen subcomms $ranks $subcalls --sub-comms 4
gen hang $ranks $calls --hang-at 11000
gen subcomms_bugs $ranks $subcalls --sub-comms 8 --bug-every 700
gen boundaries $ranks $calls --bug-every 4075
gen skip $ranks $calls --skip-at 1000
gen skip_everything $ranks $subcalls --bug-every 750 --skip-at 2000 --sub-comms 16
set_split=merged
check_set clean "$work/traces/clean" '"findings": 0,' '"communicators": 1,'
check_set bugs "$work/traces/bugs" '"rule": "count-mismatch"'
check_set subcomms "$work/traces/subcomms" '"communicators": 17,' '"findings": 0,' \
  '"origin": "split"'
check_set hang "$work/traces/hang" '"rule": "hang"' '"finished": false'
check_set subcomms_bugs "$work/traces/subcomms_bugs" '"communicators": 9,' \
  '"rule": "count-mismatch"'
check_set boundaries "$work/traces/boundaries" '"rule": "count-mismatch"'
set_split=joined
check_set skip "$work/traces/skip" '"rule": "missing-participant"'
check_set skip_everything "$work/traces/skip_everything" '"communicators": 5,' \
  '"rule": "count-mismatch"' '"rule": "missing-participant"'
for name in bugs subcomms_bugs skip; do
  check_handover "$name" "$work/traces/$name" 2 0
  check_handover "$name" "$work/traces/$name" 2 1
  check_handover "$name" "$work/traces/$name" 4 2
done
# Messages in small pieces (MPI counts are ints: a message past 2 GiB travels in pieces), over
# parts of any length: a process sends a head and a log per share, and those that took ranges
# over send several shares; every process's message spans many pieces here.
export COLLCHECK_MPI_PIECE_BYTES=997
check_handover subcomms_bugs "$work/traces/subcomms_bugs" 4 2
unset COLLCHECK_MPI_PIECE_BYTES
# The hang's later shares hold the calls only some ranks made, and the files' unwritten ends:
# no cut falls there, so only the first share (before the hang) has a rest to hand over.
check_handover hang "$work/traces/hang" 2 0
# (i) A wide job: a range handed over names its cut in each of 512 files (8 KiB), past MPI's
# eager limit for shared memory (4 KiB), so the answer travels by rendezvous, which completes only
# once the asker receives it. Short files: cut among their records.
gen wide 512 600 --bug-every 97
export COLLCHECK_SPLIT_BALANCE=records
set_split=merged
check_set wide "$work/traces/wide" '"rule": "count-mismatch"'
check_handover wide "$work/traces/wide" 2 0
check_handover wide "$work/traces/wide" 4 1
unset COLLCHECK_SPLIT_BALANCE
set_split=any
rm -rf "$work/traces"

# (g) traces of real MPI jobs (4 ranks), copied so that a concurrent rerun of their test cannot
# change them; with fewer launches each, to keep the test short.
set_nps=$(tr ' ' '\n' <<< "$nps" | grep -vx 1 | tr '\n' ' ' || true)
set_nps=${set_nps:-$nps}
set_merged=0
real=0
# Real jobs are short: their files are mostly preallocated ends, where byte-balanced cuts would
# fall. Cut them among their records instead, so that their shares are really merged.
export COLLCHECK_SPLIT_BALANCE=records
for parent in "${real_traces[@]}"; do
  [[ -d $parent ]] || continue
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
[[ $real -gt 0 ]] || echo "real traces: none found${real_traces[*]:+ under ${real_traces[*]}}, skipped"

if [[ $failures -gt 0 ]]; then
  echo "FAILED: $failures failures in $checks comparisons"
  exit 1
fi
echo "PASSED: $checks comparisons (trace sets x process counts $nps)"
