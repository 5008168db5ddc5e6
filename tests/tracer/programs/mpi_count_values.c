/* Count reductions whose values take each form the tracer records (record.h): one integer (its
 * input and output in the call's own record), floats in narrow slots, doubles with fractions and
 * integers beyond 32 bits in wide slots of CapturedValues records, a nonblocking one (its input
 * alone), and one-element ones whose output does not fit the call's record (a fraction, a negative
 * number: a CapturedValues record for the output), and a pair of ints (inputs and outputs in one
 * record). Rank r contributes r + 1 (and r + 1.5 for the fractional doubles); the test checks each
 * value. */
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
  double fraction = rank + 0.25, fractionSum = 0;
  MPI_Allreduce(&fraction, &fractionSum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int negative = -(rank + 1), negativeSum = 0;
  MPI_Allreduce(&negative, &negativeSum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int pair[2] = {rank + 1, 10 * (rank + 1)}, pairSums[2];
  MPI_Allreduce(pair, pairSums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
