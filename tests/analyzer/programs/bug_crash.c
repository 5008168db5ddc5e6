/* Bug: every rank dies between collectives, after a barrier that matched everywhere. `segv`: a
 * null pointer written; `assert`: a failed assert (SIGABRT). */
#include <assert.h>
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  if (argc > 1 && strcmp(argv[1], "assert") == 0)
    assert(argc == 0 && "a failed check between collectives");
  volatile double *grad = (double *)(argc > 99 ? argv : 0);
  grad[0] = 1.0;
  MPI_Allreduce(MPI_IN_PLACE, (double *)grad, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
