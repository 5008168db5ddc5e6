// How the processes of a split analysis talk: rank 0 gathers what every process found. The
// analyzer itself never links MPI; when it runs as an MPI job (mpirun, srun) it loads a small
// plugin that does (libcollcheck_mpi.so), so one binary serves both modes and a single process
// needs no MPI runtime at all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collcheck::analyzer::distributed {

// The collectives throw std::runtime_error when MPI fails; the other processes may then be stuck
// in the collective, so destroying the transport afterwards ends the whole job (MPI_Abort) rather
// than finalizing MPI. Call it from one thread at a time.
class Transport {
public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every process passes its bytes (any length, also beyond 2 GiB) as the
  // concatenation of `mine`; rank 0 gets every process's bytes in rank order, the others an empty
  // vector.
  virtual std::vector<std::string> gather(std::span<const std::string_view> mine) = 0;
  // Collective: rank 0's value, on every process.
  virtual int64_t broadcast(int64_t value) = 0;
  // Whether the transport is up, without waiting for it (MPI starts while the shares are read).
  virtual bool started() = 0;
  // Point to point, small messages only (under 2 GiB).
  virtual void send(int dest, int tag, const std::string &bytes) = 0;
  // A message with `tag` from any process, if one waits: its source and bytes. Never blocks.
  virtual std::optional<std::pair<int, std::string>> poll(int tag) = 0;
  // A barrier that does not block: enter it once, then ask until every process has entered.
  virtual void enterBarrier() = 0;
  virtual bool barrierDone() = 0;
  // CPU seconds used so far by the thread that talks to MPI (its start, the looks for askers, the
  // gather): what the split costs beside the reading. Negative where it cannot be told.
  virtual double transportCpuSeconds() = 0;
};

// True when this process was started as one of several processes of an MPI job (Open MPI,
// MPICH/PMI, PMIx or Slurm's environment says so).
bool launchedAsMpiJob();

// Joins the MPI job through the plugin; null with `error` set when it cannot be loaded or
// initialized. The plugin is looked for in COLLCHECK_MPI_PLUGIN, then beside the executable
// (../lib/libcollcheck_mpi.so and ./libcollcheck_mpi.so).
std::unique_ptr<Transport> connect(std::string &error);

} // namespace collcheck::analyzer::distributed
