/* Bug: the upper half of the ranks starts its two non-blocking collectives in the other order
 * (think: iterating a hash map of buckets). */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  double grad[256] = {0}, loss = 1;
  MPI_Request req[2];
  for (int step = 0; step < 3; ++step)
    MPI_Allreduce(MPI_IN_PLACE, grad, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank < size / 2) {
    MPI_Iallreduce(MPI_IN_PLACE, grad, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    MPI_Ibcast(&loss, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req[1]);
  } else {
    MPI_Ibcast(&loss, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Iallreduce(MPI_IN_PLACE, grad, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[0]);
  }
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
