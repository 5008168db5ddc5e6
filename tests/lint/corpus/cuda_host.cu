// CUDA host code: a kernel that scales a gradient on the device is followed into, and the value
// reaches the reducer through the device buffer. Functions named tp_* must produce exactly the
// diagnostics marked `expect:`, tn_* none.
#include <cuda_runtime.h>
#include <nccl.h>

__global__ void scale_kernel(float *grad, float factor, int len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < len)
    grad[i] *= factor;
}

void tp_cuda_kernel_divides_by_the_local_count(float *d_grad, int len, int n_valid,
                                               ncclComm_t comm, cudaStream_t stream) {
  scale_kernel<<<(len + 255) / 256, 256, 0, stream>>>(d_grad, 1.0f / n_valid, len);
  ncclAllReduce(d_grad, d_grad, len, ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tp_cuda_async_copy_of_a_mean(float loss_sum, int n_tokens, float *d_loss, ncclComm_t comm,
                                  cudaStream_t stream) {
  float mean = loss_sum / n_tokens;
  cudaMemcpyAsync(d_loss, &mean, sizeof mean, cudaMemcpyHostToDevice, stream);
  ncclAllReduce(d_loss, d_loss, 1, ncclFloat, ncclAvg, comm, stream); // expect: note:uncompensated-mean
}

void tn_cuda_kernel_applies_p_n_over_N(float *d_grad, int len, int n_valid, int *d_count,
                                       ncclComm_t comm, cudaStream_t stream) {
  int nranks = 1, N = 0;
  ncclCommCount(comm, &nranks);
  cudaMemcpy(d_count, &n_valid, sizeof(int), cudaMemcpyHostToDevice);
  ncclAllReduce(d_count, d_count, 1, ncclInt32, ncclSum, comm, stream);
  cudaMemcpy(&N, d_count, sizeof(int), cudaMemcpyDeviceToHost);
  if (N == 0)
    return;
  // d_grad holds this rank's gradient sum: P / N makes the average the global item mean.
  scale_kernel<<<(len + 255) / 256, 256, 0, stream>>>(d_grad, float(nranks) / N, len);
  ncclAllReduce(d_grad, d_grad, len, ncclFloat, ncclAvg, comm, stream);
}

void tn_cuda_sum_of_sums(float *d_grad, int len, ncclComm_t comm, cudaStream_t stream) {
  ncclAllReduce(d_grad, d_grad, len, ncclFloat, ncclSum, comm, stream);
}
