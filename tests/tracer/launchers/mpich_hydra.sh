#!/usr/bin/env bash
# An MPICH program started by MPICH's mpiexec (hydra) under `collcheck run`. The tracer is built
# against Open MPI's ABI: in a process whose MPI is another, it must forward every MPI call
# untouched (the job's output and exit status as untraced), say so, and record nothing, so that
# `collcheck analyze` says nothing could be checked (exit 2) instead of passing.
# Usage: mpich_hydra.sh COLLCHECK SOURCE_OF_MPI_MANY
set -euo pipefail
collcheck=$1 source=$2
for tool in mpicc.mpich mpiexec.hydra; do
  command -v "$tool" >/dev/null ||
    { echo "skipped: $tool is not installed (Debian: mpich libmpich-dev)"; exit 77; }
done
work=$(mktemp -d /tmp/collcheck-mpich.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
mpicc.mpich -O1 -o "$work/mpi_many" "$source"
job=(mpiexec.hydra -n 2 "$work/mpi_many" 200)
expected=$(timeout 60 "${job[@]}") || fail "the untraced job failed: $expected"
echo "untraced: $expected"
set +e
got=$(timeout 60 "$collcheck" run -o "$work/traces" -- "${job[@]}" 2>"$work/run.err")
status=$?
set -e
((status == 0)) || fail "collcheck run exited $status: $(cat "$work/run.err")"
[[ $got == "$expected" ]] || fail "traced output '$got', untraced '$expected'"
grep -q "not Open MPI" "$work/run.err" || fail "no word that MPICH is not traced: $(cat "$work/run.err")"
files=$(find "$work/traces" -name '*.cctrace' 2>/dev/null | wc -l)
((files == 0)) || fail "$files trace files from a job whose MPI calls are not recorded"
set +e
"$collcheck" analyze "$work/traces" >"$work/analyze.out" 2>&1
status=$?
set -e
((status == 2)) || fail "collcheck analyze exited $status, not 2: $(cat "$work/analyze.out")"
echo "traced: the same output, exit 0, the warning, no trace; analyze exit 2"
