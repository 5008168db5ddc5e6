/* Communicators the tracer does not see created (MPI_Cart_create, MPI_Cart_sub), first used in a
 * different order on different ranks: on a 2 x 2 grid, the ranks of row 0 use their row before
 * their column, the others only their column, then everyone uses both. Each member must give each
 * communicator the same id (the tracer test compares them through the member lists). */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int dims[2] = {2, 2}, periods[2] = {0, 0}, keepColumn[2] = {0, 1}, keepRow[2] = {1, 0};
  MPI_Comm grid, row, column;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Cart_sub(grid, keepColumn, &row);
  MPI_Cart_sub(grid, keepRow, &column);
  int gridRank, coords[2];
  MPI_Comm_rank(grid, &gridRank);
  MPI_Cart_coords(grid, gridRank, 2, coords);
  double value = gridRank;
  if (coords[0] == 0)
    MPI_Bcast(&value, 1, MPI_DOUBLE, 0, row);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, column);
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, row);
  MPI_Barrier(grid);
  MPI_Comm_free(&row);
  MPI_Comm_free(&column);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
