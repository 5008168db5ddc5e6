// The double's half and bfloat16 codecs against CUDA's own host conversions: every 16-bit pattern
// decoded, and floats around every rounding boundary encoded.
#include "tests/nccl_double/src/datatypes.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace {

using namespace collcheck::nccl_double;

std::uint16_t bitsOf(__half value) { return __half_raw(value).x; }
std::uint16_t bitsOf(__nv_bfloat16 value) { return __nv_bfloat16_raw(value).x; }
__half halfOf(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half(raw);
}
__nv_bfloat16 bfloat16Of(std::uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __nv_bfloat16(raw);
}

bool sameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

TEST(Conversions, EveryHalfAndBfloat16PatternDecodesLikeCuda) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto pattern = std::uint16_t(bits);
    EXPECT_TRUE(sameFloat(__half2float(halfOf(pattern)), halfToFloat(pattern))) << bits;
    EXPECT_TRUE(sameFloat(__bfloat162float(bfloat16Of(pattern)), bfloat16ToFloat(pattern))) << bits;
  }
}

TEST(Conversions, FloatsAroundEveryRoundingBoundaryEncodeLikeCuda) {
  // For every 16-bit value, the floats at, just below and just above the midpoints to its
  // neighbours: ties to even, subnormals, overflow to infinity and NaN included.
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    for (float base : {halfToFloat(std::uint16_t(bits)), bfloat16ToFloat(std::uint16_t(bits))}) {
      if (std::isnan(base))
        continue;
      const float up = std::nextafter(base, INFINITY), down = std::nextafter(base, -INFINITY);
      for (float probe : {base, up, down, base + (up - base) * 0.5f, (base + down) * 0.5f,
                          std::ldexp(base, -13), std::ldexp(base, 13)}) {
        EXPECT_EQ(bitsOf(__float2half(probe)), floatToHalf(probe)) << probe;
        EXPECT_EQ(bitsOf(__float2bfloat16(probe)), floatToBfloat16(probe)) << probe;
      }
    }
  }
  EXPECT_EQ(bitsOf(__float2half(-NAN)), floatToHalf(-NAN));
  EXPECT_EQ(bitsOf(__float2bfloat16(-NAN)), floatToBfloat16(-NAN));
}

} // namespace
