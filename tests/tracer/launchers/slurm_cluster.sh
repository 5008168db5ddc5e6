#!/usr/bin/env bash
# `collcheck run -- srun ...` on a real Slurm cluster of one node, started here (slurmctld and
# slurmd as root, in a folder of their own, on ports of their own) and stopped at the end: the
# job runs as it does untraced, every task writes its trace, with the whole environment forwarded
# and with `--export=NONE`, and the traces analyze clean.
# Usage: slurm_cluster.sh COLLCHECK PROGRAM_DIR (PROGRAM_DIR holds mpi_many)
set -euo pipefail
collcheck=$1 programs=$2
for tool in slurmctld slurmd srun sinfo; do
  command -v "$tool" >/dev/null ||
    { echo "skipped: $tool is not installed (Debian: slurmctld slurmd slurm-client)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "skipped: starting slurmd needs root"; exit 77; }
work=$(mktemp -d /tmp/collcheck-slurm.XXXXXX)
pids=()
cleanup() {
  ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null && wait "${pids[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  tail -n 20 "$work"/log/*.log 2>/dev/null || true
  exit 1
}
source "$(dirname "$0")/traced_job.sh"
mkdir -p "$work"/{state,spool,log}
host=$(hostname -s)
port=$((20000 + $$ % 20000)) # two ports of this run's own, so that no other cluster answers
cat >"$work/slurm.conf" <<CONF
ClusterName=collcheck-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break
  sleep 0.5
done
[[ $(sinfo -h -o %t 2>/dev/null) == idle ]] || fail "the node did not come up: $(sinfo 2>&1)"
srun --mpi=list 2>&1 | grep -q pmix ||
  { echo "skipped: this Slurm has no PMIx plugin to start MPI tasks with"; exit 77; }
job=(srun -n 2 --mpi=pmix "$programs/mpi_many" 300)
expected=$(timeout 60 "${job[@]}") || fail "the untraced job failed: $expected"
[[ $expected == checksum* ]] || fail "the untraced job printed '$expected'"
echo "untraced: $expected"
for exports in "" "--export=NONE"; do
  traced_like_untraced "srun ${exports:-(environment forwarded)}" "$work/traces${exports:+-none}" \
    "$expected" 2 "2 ranks, 1 communicator, 300 collectives checked: no findings" -- \
    srun ${exports:+"$exports"} -n 2 --mpi=pmix "$programs/mpi_many" 300
done
