// Collectives written inside the argument of an error-checking macro (MPICHECK, NCCLCHECK): the
// datatype, the op and MPI_IN_PLACE are read as written in the argument, not as the wrapper's name.
// Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#define CALL(cmd) cmd
#define MPICHECK(cmd)                                                                              \
  do {                                                                                             \
    int mpi_status = cmd;                                                                          \
    if (mpi_status != MPI_SUCCESS)                                                                 \
      std::abort();                                                                                \
  } while (0)
#define NCCLCHECK(cmd)                                                                             \
  do {                                                                                             \
    ncclResult_t nccl_status = cmd;                                                                \
    if (nccl_status != ncclSuccess) {                                                              \
      std::fprintf(stderr, "NCCL failure: %s\n", ncclGetErrorString(nccl_status));                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

double tp_ma_count_reduced_in_a_bare_wrapper(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  CALL(MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm));
  return loss_sum / N; // expect: unguarded-reduced-count-division
}

double tp_ma_count_reduced_in_place_in_mpicheck(double loss_sum, long n, MPI_Comm comm) {
  long all = n;
  MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_LONG, MPI_SUM, comm));
  return loss_sum / all; // expect: unguarded-reduced-count-division
}

void tp_ma_nccl_avg_after_global_count_in_ncclcheck(float loss_sum, int n_valid, float *d_loss,
                                                    int *d_count, ncclComm_t comm,
                                                    cudaStream_t stream) {
  int N = 0;
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  NCCLCHECK(ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream));
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  if (N == 0)
    return;
  float contribution = loss_sum / N;
  cudaMemcpy(d_loss, &contribution, sizeof(float), cudaMemcpyHostToDevice);
  NCCLCHECK(ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream)); // expect: double-normalization
}

double tn_ma_guarded_count_reduced_in_mpicheck(double loss_sum, long n, MPI_Comm comm) {
  long N = 0;
  MPICHECK(MPI_Allreduce(&n, &N, 1, MPI_LONG, MPI_SUM, comm));
  return loss_sum / std::max(N, 1L);
}

double tn_ma_loss_summed_in_a_bare_wrapper(double loss_sum, MPI_Comm comm) {
  double total = 0.0;
  CALL(MPI_Allreduce(&loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, comm));
  return 1.0 / total; // a sum of losses, not of counts
}
