/* Dies of a signal after three all-reduces: `segv` (a null write), `abort`, or `handled` (a
 * SIGSEGV handler of the application's own, which the tracer must leave in place). */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void own_handler(int signal) {
  (void)signal;
  _exit(42);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double x = 1;
  for (int step = 0; step < 3; ++step)
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const char *mode = argc > 1 ? argv[1] : "segv";
  if (strcmp(mode, "abort") == 0)
    abort();
  if (strcmp(mode, "handled") == 0)
    signal(SIGSEGV, own_handler);
  volatile double *p = (double *)(argc > 99 ? argv : 0);
  *p = x;
  MPI_Finalize();
  return 0;
}
