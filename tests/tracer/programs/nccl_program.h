// What the NCCL test programs share: a failed NCCL call or a wrong result ends the whole job (so a
// wrapper that forwards wrongly fails the test), and a communicator over MPI_COMM_WORLD.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <cstdio>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    ncclResult_t rc_ = (call);                                                                     \
    if (rc_ != ncclSuccess) {                                                                      \
      std::fprintf(stderr, "%s failed: %d\n", #call, rc_);                                         \
      MPI_Abort(MPI_COMM_WORLD, 3);                                                                \
    }                                                                                              \
  } while (0)

inline void expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "wrong result: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
}

// NCCL rank r is MPI_COMM_WORLD rank r: rank 0 makes the id and broadcasts it.
inline ncclComm_t worldComm(int rank, int size) {
  ncclUniqueId id;
  if (rank == 0)
    CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, size, id, rank));
  return comm;
}
