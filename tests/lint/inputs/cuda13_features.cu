// A .cu file written for nvcc and the CUDA 13 toolkit: cache-hinted loads and stores, host min,
// max and clock(), the CUDA 12 form of cudaMemAdvise and cudaMemPrefetchAsync, libcu++ and NCCL's
// device header. With the machine's CUDA headers the lint parses it with no error (test_cli.py).
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdio>
#if __has_include(<nccl_device.h>)
#include <nccl.h>
#include <nccl_device.h>
#endif

__global__ void scale_streaming(float *x, int n, float cap) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = __ldcs(x + i);
    __stcs(x + i, v * 2.0f);
    __stcg(x + i, min(v, cap));
    float w = __ldcg(x + i);
    __stwt(x + i, max(w, 0.0f));
  }
}

int main() {
  float *d = nullptr;
  int n = 1024;
  cudaMallocManaged(&d, n * sizeof(float));
  cudaMemAdvise(d, n * sizeof(float), cudaMemAdviseSetReadMostly, 0);
  cudaMemPrefetchAsync(d, n * sizeof(float), 0);
  scale_streaming<<<(n + 255) / 256, 256>>>(d, n, 1.0f);
  cudaDeviceSynchronize();
  clock_t start = clock();
  int lo = min(3, n), hi = max(lo, 4);
  std::printf("%d %d %f\n", lo, hi, (double)(clock() - start) / CLOCKS_PER_SEC);
  cudaFree(d);
  return 0;
}
