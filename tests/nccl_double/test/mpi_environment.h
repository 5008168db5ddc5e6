// The MPI job around the double's tests: one NCCL communicator over all ranks, made the way
// applications make it (rank 0's unique id, broadcast over MPI).
#pragma once

#include <nccl.h>

#include <mpi.h>

namespace collcheck::nccl_double_test {

int worldRank();
int worldSize();
// The communicator over every rank of the job; NCCL rank == MPI rank.
ncclComm_t worldComm();
// A fresh communicator over every rank, NCCL rank `rank` (the caller destroys it).
ncclComm_t newComm(int rank, int size, MPI_Comm over = MPI_COMM_WORLD);

} // namespace collcheck::nccl_double_test
