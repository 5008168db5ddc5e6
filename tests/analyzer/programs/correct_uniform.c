/* Correct: collectives under rank-dependent but uniform conditions, the same collective in both
 * branches of a rank-dependent if, a per-parity sub-communicator, non-blocking collectives. The
 * analyzer must report nothing. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double grad[64] = {0}, metric = rank, total = 0;
  MPI_Comm parity;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
  for (int step = 0; step < 20; ++step) {
    if (rank == 0) /* both branches issue the same broadcast */
      MPI_Bcast(&metric, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else
      MPI_Bcast(&metric, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, grad, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* rank-dependent condition, made uniform by the all-reduce above */
    double flag = step % 3 == 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (flag > 0)
      MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0) /* only the even communicator's members, on their communicator */
      MPI_Allreduce(&metric, &total, 1, MPI_DOUBLE, MPI_SUM, parity);
    else
      MPI_Reduce(&metric, &total, 1, MPI_DOUBLE, MPI_SUM, 0, parity);
    MPI_Request req;
    MPI_Iallreduce(MPI_IN_PLACE, grad, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  int counts[16], displs[16], mine = rank + 1, all[64];
  for (int r = 0; r < size && r < 16; ++r) {
    counts[r] = r + 1;
    displs[r] = r == 0 ? 0 : displs[r - 1] + counts[r - 1];
  }
  int sendbuf[16] = {0};
  MPI_Gatherv(sendbuf, mine, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(sendbuf, mine, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  MPI_Comm_free(&parity);
  MPI_Finalize();
  return 0;
}
