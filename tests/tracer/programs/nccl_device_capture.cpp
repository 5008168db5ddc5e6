// A count reduction over NCCL with "device" buffers (the CUDA driver test double) on a stream: the
// tracer must capture its input and output by copies on that stream, after the call returned,
// without making the caller wait. Prints how many capture records existed when the call returned
// (must be 0: the stream runs behind) for the test to check, and how many host functions the
// tracer enqueued (one per side: the input's is published before the collective runs).
//
// Built a second time with COLLCHECK_DRIVER_LOADED_LATER (nccl_device_capture_late): the driver
// double is not linked but loaded after the tracer has already answered "no driver": an MPI count
// reduction on host memory first, then dlopen of the library named by argv[1] (RTLD_LOCAL, as a
// framework's plugin would load it: not in the global scope). The tracer must notice the driver
// at the NCCL call and copy on the stream, not read device memory from the host.
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>

#ifdef COLLCHECK_DRIVER_LOADED_LATER
#include <dlfcn.h>
#else
extern "C" void *collcheckTestDeviceAlloc(size_t bytes);
extern "C" void collcheckTestStreamDrain(void *stream);
extern "C" int collcheckTestHostFunctions();
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef COLLCHECK_DRIVER_LOADED_LATER
  if (argc < 2)
    MPI_Abort(MPI_COMM_WORLD, 2);
  int valid = rank + 1, totalValid = 0;
  MPI_Allreduce(&valid, &totalValid, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  void *driver = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    std::fprintf(stderr, "%s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  auto deviceAlloc = reinterpret_cast<void *(*)(size_t)>(dlsym(driver, "collcheckTestDeviceAlloc"));
  auto drain = reinterpret_cast<void (*)(void *)>(dlsym(driver, "collcheckTestStreamDrain"));
  if (!deviceAlloc || !drain)
    MPI_Abort(MPI_COMM_WORLD, 2);
#else
  auto deviceAlloc = collcheckTestDeviceAlloc;
  auto drain = collcheckTestStreamDrain;
#endif
  ncclUniqueId id;
  if (rank == 0)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 3);
  auto *count = static_cast<float *>(deviceAlloc(sizeof(float)));
  auto *total = static_cast<float *>(deviceAlloc(sizeof(float)));
  *count = static_cast<float>(rank + 1);
  auto stream = reinterpret_cast<cudaStream_t>(0x10);
  if (ncclAllReduce(count, total, 1, ncclFloat32, ncclSum, comm, stream) != ncclSuccess)
    MPI_Abort(MPI_COMM_WORLD, 4);
  drain(stream);
  std::printf("rank %d total %g\n", rank, *total);
#ifndef COLLCHECK_DRIVER_LOADED_LATER
  std::printf("rank %d host functions %d\n", rank, collcheckTestHostFunctions());
#endif
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
