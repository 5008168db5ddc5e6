// NOLINT comments silence findings by rule id or by clang-tidy name; a comment naming another rule
// silences nothing. Functions named tp_* must produce exactly the diagnostics marked `expect:`,
// tn_* none.
#include <cuda_runtime.h>
#include <nccl.h>

void tn_nolint_same_line(float loss_sum, int n_valid, float *d, ncclComm_t comm, cudaStream_t s) {
  float mean = loss_sum / n_valid;
  cudaMemcpy(d, &mean, sizeof mean, cudaMemcpyHostToDevice);
  ncclAllReduce(d, d, 1, ncclFloat, ncclAvg, comm, s); // NOLINT(uncompensated-mean): logging only
}

void tn_nolint_next_line(float loss_sum, int n_valid, float *d, ncclComm_t comm, cudaStream_t s) {
  float mean = loss_sum / n_valid;
  cudaMemcpy(d, &mean, sizeof mean, cudaMemcpyHostToDevice);
  // NOLINTNEXTLINE(collcheck-uncompensated-mean)
  ncclAllReduce(d, d, 1, ncclFloat, ncclAvg, comm, s);
}

// NOLINTBEGIN(uncompensated-mean, collective-not-reached-by-all-ranks)
void tn_nolint_block(float loss_sum, int n_valid, float *d, ncclComm_t comm, cudaStream_t s) {
  float mean = loss_sum / n_valid;
  cudaMemcpy(d, &mean, sizeof mean, cudaMemcpyHostToDevice);
  if (n_valid > 0)
    ncclAllReduce(d, d, 1, ncclFloat, ncclAvg, comm, s);
}
// NOLINTEND(uncompensated-mean, collective-not-reached-by-all-ranks)

void tn_nolint_everything(float loss_sum, int n_valid, float *d, ncclComm_t comm, cudaStream_t s) {
  float mean = loss_sum / n_valid;
  cudaMemcpy(d, &mean, sizeof mean, cudaMemcpyHostToDevice);
  ncclAllReduce(d, d, 1, ncclFloat, ncclAvg, comm, s); // NOLINT
}

void tp_nolint_for_another_rule(float loss_sum, int n_valid, float *d, ncclComm_t comm,
                                cudaStream_t s) {
  float mean = loss_sum / n_valid;
  cudaMemcpy(d, &mean, sizeof mean, cudaMemcpyHostToDevice);
  ncclAllReduce(d, d, 1, ncclFloat, ncclAvg, comm, s); // NOLINT(double-normalization) expect: note:uncompensated-mean
}
