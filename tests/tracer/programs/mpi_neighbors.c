/* The neighborhood collectives, blocking and nonblocking, on 4 processes: on a periodic 1-D grid
 * (MPI_Cart_create: two neighbors each, every send count 2 per neighbor) and on a chain
 * (MPI_Dist_graph_create_adjacent: rank r receives from r-1 and sends to r+1, so the ends have one
 * side only). With the argument "skip", the processes then meet on a graph in which rank 3 has no
 * neighbors: rank 3 skips its neighborhood all-gather (nobody waits for it, the job ends) and all
 * four meet at a barrier there. */
#include <mpi.h>
#include <string.h>

#define PROCESSES 4

static void onGrid(MPI_Comm grid) {
  int send[4] = {1, 2, 3, 4}, recv[8] = {0};
  int counts[2] = {2, 2}, displs[2] = {0, 2};
  MPI_Aint bytes[2] = {0, 2 * sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, grid);
  MPI_Neighbor_allgatherv(send, 2, MPI_INT, recv, counts, displs, MPI_INT, grid);
  MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, grid);
  MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, grid);
  MPI_Neighbor_alltoallw(send, counts, bytes, types, recv, counts, bytes, types, grid);
  MPI_Request requests[5];
  MPI_Ineighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, grid, &requests[0]);
  MPI_Waitall(1, requests, MPI_STATUSES_IGNORE);
  MPI_Ineighbor_allgatherv(send, 2, MPI_INT, recv, counts, displs, MPI_INT, grid, &requests[1]);
  MPI_Waitall(1, &requests[1], MPI_STATUSES_IGNORE);
  MPI_Ineighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, grid, &requests[2]);
  MPI_Waitall(1, &requests[2], MPI_STATUSES_IGNORE);
  MPI_Ineighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, grid,
                          &requests[3]);
  MPI_Waitall(1, &requests[3], MPI_STATUSES_IGNORE);
  MPI_Ineighbor_alltoallw(send, counts, bytes, types, recv, counts, bytes, types, grid,
                          &requests[4]);
  MPI_Waitall(1, &requests[4], MPI_STATUSES_IGNORE);
}

/* Rank r sends 3 ints to r+1 (alltoallv) and one int and one double to it (alltoallw). */
static void onChain(MPI_Comm chain) {
  int send[3] = {1, 2, 3}, recv[3] = {0}, counts[1] = {3}, displs[1] = {0};
  MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, chain);
  struct {
    int i;
    double d;
  } out = {1, 2.0}, in;
  int ones[1] = {1};
  MPI_Aint at[1] = {0}, atDouble[1] = {(MPI_Aint)((char *)&out.d - (char *)&out)};
  MPI_Datatype intType[1] = {MPI_INT}, doubleType[1] = {MPI_DOUBLE};
  MPI_Neighbor_alltoallw(&out, ones, at, intType, &in, ones, at, intType, chain);
  MPI_Neighbor_alltoallw(&out, ones, atDouble, doubleType, &in, ones, atDouble, doubleType, chain);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != PROCESSES)
    MPI_Abort(MPI_COMM_WORLD, 2);
  int dims[1] = {PROCESSES}, periods[1] = {1};
  MPI_Comm grid, chain;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &grid);
  onGrid(grid);
  /* Weights of 1 rather than MPI_UNWEIGHTED, a sentinel address the compiler takes for an array
   * too short to read. */
  int from = rank - 1, to = rank + 1, weights[2] = {1, 1};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, rank > 0, &from, weights, to < PROCESSES, &to,
                                 weights, MPI_INFO_NULL, 0, &chain);
  onChain(chain);
  if (argc > 1 && strcmp(argv[1], "skip") == 0) {
    /* Ranks 0-2 a ring, rank 3 alone. */
    int ring[2] = {(rank + 2) % 3, (rank + 1) % 3}, degree = rank < 3 ? 2 : 0;
    MPI_Comm lonely;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, degree, ring, weights, degree, ring, weights,
                                   MPI_INFO_NULL, 0, &lonely);
    int value = rank, gathered[2];
    if (rank != 3)
      MPI_Neighbor_allgather(&value, 1, MPI_INT, gathered, 1, MPI_INT, lonely);
    MPI_Barrier(lonely);
    MPI_Comm_free(&lonely);
  }
  MPI_Comm_free(&chain);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
