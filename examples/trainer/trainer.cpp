// collcheck-example-trainer: a small data-parallel SGD trainer whose options reproduce the
// correct and the incorrect ways to normalize a gradient across ranks (examples/README.md).
#include "collectives.h"
#include "options.h"
#include "training.h"
#include "watchdog.h"

#include <mpi.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

constexpr int kBadOptionsExitCode = 2;

int fail(const char *message) {
  std::fprintf(stderr, "collcheck-example-trainer: %s\n", message);
  return kBadOptionsExitCode;
}

} // namespace

int main(int argc, char **argv) {
  using namespace collcheck::example;
  const Options options = parseOptions(argc, argv);
  if (options.reference) { // one process (MPI only to trace its reduction)
    if (const std::string problem = checkOptions(options, options.referenceRanks); !problem.empty())
      return fail(problem.c_str());
    if (!options.referenceAllreduce) {
      trainReference(options, nullptr);
      return 0;
    }
    MPI_Init(&argc, &argv);
    trainReference(options, makeMpiCollectives().get());
    MPI_Finalize();
    return 0;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (const std::string problem = checkOptions(options, ranks); !problem.empty()) {
    if (rank == 0)
      fail(problem.c_str());
    MPI_Finalize();
    return kBadOptionsExitCode;
  }
  try {
    Watchdog watchdog(options.watchdogSeconds, rank);
#ifdef COLLCHECK_EXAMPLE_NCCL
    std::unique_ptr<Collectives> collectives =
        options.backend == Backend::mpi ? makeMpiCollectives() : makeNcclCollectives();
#else
    // Built without the NCCL backend (no nccl.h or no libnccl): nccl_collectives.cpp is not linked.
    if (options.backend == Backend::nccl)
      throw std::runtime_error(
          "built without the NCCL backend (no nccl.h or no libnccl): only --backend mpi "
          "is available");
    std::unique_ptr<Collectives> collectives = makeMpiCollectives();
#endif
    trainDistributed(options, *collectives, watchdog, rank == 0 || options.allRanksPrint);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "collcheck-example-trainer: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, 1); // the other ranks would wait for this one forever
  }
  MPI_Finalize();
  return 0;
}
