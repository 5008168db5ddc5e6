# Shell helpers of the split benchmarks (split.sh, split_bound.sh, split_ab.sh), sourced by each.
# shellcheck shell=bash

# Exits with the script's name ($1) when one of the tools or libraries after it is missing.
require() { # script paths...
  local script=$1 tool
  shift
  for tool in "$@"; do
    [[ -x $tool ]] || { echo "$script: $tool is missing" >&2; exit 2; }
  done
}

# Sets the array `mpirun` to the launcher: MPIRUN split into words, or Open MPI's mpirun over
# shared memory (with --allow-run-as-root as root); exits when it is not found. $1: the script.
pick_launcher() {
  if [[ -n ${MPIRUN:-} ]]; then
    read -r -a mpirun <<< "$MPIRUN"
  else
    mpirun=(mpirun --mca btl "self,vader")
    [[ $(id -u) != 0 ]] || mpirun+=(--allow-run-as-root)
  fi
  command -v "${mpirun[0]}" > /dev/null || { echo "$1: ${mpirun[0]} not found" >&2; exit 2; }
}

# The machine a set ran on, in one line: the rounds of one machine agree far better than those of
# two (docs/performance.md), so every set says which it was.
describe_machine() {
  local model
  model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2> /dev/null)
  echo "machine: ${model:-unknown CPU}, $(nproc) CPUs, kernel $(uname -r)," \
    "$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) of memory"
}

# A process's rank as its launcher tells it (Open MPI, PMIx, MPICH, Slurm), for the sh that wraps
# each process to expand.
# shellcheck disable=SC2016,SC2034 # expanded by that sh; used by the scripts that source this
process_rank='${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}}'

# Bytes the writer reserves for RANKS files of RECORDS records each: whole 1 MiB chunks after the
# 4 KiB header.
reserved_bytes() { # ranks records
  echo $(($1 * ((($2 + 16383) / 16384) * 1048576 + 4096)))
}

# Floating-point arithmetic, 2 decimals.
calc() { awk "BEGIN {printf \"%.2f\", $1}"; }

# The middle value (the mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1}
    END {printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# Lets the writeback of fresh trace files finish and drops them from the page cache, so that the
# next read brings them back as a reader of a file system gets them (read-ahead's large folios,
# which cost the mapping's page faults less than the single pages the generator wrote).
drop_from_cache() { # files...
  sync
  local f
  for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done
}
