/* Issues every MPI collective the tracer records, blocking and nonblocking, on MPI_COMM_WORLD and
 * on derived communicators, with rank-dependent but known arguments. The tracer test checks each
 * record against the argument values written here. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { N = 4 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm w = MPI_COMM_WORLD;
  double send[64], recv[256];
  int counts[16], displs[16], pair[16]; /* pair[i]: what this rank and rank i exchange */
  for (int i = 0; i < 64; ++i)
    send[i] = rank + i;
  for (int i = 0; i < size; ++i) {
    counts[i] = i + 1;
    displs[i] = i * 8;
    pair[i] = rank + i + 1;
  }
  MPI_Datatype types[16];
  for (int i = 0; i < size; ++i)
    types[i] = MPI_DOUBLE;

  MPI_Barrier(w);
  MPI_Bcast(send, 3, MPI_DOUBLE, 1, w);
  MPI_Reduce(send, recv, 5, MPI_DOUBLE, MPI_SUM, 0, w);
  float fsend[8], frecv[8];
  for (int i = 0; i < 8; ++i)
    fsend[i] = (float)(rank + i);
  MPI_Allreduce(fsend, frecv, 7, MPI_FLOAT, MPI_MAX, w);
  MPI_Gather(send, 2, MPI_INT, recv, 2, MPI_INT, 0, w);
  MPI_Gatherv(send, rank + 1, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, 0, w);
  MPI_Scatter(send, 2, MPI_LONG, recv, 2, MPI_LONG, 1, w);
  MPI_Scatterv(send, counts, displs, MPI_DOUBLE, recv, rank + 1, MPI_DOUBLE, 1, w);
  MPI_Allgather(send, 3, MPI_SHORT, recv, 3, MPI_SHORT, w);
  MPI_Allgatherv(send, rank + 1, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, w);
  MPI_Alltoall(send, 2, MPI_DOUBLE, recv, 2, MPI_DOUBLE, w);
  MPI_Alltoallv(send, pair, displs, MPI_DOUBLE, recv, pair, displs, MPI_DOUBLE, w);
  {
    int wd[16];
    for (int i = 0; i < size; ++i)
      wd[i] = displs[i] * (int)sizeof(double);
    MPI_Alltoallw(send, pair, wd, types, recv, pair, wd, types, w);
  }
  MPI_Reduce_scatter(send, recv, counts, MPI_DOUBLE, MPI_MIN, w);
  MPI_Reduce_scatter_block(send, recv, 2, MPI_DOUBLE, MPI_PROD, w);
  MPI_Scan(send, recv, 4, MPI_INT, MPI_SUM, w);
  MPI_Exscan(send, recv, 4, MPI_INT, MPI_SUM, w);
  MPI_Allreduce(MPI_IN_PLACE, send, 1, MPI_DOUBLE, MPI_SUM, w);

  /* Nonblocking forms, completed together. */
  MPI_Request req[17];
  double nsend[17][64], nrecv[17][256];
  int k = 0;
  MPI_Ibarrier(w, &req[k++]);
  MPI_Ibcast(nsend[k], 3, MPI_DOUBLE, 0, w, &req[k]), ++k;
  MPI_Ireduce(nsend[k], nrecv[k], 5, MPI_DOUBLE, MPI_SUM, 0, w, &req[k]), ++k;
  MPI_Iallreduce(nsend[k], nrecv[k], 7, MPI_DOUBLE, MPI_SUM, w, &req[k]), ++k;
  MPI_Igather(nsend[k], 2, MPI_INT, nrecv[k], 2, MPI_INT, 0, w, &req[k]), ++k;
  MPI_Igatherv(nsend[k], rank + 1, MPI_DOUBLE, nrecv[k], counts, displs, MPI_DOUBLE, 0, w, &req[k]),
      ++k;
  MPI_Iscatter(nsend[k], 2, MPI_LONG, nrecv[k], 2, MPI_LONG, 1, w, &req[k]), ++k;
  MPI_Iscatterv(nsend[k], counts, displs, MPI_DOUBLE, nrecv[k], rank + 1, MPI_DOUBLE, 1, w,
                &req[k]),
      ++k;
  MPI_Iallgather(nsend[k], 3, MPI_SHORT, nrecv[k], 3, MPI_SHORT, w, &req[k]), ++k;
  MPI_Iallgatherv(nsend[k], rank + 1, MPI_DOUBLE, nrecv[k], counts, displs, MPI_DOUBLE, w, &req[k]),
      ++k;
  MPI_Ialltoall(nsend[k], 2, MPI_DOUBLE, nrecv[k], 2, MPI_DOUBLE, w, &req[k]), ++k;
  MPI_Ialltoallv(nsend[k], pair, displs, MPI_DOUBLE, nrecv[k], pair, displs, MPI_DOUBLE, w,
                 &req[k]),
      ++k;
  {
    static int wd[16];
    for (int i = 0; i < size; ++i)
      wd[i] = displs[i] * (int)sizeof(double);
    MPI_Ialltoallw(nsend[k], pair, wd, types, nrecv[k], pair, wd, types, w, &req[k]), ++k;
  }
  MPI_Ireduce_scatter(nsend[k], nrecv[k], counts, MPI_DOUBLE, MPI_MIN, w, &req[k]), ++k;
  MPI_Ireduce_scatter_block(nsend[k], nrecv[k], 2, MPI_DOUBLE, MPI_PROD, w, &req[k]), ++k;
  MPI_Iscan(nsend[k], nrecv[k], 4, MPI_INT, MPI_SUM, w, &req[k]), ++k;
  MPI_Iexscan(nsend[k], nrecv[k], 4, MPI_INT, MPI_SUM, w, &req[k]), ++k;
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);

  /* A count reduction: its input and output values are captured. */
  long local_count = rank + 1, global_count = 0;
  MPI_Allreduce(&local_count, &global_count, 1, MPI_LONG, MPI_SUM, w);

  /* Communicator management: dup of dup, split with several colors, split_type, create. */
  MPI_Comm dup1, dup2, split, shared, created;
  MPI_Comm_dup(w, &dup1);
  MPI_Comm_dup(dup1, &dup2);
  MPI_Comm_split(w, rank % 2, -rank, &split);
  MPI_Comm_split_type(w, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
  MPI_Group world_group, even_group;
  MPI_Comm_group(w, &world_group);
  int evens[16], n_even = 0;
  for (int i = 0; i < size; i += 2)
    evens[n_even++] = i;
  MPI_Group_incl(world_group, n_even, evens, &even_group);
  MPI_Comm_create(w, even_group, &created);
  MPI_Allreduce(send, recv, 1, MPI_DOUBLE, MPI_SUM, dup2);
  MPI_Allreduce(send, recv, 2, MPI_DOUBLE, MPI_SUM, split);
  MPI_Barrier(shared);
  if (created != MPI_COMM_NULL) {
    MPI_Bcast(send, 1, MPI_DOUBLE, 0, created);
    MPI_Comm_free(&created);
  }
  MPI_Group_free(&even_group);
  MPI_Group_free(&world_group);
  MPI_Comm_free(&shared);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup1);
  MPI_Finalize();
  return 0;
}
