/* Gather, scatter, allgather and alltoall pass a count and a type for each side of the exchange;
 * MPI has what a rank receives from each peer match, in type signature, what that peer sends it.
 * argv[1]:
 * - "equal": every call is legal MPI, the two sides passed through different types of one
 *   signature (2 x MPI_INT against 1 x contiguous(2, MPI_INT)), blocking, nonblocking and with
 *   MPI_IN_PLACE; the analyzer must report nothing;
 * - "gather": every rank sends 2 ints, the root receives 1 x contiguous(3, MPI_INT) from each;
 * - "scatter": the root sends 2 ints to each rank, every rank receives 3;
 * - "allgather", "alltoall": every rank sends 2 ints to each rank and receives 3 from each.
 * Each mismatch has the receivers expect more than is sent, which MPI delivers without a
 * truncation error and without a hang (every rank of one side passes the same count), so the job
 * ends; errors return, and the test analyzes the traces. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *mode = argc > 1 ? argv[1] : "equal";
  MPI_Datatype pair, triple;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int send[64] = {0};
  int *all = calloc((size_t)size * 64, sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "equal")) {
    /* Named against derived, either way round, on each of the four. */
    MPI_Gather(send, 2, MPI_INT, all, 1, pair, 0, MPI_COMM_WORLD);
    MPI_Gather(send, 1, pair, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(all, 2, MPI_INT, send, 1, pair, 0, MPI_COMM_WORLD);
    MPI_Scatter(all, 1, pair, send, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(send, 1, pair, all, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(send, 2, MPI_INT, all, 1, pair, MPI_COMM_WORLD);
    MPI_Alltoall(all, 2, MPI_INT, all + 32 * size, 1, pair, MPI_COMM_WORLD);
    MPI_Alltoall(all, 1, pair, all + 32 * size, 2, MPI_INT, MPI_COMM_WORLD);
    /* Nonblocking. */
    MPI_Request request;
    MPI_Igather(send, 2, MPI_INT, all, 1, pair, 0, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Iallgather(send, 1, pair, all, 2, MPI_INT, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    /* MPI_IN_PLACE: the ignored side's arguments are anything (here a count that would not
     * match), and are not compared. */
    if (rank == 0)
      MPI_Gather(MPI_IN_PLACE, 7, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else
      MPI_Gather(send, 2, MPI_INT, all, 5, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
      MPI_Scatter(all, 2, MPI_INT, MPI_IN_PLACE, 9, MPI_INT, 0, MPI_COMM_WORLD);
    else
      MPI_Scatter(all, 6, MPI_INT, send, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(MPI_IN_PLACE, 4, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "gather")) {
    MPI_Gather(send, 2, MPI_INT, all, 1, triple, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "scatter")) {
    MPI_Scatter(all, 2, MPI_INT, send, 3, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "allgather")) {
    MPI_Allgather(send, 2, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "alltoall")) {
    MPI_Alltoall(all, 2, MPI_INT, all + 32 * size, 3, MPI_INT, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&pair);
  MPI_Type_free(&triple);
  free(all);
  MPI_Finalize();
  return 0;
}
