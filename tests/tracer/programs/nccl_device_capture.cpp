// A count reduction over NCCL with "device" buffers (the CUDA driver test double) on a stream: the
// tracer must capture its input and output by copies on that stream, after the call returned,
// without making the caller wait. Prints how many capture records existed when the call returned
// (must be 0: the stream runs behind) for the test to check.
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>

extern "C" void *collcheckTestDeviceAlloc(size_t bytes);
extern "C" void collcheckTestStreamDrain(void *stream);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclUniqueId id;
  if (rank == 0)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 3);
  auto *count = static_cast<float *>(collcheckTestDeviceAlloc(sizeof(float)));
  auto *total = static_cast<float *>(collcheckTestDeviceAlloc(sizeof(float)));
  *count = static_cast<float>(rank + 1);
  auto stream = reinterpret_cast<cudaStream_t>(0x10);
  if (ncclAllReduce(count, total, 1, ncclFloat32, ncclSum, comm, stream) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 4);
  collcheckTestStreamDrain(stream);
  std::printf("rank %d total %g\n", rank, *total);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
