// NCCL over the test double (host memory, data moved over PMPI), under the tracer. argv[1]:
//   correct    sum all-reduce, a ring of sends and receives, PreMulSum with one scalar: clean
//              (but for a note that its average of per-rank values cannot be verified)
//   premulsum  rank 1 pre-multiplies by another scalar than the others
//   sendrecv   rank 1 posts a receive half the size of what rank 0 sends it
#include <mpi.h>
#include <nccl.h>

#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "correct";
  ncclUniqueId id;
  if (rank == 0)
    ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  ncclCommInitRank(&comm, size, id, rank);
  const size_t count = 256;
  std::vector<float> grad(count, 1.0f), in(count, 0.0f);
  for (int step = 0; step < 3; ++step)
    ncclAllReduce(grad.data(), grad.data(), count, ncclFloat, ncclSum, comm, nullptr);

  float scalar = 1.0f / static_cast<float>(size);
  if (!std::strcmp(mode, "premulsum") && rank == 1)
    scalar = 0.5f; // computed from a stale world size on this rank
  ncclRedOp_t mean;
  ncclRedOpCreatePreMulSum(&mean, &scalar, ncclFloat, ncclScalarHostImmediate, comm);
  ncclAllReduce(grad.data(), grad.data(), count, ncclFloat, mean, comm, nullptr);
  ncclRedOpDestroy(mean, comm);

  int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  size_t expected = !std::strcmp(mode, "sendrecv") && rank == 1 ? count / 2 : count;
  ncclGroupStart();
  ncclSend(grad.data(), count, ncclFloat, next, comm, nullptr);
  ncclRecv(in.data(), expected, ncclFloat, previous, comm, nullptr);
  ncclGroupEnd();
  ncclAllReduce(grad.data(), grad.data(), count, ncclFloat, ncclSum, comm, nullptr);
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
