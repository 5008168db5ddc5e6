// Three findings, one per line marked; used by the CLI tests (exit status, SARIF, changed lines).
#include <mpi.h>

double averaged_mean(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid;
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

double unguarded(double total, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  return total / N; // expect: unguarded-reduced-count-division
}

void rank_zero(double *grad, int len, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Allreduce(MPI_IN_PLACE, grad, len, MPI_DOUBLE, MPI_SUM, comm); // expect: collective-not-reached-by-all-ranks
}
