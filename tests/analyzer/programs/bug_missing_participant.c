/* Bug: the last rank skips one barrier (a rank-dependent early exit) and finalizes; the others
 * wait in the barrier until the test kills the job. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double x = 1;
  for (int step = 0; step < 8; ++step) {
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (step == 5 && rank == size - 1)
      break; /* "no more data on this rank" */
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
