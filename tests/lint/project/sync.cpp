#include "sync.h"

#include <cstdio>
#include <cstdlib>

float sync_mean(float value, MPI_Comm comm) {
  float total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_FLOAT, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

void average_in_place(float *values, int n, MPI_Comm comm) {
  MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_FLOAT, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  for (int i = 0; i < n; ++i)
    values[i] /= size;
}

float global_sum(float value, MPI_Comm comm) {
  float total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_FLOAT, MPI_SUM, comm);
  return total;
}

int world_size(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

int world_rank(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

void sync_all(MPI_Comm comm) { MPI_Barrier(comm); }

void fatal(const char *message) {
  std::fprintf(stderr, "%s\n", message);
  std::exit(1);
}

void Nodes::init(MPI_Comm world) {
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local_comm);
  MPI_Comm_rank(local_comm, &local_rank);
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_split(world, local_rank, rank, &cross_comm);
}
