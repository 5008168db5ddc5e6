// No findings: the sum of local sums divided by the all-reduced count.
#include <mpi.h>

double global_mean(double loss_sum, long n, MPI_Comm comm) {
  double sums[2] = {loss_sum, static_cast<double>(n)}, global[2] = {0.0, 0.0};
  MPI_Allreduce(sums, global, 2, MPI_DOUBLE, MPI_SUM, comm);
  return global[1] > 0 ? global[0] / global[1] : 0.0;
}
