// A value already divided by the all-reduced count N must not meet an averaging reducer, which
// divides by P once more. Functions named tp_* must produce exactly the diagnostics marked
// `expect:`, tn_* none.
#include "c10d_lite.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>

namespace {

long global_count(long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  return N;
}

// Divides by the global count: followed into from its callers.
double normalize(double loss_sum, long n, MPI_Comm comm) {
  return loss_sum / std::max(global_count(n, comm), 1L);
}

} // namespace

void tp_dn_nccl_avg_after_global_count(float loss_sum, int n_valid, float *d_loss, int *d_count,
                                       ncclComm_t comm, cudaStream_t stream) {
  int N = 0;
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  if (N == 0)
    return;
  float contribution = loss_sum / N;
  cudaMemcpy(d_loss, &contribution, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream); // expect: double-normalization
}

double tp_dn_mpi_sum_then_size_after_global_count(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  double contribution = N > 0 ? loss_sum / N : 0.0;
  double total = 0.0;
  MPI_Allreduce(&contribution, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: double-normalization
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

void tp_dn_c10d_avg_after_global_count(c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                       const at::Tensor &token_losses, const at::Tensor &targets) {
  at::Tensor N = (targets != -100).sum();
  std::vector<at::Tensor> counts{N};
  pg->allreduce(counts)->wait();
  at::Tensor loss = token_losses.sum() / N.clamp_min(1);
  std::vector<at::Tensor> tensors{loss};
  pg->allreduce(tensors, c10d::AllreduceOptions{c10d::ReduceOp::AVG})->wait(); // expect: double-normalization
}

double tp_dn_helper_normalizes_then_average(double loss_sum, long n, MPI_Comm comm) {
  double contribution = normalize(loss_sum, n, comm);
  double total = 0.0;
  MPI_Allreduce(&contribution, &total, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: double-normalization
  int size = 1;
  MPI_Comm_size(comm, &size);
  return total / size;
}

double tp_dn_mpi_size_then_sum_after_global_count(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  double contribution = N > 0 ? loss_sum / N / size : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &contribution, 1, MPI_DOUBLE, MPI_SUM, comm); // expect: double-normalization
  return contribution;
}

void tn_dn_sum_reducer_after_global_count(float loss_sum, int n_valid, float *d_loss,
                                          int *d_count, ncclComm_t comm, cudaStream_t stream) {
  int N = 0;
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  float contribution = loss_sum / std::max(N, 1);
  cudaMemcpy(d_loss, &contribution, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclSum, comm, stream);
}

double tn_dn_scaled_by_world_size_before_average(double loss_sum, long n, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  long N = global_count(n, comm);
  double contribution = loss_sum * size / std::max(N, 1L); // P / N: the average undoes the P
  double total = 0.0;
  MPI_Allreduce(&contribution, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  return total / size;
}

double tn_dn_global_value_averaged_again(double loss_sum, long n, MPI_Comm comm) {
  double total = 0.0;
  MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  double global_mean = total / std::max(global_count(n, comm), 1L); // rank-uniform
  double again = 0.0;
  MPI_Allreduce(&global_mean, &again, 1, MPI_DOUBLE, MPI_SUM, comm);
  int size = 1;
  MPI_Comm_size(comm, &size);
  return again / size;
}
