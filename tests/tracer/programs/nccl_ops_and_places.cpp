// NCCL calls whose recording depends on more than their arguments' values: the in-place forms of
// AllGather, ReduceScatter, Gather and Scatter (the one buffer is a block of the other, at the
// rank's or the root's offset), and more live PreMulSum operators than the tracer's table holds
// (each with its own scalar, the operator's index). Checks the results, so a wrapper that forwards
// wrongly fails the job. Host buffers: run against the NCCL test double.
#include "tests/tracer/programs/nccl_program.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int ops = argc > 1 ? std::atoi(argv[1]) : 5000;
  ncclComm_t comm = worldComm(rank, size);
  cudaStream_t stream = nullptr;

  // In place: 4 elements per rank, this rank's block at rank * 4.
  const size_t block = 4;
  std::vector<float> all(block * size);
  for (size_t i = 0; i < block; ++i)
    all[rank * block + i] = static_cast<float>(rank + 1);
  CHECK(ncclAllGather(all.data() + rank * block, all.data(), block, ncclFloat32, comm, stream));
  expect(all[(size - 1) * block] == size, "in-place allgather");
  for (float &v : all)
    v = 1.0f;
  CHECK(ncclReduceScatter(all.data(), all.data() + rank * block, block, ncclFloat32, ncclSum, comm,
                          stream));
  expect(all[rank * block] == size, "in-place reducescatter");
  const int root = size - 1;
  std::vector<float> own(block, static_cast<float>(rank + 1));
  all.assign(block * size, 0.0f);
  for (size_t i = 0; i < block; ++i)
    all[rank * block + i] = static_cast<float>(rank + 1);
  // Only the root's receive buffer counts; the others send from their own.
  const float *send = rank == root ? all.data() + root * block : own.data();
  CHECK(ncclGather(send, all.data(), block, ncclFloat32, root, comm, stream));
  if (rank == root)
    expect(all[0] == 1.0f, "in-place gather");
  float *receive = rank == root ? all.data() + root * block : own.data();
  CHECK(ncclScatter(all.data(), receive, block, ncclFloat32, root, comm, stream));
  expect(receive[0] == static_cast<float>(rank + 1), "in-place scatter");

  // Live PreMulSum operators, each scaling by its index.
  std::vector<ncclRedOp_t> premul(static_cast<size_t>(ops));
  for (int i = 0; i < ops; ++i) {
    float scalar = static_cast<float>(i);
    CHECK(
        ncclRedOpCreatePreMulSum(&premul[i], &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  }
  float one = 1.0f, out = 0.0f;
  for (int i = 0; i < ops; ++i) {
    CHECK(ncclAllReduce(&one, &out, 1, ncclFloat32, premul[i], comm, stream));
    expect(out == static_cast<float>(i) * size, "premulsum");
  }
  for (int i = 0; i < ops; ++i)
    CHECK(ncclRedOpDestroy(premul[i], comm));
  CHECK(ncclCommDestroy(comm));
  MPI_Finalize();
  return 0;
}
