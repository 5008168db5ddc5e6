/* Bug: an invalid argument to a collective, which MPI rejects (by default aborting the job).
 * argv[1]: `null`: every rank calls an all-reduce on MPI_COMM_NULL; `count`: rank 1 passes a
 * count of -1; `root`: every rank broadcasts from root `size`; `handle`: every rank passes a
 * handle that is no communicator (a block of 0xff bytes, which Open MPI tells from a
 * communicator without touching anything else); `type`: every rank passes MPI_DATATYPE_NULL. */
#include <mpi.h>
#include <string.h>

static unsigned char junk[8192];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *what = argc > 1 ? argv[1] : "null";
  float buf[8] = {0};
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(what, "null")) {
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL);
  } else if (!strcmp(what, "count")) {
    MPI_Allreduce(MPI_IN_PLACE, buf, rank == 1 ? -1 : 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(what, "root")) {
    MPI_Bcast(buf, 8, MPI_FLOAT, size, MPI_COMM_WORLD);
  } else if (!strcmp(what, "type")) {
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(what, "handle")) {
    memset(junk, 0xff, sizeof junk);
    MPI_Allreduce(MPI_IN_PLACE, buf, 8, MPI_FLOAT, MPI_SUM, (MPI_Comm)(void *)junk);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
