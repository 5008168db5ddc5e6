#!/usr/bin/env bash
# MPICH programs started by MPICH's mpiexec (hydra) under `collcheck run`: the tracer's wrappers
# built against MPICH's mpi.h take their calls (mpi_support.h), so a correct job runs as untraced
# and analyzes clean, and a wrong operation or datatype on one rank is found and blamed on it.
# MPICH's Fortran bindings call its C functions, whose wrappers record them: a Fortran program
# (`use mpi`) runs as untraced, analyzes clean, and a wrong count on one rank is found at its line.
# Usage: mpich_hydra.sh COLLCHECK PROGRAMS_SOURCE_DIR ANALYZER_PROGRAMS_SOURCE_DIR
set -euo pipefail
collcheck=$1 programs=$2 analyzerPrograms=$3
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
source "$(dirname "$0")/traced_job.sh"
mpicc.mpich -O1 -g -o "$work/mpi_many" "$programs/mpi_many.c"
mpicc.mpich -O1 -g -o "$work/bug_signature" "$analyzerPrograms/bug_signature.c"
job=(mpiexec.hydra -n 2 "$work/mpi_many" 200)
expected=$(timeout 60 "${job[@]}") || fail "the untraced job failed: $expected"
echo "untraced: $expected"
traced_like_untraced traced "$work/traces" "$expected" 2 \
  "2 ranks, 1 communicator, 200 collectives checked: no findings" -- "${job[@]}"
for field in op datatype; do
  out=$work/bug-$field
  timeout 60 "$collcheck" run -o "$out" -- mpiexec.hydra -n 3 "$work/bug_signature" "$field" \
    >/dev/null 2>&1 || true # MPICH may complete or fail the call; the traces tell
  set +e
  "$collcheck" analyze "$out" >"$work/analyze.out" 2>&1
  status=$?
  set -e
  rule=$([[ $field == op ]] && echo reduce-op-mismatch || echo datatype-mismatch)
  ((status == 1)) || fail "$field on rank 1: analyze exited $status: $(cat "$work/analyze.out")"
  grep -q "\[$rule\]" "$work/analyze.out" || fail "no $rule: $(cat "$work/analyze.out")"
  grep -q "differs: rank 1:" "$work/analyze.out" || fail "rank 1 not blamed: $(cat "$work/analyze.out")"
  grep -q "bug_signature.c:" "$work/analyze.out" || fail "no source line: $(cat "$work/analyze.out")"
  echo "$field on rank 1: $(grep "\[$rule\]" "$work/analyze.out" | head -1)"
done
if command -v mpif90.mpich >/dev/null; then
  mpif90.mpich -g -w -o "$work/mpi_fortran" "$programs/mpi_fortran.f90"
  fortran=(mpiexec.hydra -n 2 "$work/mpi_fortran")
  expected=$(timeout 60 "${fortran[@]}") || fail "the untraced Fortran job failed: $expected"
  traced_like_untraced fortran "$work/fortran" "$expected" 2 \
    "2 ranks, 4 communicators, 13 collectives checked: no findings" -- "${fortran[@]}"
  out=$work/fortran-count
  timeout 60 "$collcheck" run -o "$out" -- mpiexec.hydra -n 3 "$work/mpi_fortran" count \
    >/dev/null 2>&1 || true
  set +e
  "$collcheck" analyze "$out" >"$work/analyze.out" 2>&1
  status=$?
  set -e
  ((status == 1)) || fail "Fortran count on rank 1: analyze exited $status: $(cat "$work/analyze.out")"
  grep -q "count 6 on rank 1 \[count-mismatch\]" "$work/analyze.out" ||
    fail "Fortran: no count-mismatch on rank 1: $(cat "$work/analyze.out")"
  line=$(grep -n "call mpi_allreduce(r7, max7, n7" "$programs/mpi_fortran.f90" | cut -d: -f1)
  grep -q "called at: ranks 0-2: .*mpi_fortran.f90:$line (mpi_fortran)" "$work/analyze.out" ||
    fail "Fortran: not placed at mpi_fortran.f90:$line: $(cat "$work/analyze.out")"
  echo "Fortran: traced like untraced; count on rank 1 found at mpi_fortran.f90:$line"
else
  echo "Fortran: not checked (no mpif90.mpich)"
fi
