// Every MPI collective is one that all members of the communicator must issue: the variable-count,
// nonblocking and neighborhood forms as much as MPI_Allreduce. Functions named tp_* must produce
// exactly the diagnostics marked `expect:`, tn_* none.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> // Open MPI 4's persistent collectives, MPIX_<name>_init
#endif

#include <vector>

void tp_alltoallv_on_rank_zero_only(const double *send, const int *send_counts,
                                    const int *send_displs, double *recv, const int *recv_counts,
                                    const int *recv_displs, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Alltoallv(send, send_counts, send_displs, MPI_DOUBLE, recv, recv_counts, recv_displs, // expect: collective-not-reached-by-all-ranks
                  MPI_DOUBLE, comm);
}

void tp_nonblocking_gatherv_only_where_there_is_data(const float *values, int len,
                                                     float *gathered, const int *counts,
                                                     const int *displs, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int n_valid = 0; // this rank's values above its threshold: a count the data flow shows local
  for (int i = 0; i < len; ++i)
    if (values[i] > rank)
      ++n_valid;
  if (n_valid > 0) {
    MPI_Request request;
    MPI_Igatherv(values, n_valid, MPI_FLOAT, gathered, counts, displs, MPI_FLOAT, 0, comm, // expect: collective-not-reached-by-all-ranks
                 &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
}

// The last rank of a line has no right neighbor, but it is still a member of the communicator.
void tp_neighbor_exchange_skipped_by_the_last_rank(const double *halo_out, double *halo_in,
                                                   int width, MPI_Comm line) {
  int rank = 0, size = 1;
  MPI_Comm_rank(line, &rank);
  MPI_Comm_size(line, &size);
  if (rank != size - 1)
    MPI_Neighbor_alltoall(halo_out, width, MPI_DOUBLE, halo_in, width, MPI_DOUBLE, line); // expect: collective-not-reached-by-all-ranks
}

// Each rank receives its own count from a scatter: dividing by it forms a local mean.
double tp_mean_over_a_count_from_a_nonblocking_scatterv(double loss_sum, const int *counts,
                                                        const int *ones, const int *displs,
                                                        MPI_Comm comm) {
  int n_here = 0;
  MPI_Request request;
  MPI_Iscatterv(counts, ones, displs, MPI_INT, &n_here, 1, MPI_INT, 0, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  double mean = loss_sum / n_here, total = 0.0;
  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: uncompensated-mean
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

// What an all-to-all hands each rank differs from rank to rank, as the rank does.
void tp_condition_on_a_count_from_an_alltoall(const int *send_counts, double *x, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<int> recv_counts(size);
  MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  if (recv_counts[0] > 0)
    MPI_Bcast(x, 1, MPI_DOUBLE, 0, comm); // expect: collective-not-reached-by-all-ranks
}

void tn_alltoallv_on_every_rank_with_counts_of_its_own(const double *send, double *recv,
                                                       MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(size, rank == 0 ? 2 : 1), displs(size, 0);
  MPI_Alltoallv(send, counts.data(), displs.data(), MPI_DOUBLE, recv, counts.data(),
                displs.data(), MPI_DOUBLE, comm);
}

void tn_neighbor_exchange_on_every_rank(const double *halo_out, double *halo_in, int width,
                                        MPI_Comm grid) {
  MPI_Request request;
  MPI_Ineighbor_alltoall(halo_out, width, MPI_DOUBLE, halo_in, width, MPI_DOUBLE, grid,
                         &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

void tn_both_branches_issue_the_allgatherv(const float *mine, int n_valid, float *all,
                                           const int *counts, const int *displs, MPI_Comm comm) {
  MPI_Request request;
  if (n_valid > 0)
    MPI_Iallgatherv(mine, n_valid, MPI_FLOAT, all, counts, displs, MPI_FLOAT, comm, &request);
  else
    MPI_Iallgatherv(mine, 0, MPI_FLOAT, all, counts, displs, MPI_FLOAT, comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
// A persistent collective's initialization is a collective call of its own: every member of the
// communicator must make it, in the same order, before any can start it.
void tp_persistent_allreduce_initialized_on_the_root_only(double *grad, double *sum, int n,
                                                          MPI_Comm comm, MPI_Request *request) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPIX_Allreduce_init(grad, sum, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, request); // expect: collective-not-reached-by-all-ranks
}

void tn_persistent_allreduce_initialized_everywhere_started_each_step(double *grad, double *sum,
                                                                      int n, int steps,
                                                                      MPI_Comm comm) {
  MPI_Request request;
  MPIX_Allreduce_init(grad, sum, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &request);
  for (int step = 0; step < steps; ++step) {
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&request);
}
#endif
