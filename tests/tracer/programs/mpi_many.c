/* N all-reduces whose results depend on every call: prints one checksum, so a traced and an
 * untraced run can be compared. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 1000;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double acc = rank + 1;
  for (long i = 0; i < n; ++i) {
    double in = acc * 0.5 + (double)i, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    acc = out / 1000.0;
  }
  if (rank == 0)
    printf("checksum %.17g\n", acc);
  MPI_Finalize();
  return 0;
}
