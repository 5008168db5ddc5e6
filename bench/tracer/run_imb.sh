#!/usr/bin/env bash
# The tracer's added time per call on the Intel MPI Benchmarks' collectives: IMB-MPI1 at np=1,
# small messages, untraced and under `collcheck run`, interleaved, then `collcheck analyze` of
# the last traced run. IMB is not packaged by Debian: build it from its sources
# (github.com/intel/mpi-benchmarks: make CC=mpicc CXX=mpicxx CPPFLAGS=-DOMPI_SKIP_MPICXX=1
# IMB-MPI1) and name the binary.
# Usage: bench/tracer/run_imb.sh IMB-MPI1 [build-dir [rounds [iterations]]]
# Prints, per round and mode, "benchmark bytes t_avg_us" for every line IMB reports.
set -euo pipefail
imb=$(realpath "${1:?path to IMB-MPI1}")
build=$(realpath "${2:-build}")
rounds=${3:-3}
iterations=${4:-200000}
benchmarks=(Allreduce Reduce Bcast Allgather Alltoall Gather Scatter Reduce_scatter Barrier)
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 1)
work=$(mktemp -d /var/tmp/collcheck-imb.XXXXXX)
trap 'rm -rf "$work"' EXIT
imbArgs=("${benchmarks[@]}" -msglog 0:4 -iter "$iterations" -iter_policy off -time 600 -npmin 1)
# IMB prints a "# Benchmarking NAME" line, then "bytes repetitions t_min t_max t_avg" rows (the
# barrier's rows have no bytes column).
table() {
  awk '/^# Benchmarking/ {name = $3}
       name && /^ +[0-9]/ {if (NF == 5) print name, $1, $5; else if (NF == 4) print name, 0, $4}'
}
for round in $(seq 1 "$rounds"); do
  echo "round $round untraced (load $(cut -d' ' -f1 /proc/loadavg))"
  "${mpirun[@]}" "$imb" "${imbArgs[@]}" | table | sed 's/^/  /'
  rm -rf "$work/traces"
  echo "round $round traced (load $(cut -d' ' -f1 /proc/loadavg))"
  "$build/bin/collcheck" run -o "$work/traces" -- "${mpirun[@]}" "$imb" "${imbArgs[@]}" | table |
    sed 's/^/  /'
done
echo "traces of the last run: $(du -sh "$work/traces" | cut -f1)"
"$build/bin/collcheck" analyze "$work/traces" | tail -3 || echo "collcheck analyze: exit $?"
