// collcheck-lint CUDA fallback, force-included into .cu files when no usable CUDA installation is
// found (or with --cuda-fallback): the CUDA keywords and launch machinery Clang needs to parse host
// code, without the CUDA headers. Device code is parsed for its data flow only.
#pragma once

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include <stddef.h>
// Clang's CUDA <new> (cuda_wrappers/new, reached through any standard container) calls ::malloc and
// ::free, which the CUDA runtime wrapper would have declared.
#include <stdlib.h>

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1)
      : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;

typedef struct CUstream_st *cudaStream_t;
extern "C" int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                           cudaStream_t stream = 0);
