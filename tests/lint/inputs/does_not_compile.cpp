// A file that does not compile: an unknown header, an undeclared name and a syntax error. The lint
// reports the errors as notes and still finds the local mean averaged in the function that parses.
#include "no_such_header.h"
#include <mpi.h>

int broken(int x) { return x / undeclared_value; }

int also_broken() {
  int y = ;
  return y + "text";
}

double averaged_mean(double loss_sum, int n_valid, MPI_Comm comm) {
  double mean = loss_sum / n_valid;
  double total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}
