// A finding in the argument of an error-checking macro; used by the CLI tests (its region and its
// fix-it are where the argument is written, not at the macro's name).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>

#define NCCLCHECK(cmd)                                                                             \
  do {                                                                                             \
    if ((cmd) != ncclSuccess)                                                                      \
      std::abort();                                                                                \
  } while (0)

void averaged_twice(float loss_sum, int n_valid, float *d_loss, int *d_count, ncclComm_t comm,
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
