/* Communicators whose identity the tracer must not confuse: two made by MPI_Comm_create_group from
 * the same group and tag (each its own communicator), and one the library may place at the address
 * of a communicator ended by MPI_Comm_disconnect (a Cartesian grid, which the tracer first meets
 * in a call). Prints the two addresses of the second case. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Group everyone;
  MPI_Comm_group(MPI_COMM_WORLD, &everyone);
  MPI_Comm first, second;
  MPI_Comm_create_group(MPI_COMM_WORLD, everyone, 7, &first);
  MPI_Comm_create_group(MPI_COMM_WORLD, everyone, 7, &second);
  MPI_Group_free(&everyone);
  MPI_Barrier(first);
  MPI_Barrier(second);
  MPI_Barrier(first);

  MPI_Comm alone, grid;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone);
  MPI_Barrier(alone);
  void *ended = (void *)alone;
  MPI_Comm_disconnect(&alone);
  int size, dims[1] = {0}, periods[1] = {0};
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  dims[0] = size;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &grid);
  MPI_Barrier(grid);
  printf("ended %p grid %p\n", ended, (void *)grid);
  MPI_Comm_free(&grid);
  MPI_Comm_free(&first);
  MPI_Comm_free(&second);
  MPI_Finalize();
  return 0;
}
