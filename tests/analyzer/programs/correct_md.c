/* Correct, and no training job: the shape of a molecular-dynamics code. Every step sums a few
 * energies (double) and the number of atoms that changed domain (int) over the ranks; no
 * annotation, no gradient. The objective checks have nothing to say about such a job. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double energies[3];
  for (int step = 0; step < 20; ++step) {
    int moved = (rank + step) % 3; /* differs by rank, as local atom counts do */
    MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    energies[0] = 0.5 * rank + step; /* kinetic, potential, virial */
    energies[1] = -1.25 * rank;
    energies[2] = 0.1 * step;
    MPI_Allreduce(MPI_IN_PLACE, energies, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double temperature = energies[0] / 3.0;
    MPI_Allreduce(MPI_IN_PLACE, &temperature, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
