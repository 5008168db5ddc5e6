// Issues every NCCL call the tracer records, on communicators created every way the tracer knows,
// with rank-dependent but known arguments; checks the results too, so a wrapper that forwards
// wrongly fails the job. Buffers are host memory: run against the NCCL test double here, against
// the real library (with device buffers) on a GPU machine.
#include "tests/tracer/programs/nccl_program.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclComm_t comm = worldComm(rank, size);
  cudaStream_t stream = nullptr;

  std::vector<float> send(64), recv(64 * 8);
  for (int i = 0; i < 64; ++i)
    send[i] = static_cast<float>(rank + 1);
  CHECK(ncclAllReduce(send.data(), recv.data(), 8, ncclFloat32, ncclSum, comm, stream));
  expect(recv[0] == size * (size + 1) / 2.0f, "allreduce sum");
  CHECK(ncclAllReduce(send.data(), recv.data(), 8, ncclFloat32, ncclAvg, comm, stream));
  expect(recv[0] == (size + 1) / 2.0f, "allreduce avg");
  CHECK(ncclReduce(send.data(), recv.data(), 4, ncclFloat32, ncclMax, 1, comm, stream));
  CHECK(ncclBroadcast(send.data(), recv.data(), 5, ncclFloat32, 0, comm, stream));
  expect(recv[0] == 1.0f, "broadcast");
  CHECK(ncclBcast(send.data(), 6, ncclFloat32, 1, comm, stream));
  expect(send[0] == 2.0f, "bcast");
  for (int i = 0; i < 64; ++i)
    send[i] = static_cast<float>(rank + 1);
  CHECK(ncclAllGather(send.data(), recv.data(), 3, ncclFloat32, comm, stream));
  CHECK(ncclReduceScatter(send.data(), recv.data(), 2, ncclFloat32, ncclMin, comm, stream));
  CHECK(ncclAlltoAll(send.data(), recv.data(), 2, ncclFloat32, comm, stream));
  CHECK(ncclGather(send.data(), recv.data(), 3, ncclFloat32, 0, comm, stream));
  CHECK(ncclScatter(send.data(), recv.data(), 3, ncclFloat32, 1, comm, stream));

  // A ring of send/recv inside a group.
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(ncclGroupStart());
  CHECK(ncclSend(send.data(), 7, ncclFloat32, next, comm, stream));
  CHECK(ncclRecv(recv.data(), 7, ncclFloat32, prev, comm, stream));
  CHECK(ncclGroupEnd());
  expect(recv[0] == static_cast<float>(prev + 1), "ring");

  // PreMulSum with a host scalar (recorded) and with a "device" scalar (not readable: flagged).
  float half = 0.5f;
  ncclRedOp_t premul, devicePremul;
  CHECK(ncclRedOpCreatePreMulSum(&premul, &half, ncclFloat32, ncclScalarHostImmediate, comm));
  half = 7.0f; // the tracer read it when the operator was created
  CHECK(ncclAllReduce(send.data(), recv.data(), 8, ncclFloat32, premul, comm, stream));
  expect(recv[0] == size * (size + 1) / 4.0f, "premulsum");
  CHECK(ncclRedOpDestroy(premul, comm));
  float quarter = 0.25f;
  CHECK(ncclRedOpCreatePreMulSum(&devicePremul, &quarter, ncclFloat32, ncclScalarDevice, comm));
  CHECK(ncclAllReduce(send.data(), recv.data(), 8, ncclFloat32, devicePremul, comm, stream));
  CHECK(ncclRedOpDestroy(devicePremul, comm));

  // Split by parity, and a second communicator from another unique id with a config.
  ncclComm_t split;
  CHECK(ncclCommSplit(comm, rank % 2, rank, &split, nullptr));
  CHECK(ncclAllReduce(send.data(), recv.data(), 1, ncclFloat32, ncclSum, split, stream));
  ncclUniqueId id2;
  if (rank == 0)
    CHECK(ncclGetUniqueId(&id2));
  MPI_Bcast(&id2, sizeof id2, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclComm_t second;
  CHECK(ncclCommInitRankConfig(&second, size, id2, rank, &config));
  CHECK(ncclAllReduce(send.data(), recv.data(), 2, ncclFloat32, ncclSum, second, stream));

  CHECK(ncclCommFinalize(second));
  CHECK(ncclCommDestroy(second));
  CHECK(ncclCommDestroy(split));
  CHECK(ncclCommAbort(comm));
  MPI_Finalize();
  return 0;
}
