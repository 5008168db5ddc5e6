/* Bug: rank 1 passes a different signature to one collective. argv[1] says which field: kind,
 * count, datatype, op or root; with argv[2] "half", the upper half of the ranks does (an even
 * split: no majority). MPI may complete, fail or hang: the test kills it after a
 * timeout and analyzes whatever the traces hold. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *field = argc > 1 ? argv[1] : "count";
  int odd = argc > 2 && !strcmp(argv[2], "half") ? rank >= size / 2 : rank == 1;
  float buf[64] = {0};
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(field, "kind") && odd)
    MPI_Bcast(buf, 8, MPI_FLOAT, 0, MPI_COMM_WORLD);
  else if (!strcmp(field, "count"))
    MPI_Allreduce(MPI_IN_PLACE, buf, odd ? 4 : 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(field, "datatype"))
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, odd ? MPI_INT : MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(field, "op"))
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, MPI_FLOAT, odd ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(field, "root"))
    MPI_Bcast(buf, 8, MPI_FLOAT, odd ? 1 : 0, MPI_COMM_WORLD);
  else
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
