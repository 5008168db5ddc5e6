/* The hang watch's subjects. `mpi_pause pause S`: three all-reduces, S seconds of computing, three
 * more (a long pause that is no hang). `mpi_pause skip`: the last rank skips the fourth all-reduce
 * and waits for a message that never comes, while the others wait in the all-reduce (a hang). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int skip = argc > 1 && strcmp(argv[1], "skip") == 0;
  unsigned pause = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
  double x = 1;
  for (int step = 0; step < 6; ++step) {
    if (step == 3 && !skip)
      sleep(pause);
    if (step == 3 && skip && rank == size - 1) {
      MPI_Recv(&x, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      continue;
    }
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
