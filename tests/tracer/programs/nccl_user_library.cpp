// A shared library that uses NCCL, loaded by dlopen(RTLD_LOCAL) the way Python extension modules
// load theirs: its libnccl is then invisible to dlsym(RTLD_NEXT) from the preload library.
#include <mpi.h>
#include <nccl.h>

extern "C" __attribute__((visibility("default"))) int collcheck_user_allreduce(int calls) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclUniqueId id;
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    return 1;
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess)
    return 2;
  for (int i = 0; i < calls; ++i) {
    double value = rank + i, sum = 0;
    if (ncclAllReduce(&value, &sum, 1, ncclFloat64, ncclSum, comm, nullptr) != ncclSuccess)
      return 3;
    if (sum != size * (size - 1) / 2.0 + size * i)
      return 4;
  }
  return ncclCommDestroy(comm) == ncclSuccess ? 0 : 5;
}
