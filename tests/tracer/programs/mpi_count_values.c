/* Count reductions whose values take each form of the CapturedValues record (record.h): one
 * integer (its output beside its input, in one record), floats in narrow slots, doubles with
 * fractions and integers beyond 32 bits in wide slots, and a nonblocking one (its inputs alone).
 * Rank r contributes r + 1 (and r + 1.5 for the fractional doubles); the test checks each value. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int count = rank + 1, total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  float floats[4] = {rank + 0.25f, 1, 2, 3}, floatSums[4];
  MPI_Allreduce(floats, floatSums, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double two[2] = {rank + 1.5, 0.5}, twoSums[2];
  MPI_Allreduce(two, twoSums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double three[3] = {rank + 1.5, 0.5, 1e12}, threeSums[3];
  MPI_Allreduce(three, threeSums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  long big[4] = {rank + 1, 1L << 40, 0, -7}, bigSums[4];
  MPI_Allreduce(big, bigSums, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Request request;
  MPI_Iallreduce(&count, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
