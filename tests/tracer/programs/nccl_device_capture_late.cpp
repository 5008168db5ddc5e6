// The CUDA driver (its test double) loaded after the tracer has already answered "no driver": an
// MPI count reduction on host memory first, then dlopen of the driver double (RTLD_LOCAL, as a
// framework's plugin would load it: not in the global scope), then an NCCL count reduction with
// "device" buffers on a stream. The tracer must notice the driver at that call and copy the values
// on the stream, not read device memory from the host.
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <dlfcn.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2)
    MPI_Abort(MPI_COMM_WORLD, 2);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int valid = rank + 1, totalValid = 0;
  MPI_Allreduce(&valid, &totalValid, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  void *driver = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    std::fprintf(stderr, "%s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  auto deviceAlloc = reinterpret_cast<void *(*)(size_t)>(dlsym(driver, "collcheckTestDeviceAlloc"));
  auto drain = reinterpret_cast<void (*)(void *)>(dlsym(driver, "collcheckTestStreamDrain"));
  if (!deviceAlloc || !drain)
    MPI_Abort(MPI_COMM_WORLD, 4);

  ncclUniqueId id;
  if (rank == 0)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 5);
  auto *count = static_cast<float *>(deviceAlloc(sizeof(float)));
  auto *total = static_cast<float *>(deviceAlloc(sizeof(float)));
  *count = static_cast<float>(rank + 1);
  auto stream = reinterpret_cast<cudaStream_t>(0x10);
  if (ncclAllReduce(count, total, 1, ncclFloat32, ncclSum, comm, stream) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 6);
  drain(stream);
  std::printf("rank %d total %g\n", rank, *total);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
