// NOLINTBEGIN without NOLINTEND: reported, and it silences nothing.
#include <mpi.h>

// NOLINTBEGIN(uncompensated-mean)
double averaged_mean(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid;
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}
