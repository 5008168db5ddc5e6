/* Correct: v-collectives over a derived datatype (a contiguous triple of ints), on both sides and
 * on one side only. The tracer counts such a type by its signature, in ints, so the counts and
 * totals of both sides add up in the same units whichever type each side passed. The analyzer must
 * report nothing. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int send[3] = {rank, rank, rank};
  int *all = malloc(sizeof(int) * 3 * size), *back = malloc(sizeof(int) * 3 * size);
  int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) {
    counts[i] = 1;
    displs[i] = i;
  }
  for (int step = 0; step < 3; ++step) {
    MPI_Gatherv(send, 1, triple, all, counts, displs, triple, 0, MPI_COMM_WORLD);
    MPI_Scatterv(all, counts, displs, triple, send, 1, triple, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(send, 1, triple, all, counts, displs, triple, MPI_COMM_WORLD);
    MPI_Alltoallv(all, counts, displs, triple, back, counts, displs, triple, MPI_COMM_WORLD);
  }
  /* One side in ints, the other in triples: the same type signature, legal MPI. */
  int *threes = malloc(sizeof(int) * size), *offsets = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) {
    threes[i] = 3;
    offsets[i] = 3 * i;
  }
  MPI_Gatherv(send, 3, MPI_INT, all, counts, displs, triple, 0, MPI_COMM_WORLD);
  MPI_Scatterv(all, counts, displs, triple, send, 3, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(send, 3, MPI_INT, all, counts, displs, triple, MPI_COMM_WORLD);
  MPI_Alltoallv(all, threes, offsets, MPI_INT, back, counts, displs, triple, MPI_COMM_WORLD);
  free(threes);
  free(offsets);
  MPI_Type_free(&triple);
  free(all);
  free(back);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
