/* An intercommunicator between world rank 0 and world ranks 1-3: an allgatherv and a gatherv on it,
 * whose count arrays have one entry per member of the remote group (allocated to that length
 * exactly, so that reading past it is caught under the address sanitizer), and a broadcast from
 * world rank 1 (MPI_ROOT there, MPI_PROC_NULL at ranks 2-3). A correct program: run on 4 ranks. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int color = rank == 0 ? 0 : 1;
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, 0, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter);
  int remote;
  MPI_Comm_remote_size(inter, &remote);
  int send[3] = {rank, rank, rank};
  int *counts = malloc(sizeof(int) * (size_t)remote),
      *displs = malloc(sizeof(int) * (size_t)remote);
  int *received = malloc(sizeof(int) * 3 * (size_t)remote);
  for (int i = 0; i < remote; ++i) {
    counts[i] = 3;
    displs[i] = 3 * i;
  }
  MPI_Allgatherv(send, 3, MPI_INT, received, counts, displs, MPI_INT, inter);
  /* Group 1 sends 3 each to world rank 0, the root of group 0. */
  if (color == 0)
    MPI_Gatherv(NULL, 0, MPI_INT, received, counts, displs, MPI_INT, MPI_ROOT, inter);
  else
    MPI_Gatherv(send, 3, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter);
  /* World rank 1, rank 0 of group 1, broadcasts to group 0. */
  if (color == 0)
    MPI_Bcast(send, 3, MPI_INT, 0, inter);
  else
    MPI_Bcast(send, 3, MPI_INT, rank == 1 ? MPI_ROOT : MPI_PROC_NULL, inter);
  free(counts);
  free(displs);
  free(received);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return 0;
}
