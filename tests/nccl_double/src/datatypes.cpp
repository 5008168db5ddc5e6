#include "tests/nccl_double/src/datatypes.h"
#include <cstring>

#include <bit>
#include <cmath>
#include <concepts>
#include <iterator>
#include <type_traits>

namespace collcheck::nccl_double {

std::uint16_t floatToHalf(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = std::uint16_t((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN becomes CUDA's canonical NaN
    return 0x7fffu;
  if (magnitude == 0x7f800000u)
    return std::uint16_t(sign | 0x7c00u);
  if (magnitude >= 0x477ff000u) // 65520 and above round to infinity
    return std::uint16_t(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // below 2^-14: a subnormal half in units of 2^-24
    const float units = std::fabs(value) * 0x1p24f; // exact: a power-of-two scale
    return std::uint16_t(sign | std::uint16_t(std::nearbyint(units)));
  }
  const std::uint32_t mantissa = magnitude & 0x7fffffu;
  const std::uint32_t exponent = (magnitude >> 23) - 127 + 15;
  std::uint32_t half = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t dropped = mantissa & 0x1fffu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u)))
    ++half; // a carry into the exponent is the correct rounding
  return std::uint16_t(sign | half);
}

float halfToFloat(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = float(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

std::uint16_t floatToBfloat16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN becomes CUDA's canonical NaN
    return 0x7fffu;
  const std::uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return std::uint16_t((bits + roundingBias) >> 16);
}

float bfloat16ToFloat(std::uint16_t bits) {
  return std::bit_cast<float>(std::uint32_t(bits) << 16);
}

namespace {

struct Half {
  std::uint16_t bits;
};
struct Bfloat16 {
  std::uint16_t bits;
};

// Arithmetic<T>: one operation of the device's arithmetic for element type T.
template <typename T> struct Arithmetic;

template <std::integral T> struct Arithmetic<T> {
  // Wider unsigned arithmetic: integer overflow wraps on the GPU, and is undefined in C++.
  using Wide = std::uint64_t;
  static T add(T a, T b) { return T(Wide(a) + Wide(b)); }
  static T mul(T a, T b) { return T(Wide(a) * Wide(b)); }
  static T max(T a, T b) { return a < b ? b : a; }
  static T min(T a, T b) { return b < a ? b : a; }
  static T divide(T a, int divisor) {
    if constexpr (std::is_signed_v<T>)
      return T(std::int64_t(a) / divisor);
    else
      return T(std::uint64_t(a) / std::uint64_t(divisor));
  }
  // NCCL passes the integer nranks to SumPostDiv; an integer ncclAvg never pre-multiplies.
  static T reciprocal(int) { return T(0); }
};

template <std::floating_point T> struct Arithmetic<T> {
  static T add(T a, T b) { return a + b; }
  static T mul(T a, T b) { return a * b; }
  static T max(T a, T b) { return std::fmax(a, b); }
  static T min(T a, T b) { return std::fmin(a, b); }
  static T divide(T a, int divisor) { return a / T(divisor); }
  static T reciprocal(int nranks) {
    if constexpr (std::is_same_v<T, double>)
      return 1.0 / nranks;
    else
      return float(1.0 / nranks);
  }
};

// Half and bfloat16: every operation in float, rounded back to the 16-bit format.
template <typename Storage, std::uint16_t (*Encode)(float), float (*Decode)(std::uint16_t)>
struct NarrowFloatArithmetic {
  static float load(Storage x) { return Decode(x.bits); }
  static Storage store(float x) { return Storage{Encode(x)}; }
  static Storage add(Storage a, Storage b) { return store(load(a) + load(b)); }
  static Storage mul(Storage a, Storage b) { return store(load(a) * load(b)); }
  static Storage max(Storage a, Storage b) { return store(std::fmax(load(a), load(b))); }
  static Storage min(Storage a, Storage b) { return store(std::fmin(load(a), load(b))); }
  static Storage divide(Storage a, int divisor) { return store(load(a) / float(divisor)); }
  static Storage reciprocal(int nranks) { return store(float(1.0 / nranks)); }
};
template <> struct Arithmetic<Half> : NarrowFloatArithmetic<Half, floatToHalf, halfToFloat> {};
template <>
struct Arithmetic<Bfloat16> : NarrowFloatArithmetic<Bfloat16, floatToBfloat16, bfloat16ToFloat> {};

template <typename T>
void combineElements(Combine combine, void *accBuffer, const void *inBuffer, std::size_t count) {
  using A = Arithmetic<T>;
  T *acc = static_cast<T *>(accBuffer);
  const T *in = static_cast<const T *>(inBuffer);
  auto apply = [&](auto operation) {
    for (std::size_t i = 0; i < count; ++i)
      acc[i] = operation(acc[i], in[i]);
  };
  switch (combine) {
  case Combine::sum:
    return apply(A::add);
  case Combine::prod:
    return apply(A::mul);
  case Combine::max:
    return apply(A::max);
  case Combine::min:
    return apply(A::min);
  }
}

template <typename T>
void preMultiplyElements(void *dstBuffer, const void *srcBuffer, std::size_t count,
                         const void *scalarElement) {
  T *dst = static_cast<T *>(dstBuffer);
  const T *src = static_cast<const T *>(srcBuffer);
  T scalar; // the scalar's storage need not be aligned for T
  std::memcpy(&scalar, scalarElement, sizeof scalar);
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = Arithmetic<T>::mul(src[i], scalar);
}

template <typename T> void postDivideElements(void *buffer, std::size_t count, int divisor) {
  T *elements = static_cast<T *>(buffer);
  for (std::size_t i = 0; i < count; ++i)
    elements[i] = Arithmetic<T>::divide(elements[i], divisor);
}

template <typename T> void reciprocalElement(int nranks, void *scalar) {
  *static_cast<T *>(scalar) = Arithmetic<T>::reciprocal(nranks);
}

template <typename T> constexpr DataTypeOps opsFor(const char *name, bool floating) {
  return {name,
          sizeof(T),
          floating,
          combineElements<T>,
          preMultiplyElements<T>,
          postDivideElements<T>,
          reciprocalElement<T>};
}

// Indexed by ncclDataType_t; the fp8 formats (10, 11) follow the table and are rejected.
constexpr DataTypeOps kDataTypes[] = {
    opsFor<std::int8_t>("int8", false),   opsFor<std::uint8_t>("uint8", false),
    opsFor<std::int32_t>("int32", false), opsFor<std::uint32_t>("uint32", false),
    opsFor<std::int64_t>("int64", false), opsFor<std::uint64_t>("uint64", false),
    opsFor<Half>("float16", true),        opsFor<float>("float32", true),
    opsFor<double>("float64", true),      opsFor<Bfloat16>("bfloat16", true),
};
static_assert(std::size(kDataTypes) == ncclBfloat16 + 1);

} // namespace

const DataTypeOps *dataTypeOps(ncclDataType_t type, const char **why) {
  const int index = int(type);
  if (index >= 0 && index < int(std::size(kDataTypes)))
    return &kDataTypes[index];
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2)
    *why = "fp8 data types (ncclFloat8e4m3, ncclFloat8e5m2) are not supported by the test double";
  else
    *why = "not an ncclDataType_t";
  return nullptr;
}

} // namespace collcheck::nccl_double
