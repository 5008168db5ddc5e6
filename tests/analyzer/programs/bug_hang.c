/* Bug: a cross-communicator deadlock. The last rank enters a barrier on a communicator it shares
 * with rank 0, while rank 0 and the others are in an all-reduce on the world communicator. The
 * job hangs until the test kills it. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm pair;
  int member = rank == 0 || rank == size - 1;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &pair);
  double x = 1;
  for (int step = 0; step < 4; ++step)
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == size - 1)
    MPI_Barrier(pair);
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    MPI_Barrier(pair);
  MPI_Finalize();
  return 0;
}
