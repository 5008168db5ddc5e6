/* Issues collectives and exits without MPI_Finalize (as a job whose rank calls exit() on an error
 * path does): the trace must still be complete. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double one = 1, sum = 0;
  for (int i = 0; i < 50; ++i)
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
  exit(0);
}
