// collcheck-lint CUDA compatibility, included before every .cu file parsed with the machine's CUDA
// headers. Clang 19 knows CUDA up to 12.5; what code written for nvcc and CUDA 13 uses beyond that
// is declared here, for parsing only (the lint compiles no device code and links nothing).
#pragma once

// nvcc defines __CUDACC__ with a value, and CUDA 13 headers test it with `#if __CUDACC__` (NCCL's
// <nccl_device.h>); Clang's wrapper defines it empty, which such a test cannot read.
#ifdef __CUDACC__
#undef __CUDACC__
#define __CUDACC__ 1
#endif

#if defined(CUDART_VERSION)
// Cache-hinted loads and stores (sm_32_intrinsics.h, which Clang's wrapper keeps out and Clang 19
// does not define): one declaration per hint, for any element type.
#define COLLCHECK_CUDA_LOAD(name)                                                                  \
  template <typename T> __attribute__((device)) T name(const T *ptr);
#define COLLCHECK_CUDA_STORE(name)                                                                 \
  template <typename T> __attribute__((device)) void name(T *ptr, T value);
COLLCHECK_CUDA_LOAD(__ldcg)
COLLCHECK_CUDA_LOAD(__ldca)
COLLCHECK_CUDA_LOAD(__ldcs)
COLLCHECK_CUDA_LOAD(__ldlu)
COLLCHECK_CUDA_LOAD(__ldcv)
COLLCHECK_CUDA_STORE(__stwb)
COLLCHECK_CUDA_STORE(__stcg)
COLLCHECK_CUDA_STORE(__stcs)
COLLCHECK_CUDA_STORE(__stwt)
#undef COLLCHECK_CUDA_LOAD
#undef COLLCHECK_CUDA_STORE

#if CUDART_VERSION >= 13000
// nvcc's runtime header brings the host clock() and CLOCKS_PER_SEC; Clang's wrapper declares only
// the device clock().
#include <time.h>

// CUDA 13 declares the integer min and max for the device only; nvcc's host code still finds them.
inline __attribute__((host)) int min(int a, int b) { return a < b ? a : b; }
inline __attribute__((host)) int max(int a, int b) { return a < b ? b : a; }

// CUDA 13 replaced the device number of these calls with a cudaMemLocation; code written for
// CUDA 12 still passes the number.
cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          int device);
cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, int dstDevice,
                                 cudaStream_t stream = 0);
#endif
#endif
