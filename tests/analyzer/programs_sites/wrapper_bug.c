/* A bug inside the application's own wrapper of MPI_Allreduce, which two places call: the
 * wrapper picks the reduction from a rank-local value, so at one of the two calls the ranks pass
 * different operations (reduce-op-mismatch, reported at the wrapper's line, from the line that
 * called it). Then the ranks take two paths to another wrapper, with two datatypes of one size
 * (datatype-mismatch: each rank's report names the wrapper's line and its own caller's line).
 * Neither mismatch stops MPI, so the job ends normally. Built with frame pointers, so that the
 * tracer can name a wrapper's caller; the functions are kept out of line, as a wrapper in a file
 * of its own is. The test finds the lines by the SITE markers, not by
 * numbers written here. */
#include <mpi.h>

__attribute__((noinline)) static void reduce_flags(int *value) {
  MPI_Op op = *value > 0 ? MPI_MAX : MPI_SUM; /* the bug: a rank-local choice */
  MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INT, op, MPI_COMM_WORLD); /* SITE:wrapper */
}

__attribute__((noinline)) static void agree_on_one(void) {
  int v = 1;
  reduce_flags(&v); /* every rank passes 1: every rank takes MPI_MAX */
}

__attribute__((noinline)) static void agree_on_rank(int rank) {
  int v = rank;
  reduce_flags(&v); /* SITE:caller rank 0 passes 0 (MPI_SUM), the others MPI_MAX */
}

__attribute__((noinline)) static void sum_one(void *x, MPI_Datatype type) {
  MPI_Allreduce(MPI_IN_PLACE, x, 1, type, MPI_SUM, MPI_COMM_WORLD); /* SITE:typed */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  agree_on_one();
  agree_on_rank(rank);
  if (rank == 0) {
    int x = 1;
    sum_one(&x, MPI_INT); /* SITE:first */
  } else {
    unsigned x = 1;
    sum_one(&x, MPI_UNSIGNED); /* SITE:others */
  }
  MPI_Finalize();
  return 0;
}
