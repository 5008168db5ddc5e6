/* Issues collectives until it is killed: the kill test's victim. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double value = 1.0, sum = 0.0;
  for (long i = 0;; ++i) {
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (i % 16 == 0)
      MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
}
