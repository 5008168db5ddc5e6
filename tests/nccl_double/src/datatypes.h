// The element types of the NCCL test double and the arithmetic of each one: integers wrap like
// the GPU's, half and bfloat16 are computed in float and rounded back after every operation.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace collcheck::nccl_double {

// The associative part of a reduction; ncclAvg and PreMulSum are a sum plus a pre-multiplication
// or a post-division (see reduction.h).
enum class Combine { sum, prod, max, min };

struct DataTypeOps {
  const char *name;
  std::size_t size;
  bool floating;
  // acc[i] = acc[i] (combine) in[i]
  void (*combine)(Combine combine, void *acc, const void *in, std::size_t count);
  // dst[i] = src[i] * scalar, scalar being one element of this type; dst may equal src
  void (*preMultiply)(void *dst, const void *src, std::size_t count, const void *scalar);
  // buffer[i] = buffer[i] / divisor, truncating toward zero (integers only: NCCL's ncclAvg)
  void (*postDivide)(void *buffer, std::size_t count, int divisor);
  // Writes 1/nranks as one element of this type, computed as NCCL does (float, then narrowed).
  void (*reciprocal)(int nranks, void *scalar);
};

// Null when `type` is out of range or not supported (fp8); `why` then says which.
const DataTypeOps *dataTypeOps(ncclDataType_t type, const char **why);

// IEEE binary16 and bfloat16 conversions with round-to-nearest-even (exposed for the tests).
std::uint16_t floatToHalf(float value);
float halfToFloat(std::uint16_t bits);
std::uint16_t floatToBfloat16(float value);
float bfloat16ToFloat(std::uint16_t bits);

} // namespace collcheck::nccl_double
