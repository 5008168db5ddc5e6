// GoogleTest in every rank of an mpirun job. Tests use EXPECT_* only (never ASSERT_*), so that
// every rank issues the same sequence of collectives even when a check fails; mpirun then fails
// when any rank failed. Ranks other than 0 print failures only.
#include "tests/nccl_double/test/mpi_environment.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace collcheck::nccl_double_test {
namespace {

ncclComm_t world = nullptr;

class FailurePrinter : public testing::EmptyTestEventListener {
  void OnTestPartResult(const testing::TestPartResult &result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", worldRank(), result.file_name(),
                   result.line_number(), result.summary());
  }
};

} // namespace

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

ncclComm_t worldComm() { return world; }

ncclComm_t newComm(int rank, int size, MPI_Comm over) {
  ncclUniqueId id;
  int overRank = 0;
  MPI_Comm_rank(over, &overRank);
  if (overRank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, over);
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess) {
    std::fprintf(stderr, "ncclCommInitRank failed: %s\n", ncclGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return comm;
}

} // namespace collcheck::nccl_double_test

int main(int argc, char **argv) {
  using namespace collcheck::nccl_double_test;
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  if (worldRank() != 0) {
    testing::TestEventListeners &listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter);
  }
  world = newComm(worldRank(), worldSize());
  const int failed = RUN_ALL_TESTS();
  ncclCommDestroy(world);
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}
