# Sourced by the launcher tests; needs $collcheck, $work and fail().
# traced_like_untraced LABEL OUT EXPECTED FILES SUMMARY -- COMMAND...
# Runs COMMAND under `collcheck run -o OUT` and fails unless it prints EXPECTED (its untraced
# output), leaves FILES trace files, and `collcheck analyze OUT` exits 0 with SUMMARY in its report.
traced_like_untraced() {
  local label=$1 out=$2 expected=$3 files=$4 summary=$5
  shift 6
  local got count
  got=$(timeout 60 "$collcheck" run -o "$out" -- "$@" 2>"$work/run.err") ||
    fail "$label: collcheck run exited $?: $(cat "$work/run.err")"
  [[ $got == "$expected" ]] || fail "$label printed '$got', untraced '$expected'"
  count=$(find "$out" -name '*.cctrace' | wc -l)
  ((count == files)) || fail "$label: $count trace files, expected $files: $(cat "$work/run.err")"
  "$collcheck" analyze "$out" >"$work/analyze.out" ||
    fail "$label: collcheck analyze exited $?: $(cat "$work/analyze.out")"
  grep -qF "$summary" "$work/analyze.out" || fail "$label: $(tail -1 "$work/analyze.out")"
  echo "$label: the same output as untraced, $files traces, $(tail -1 "$work/analyze.out")"
}
