// NCCL: local means reaching an averaging reducer (ncclAvg, PreMulSum by 1/P), and the correct
// idioms. Functions named tp_* must produce exactly the diagnostics marked `expect:`, tn_* none.
#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

namespace {

// Forms a local mean: followed into from its callers.
float masked_mean(const float *loss, const int *mask, int len) {
  float sum = 0.0f;
  int valid = 0;
  for (int i = 0; i < len; ++i)
    if (mask[i]) {
      sum += loss[i];
      ++valid;
    }
  return sum / valid;
}

// Its parameter reaches ncclAvg, so it is an averaging reducer for its callers.
void average_across_ranks(float *device_value, ncclComm_t comm, cudaStream_t stream) {
  ncclAllReduce(device_value, device_value, 1, ncclFloat, ncclAvg, comm, stream);
}

} // namespace

void tp_nccl_avg_of_local_mean(const float *loss, int n_valid, float *d_loss, ncclComm_t comm,
                               cudaStream_t stream) {
  float sum = 0.0f;
  for (int i = 0; i < n_valid; ++i)
    sum += loss[i];
  float mean = sum / n_valid;
  cudaMemcpy(d_loss, &mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tp_nccl_op_in_a_variable(const float *loss, const int *mask, int len, float *d_loss,
                              ncclComm_t comm, cudaStream_t stream) {
  float mean = masked_mean(loss, mask, len);
  ncclRedOp_t op = ncclAvg;
  cudaMemcpyAsync(d_loss, &mean, sizeof(float), cudaMemcpyHostToDevice, stream);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, op, comm, stream); // expect: uncompensated-mean
}

void tp_nccl_through_a_wrapper(const float *loss, const int *mask, int len, float *d_loss,
                               ncclComm_t comm, cudaStream_t stream) {
  float mean = masked_mean(loss, mask, len);
  cudaMemcpy(d_loss, &mean, sizeof(float), cudaMemcpyHostToDevice);
  average_across_ranks(d_loss, comm, stream); // expect: uncompensated-mean
}

void tp_nccl_gradient_buffer(std::vector<float> &grad, long n_tokens, float *d_grad,
                             ncclComm_t comm, cudaStream_t stream) {
  for (float &g : grad)
    g /= n_tokens;
  cudaMemcpy(d_grad, grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_grad, d_grad, grad.size(), ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tp_nccl_premulsum_by_inverse_size(const std::vector<float> &grad_sum, int count,
                                       float *d_grad, ncclComm_t comm, cudaStream_t stream) {
  std::vector<float> grad(grad_sum.size());
  for (size_t i = 0; i < grad.size(); ++i)
    grad[i] = grad_sum[i] / count;
  int nranks = 0;
  ncclCommCount(comm, &nranks);
  float scale = 1.0f / nranks;
  ncclRedOp_t average;
  ncclRedOpCreatePreMulSum(&average, &scale, ncclFloat32, ncclScalarHostImmediate, comm);
  cudaMemcpy(d_grad, grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_grad, d_grad, grad.size(), ncclFloat32, average, comm, stream); // expect: note:uncompensated-mean
}

void tp_nccl_reduce_with_avg(const float *loss, const int *mask, int len, float *d_in,
                             float *d_out, ncclComm_t comm, cudaStream_t stream) {
  float mean = masked_mean(loss, mask, len);
  cudaMemcpy(d_in, &mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclReduce(d_in, d_out, 1, ncclFloat, ncclAvg, 0, comm, stream); // expect: uncompensated-mean
}

void tp_nccl_reduce_scatter_with_avg(std::vector<float> &grad, int n_local, float *d_in,
                                     float *d_out, ncclComm_t comm, cudaStream_t stream) {
  for (float &g : grad)
    g = g / n_local;
  cudaMemcpy(d_in, grad.data(), grad.size() * sizeof(float), cudaMemcpyHostToDevice);
  ncclReduceScatter(d_in, d_out, grad.size() / 4, ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tp_nccl_mean_scaled_by_size_only(float loss_sum, int n_valid, float *d_loss,
                                      ncclComm_t comm, cudaStream_t stream) {
  int nranks = 1;
  ncclCommCount(comm, &nranks);
  // P alone does not undo the division by this rank's count.
  float scaled = loss_sum / n_valid * nranks;
  cudaMemcpy(d_loss, &scaled, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tn_nccl_sum_of_local_sums(const float *loss, const int *mask, int len, float *d_buf,
                               float *out, ncclComm_t comm, cudaStream_t stream) {
  float host[2] = {0.0f, 0.0f}; // local loss sum, local count
  for (int i = 0; i < len; ++i)
    if (mask[i]) {
      host[0] += loss[i];
      host[1] += 1.0f;
    }
  cudaMemcpy(d_buf, host, sizeof host, cudaMemcpyHostToDevice);
  ncclAllReduce(d_buf, d_buf, 2, ncclFloat, ncclSum, comm, stream);
  cudaMemcpy(host, d_buf, sizeof host, cudaMemcpyDeviceToHost);
  *out = host[1] > 0 ? host[0] / host[1] : 0.0f;
}

void tn_nccl_local_mean_scaled_by_p_n_over_N(float loss_sum, int n_valid, float *d_loss,
                                             int *d_count, ncclComm_t comm,
                                             cudaStream_t stream) {
  float mean = loss_sum / n_valid;
  int nranks = 1;
  ncclCommCount(comm, &nranks);
  int N = 0;
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  if (N == 0)
    return;
  float weighted = mean * nranks * n_valid / N; // P * n / N
  cudaMemcpy(d_loss, &weighted, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream);
}

void tn_nccl_weight_by_n_over_N_then_sum(float local_mean, int n_valid, int global_count,
                                         float *d_loss, ncclComm_t comm, cudaStream_t stream) {
  // global_count arrives already reduced; the weight n/N makes a SUM reducer exact.
  float weighted = local_mean * n_valid / global_count;
  cudaMemcpy(d_loss, &weighted, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclSum, comm, stream);
}

void tn_nccl_fixed_batch_of_constant_size(const float *loss, float *d_loss, ncclComm_t comm,
                                          cudaStream_t stream) {
  constexpr int kBatch = 32; // the same on every rank: a plain mean is the global mean
  float sum = 0.0f;
  for (int i = 0; i < kBatch; ++i)
    sum += loss[i];
  float mean = sum / kBatch;
  cudaMemcpy(d_loss, &mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream);
}

void tn_nccl_premulsum_by_item_weight(float local_mean, int n_valid, float *d_loss,
                                      int *d_count, ncclComm_t comm, cudaStream_t stream) {
  int N = 0;
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  float weight = N > 0 ? static_cast<float>(n_valid) / N : 0.0f;
  ncclRedOp_t weighted_sum;
  ncclRedOpCreatePreMulSum(&weighted_sum, &weight, ncclFloat32, ncclScalarHostImmediate, comm);
  cudaMemcpy(d_loss, &local_mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat32, weighted_sum, comm, stream);
}

void tn_nccl_global_mean_averaged_again(float loss_sum, float *d_buf, int *d_count,
                                        int n_valid, ncclComm_t comm, cudaStream_t stream) {
  ncclAllReduce(d_buf, d_buf, 1, ncclFloat, ncclSum, comm, stream);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  float total = loss_sum;
  int N = n_valid;
  cudaMemcpy(&total, d_buf, sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  float global_mean = total / (N > 0 ? N : 1); // the same on every rank
  cudaMemcpy(d_buf, &global_mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_buf, d_buf, 1, ncclFloat, ncclAvg, comm, stream);
}

void tn_nccl_learning_rate_warmup(std::vector<float> &grad_sum, float base_lr, int warmup_steps,
                                  int global_count, float *d_grad, ncclComm_t comm,
                                  cudaStream_t stream) {
  int nranks = 1;
  ncclCommCount(comm, &nranks);
  float lr = base_lr / warmup_steps; // a schedule, not a mean over items
  for (size_t i = 0; i < grad_sum.size(); ++i)
    grad_sum[i] = grad_sum[i] * lr * nranks / global_count / (i + 1);
  cudaMemcpy(d_grad, grad_sum.data(), grad_sum.size() * sizeof(float), cudaMemcpyHostToDevice);
  ncclAllReduce(d_grad, d_grad, grad_sum.size(), ncclFloat, ncclAvg, comm, stream);
}

void tn_nccl_broadcast_of_a_local_mean(float loss_sum, int n_valid, float *d_loss, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  float mean = loss_sum / n_valid; // only the root's value survives: nothing is averaged
  cudaMemcpy(d_loss, &mean, sizeof(float), cudaMemcpyHostToDevice);
  ncclBroadcast(d_loss, d_loss, 1, ncclFloat, root, comm, stream);
}
