// Test-side view of NCCL's element types. Values are encoded with the compiler's casts and CUDA's
// own host conversions (cuda_fp16.h, cuda_bf16.h), never with the double's code, so a test
// compares the double against an independent formula.
#pragma once

#include <nccl.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace collcheck::nccl_double_test {

struct TypeUnderTest {
  ncclDataType_t type;
  const char *name;
  std::size_t size;
  bool floating;
  bool isSigned;
  double epsilon; // unit roundoff of the format (0 for integers)
};

inline const std::vector<TypeUnderTest> &allTypes() {
  static const std::vector<TypeUnderTest> types = {
      {ncclInt8, "int8", 1, false, true, 0},
      {ncclUint8, "uint8", 1, false, false, 0},
      {ncclInt32, "int32", 4, false, true, 0},
      {ncclUint32, "uint32", 4, false, false, 0},
      {ncclInt64, "int64", 8, false, true, 0},
      {ncclUint64, "uint64", 8, false, false, 0},
      {ncclFloat16, "float16", 2, true, true, 0x1p-11},
      {ncclFloat32, "float32", 4, true, true, 0x1p-24},
      {ncclFloat64, "float64", 8, true, true, 0x1p-53},
      {ncclBfloat16, "bfloat16", 2, true, true, 0x1p-8},
  };
  return types;
}

template <typename T> void put(void *buffer, std::size_t index, T value) {
  std::memcpy(static_cast<std::byte *>(buffer) + index * sizeof(T), &value, sizeof(T));
}
template <typename T> T get(const void *buffer, std::size_t index) {
  T value;
  std::memcpy(&value, static_cast<const std::byte *>(buffer) + index * sizeof(T), sizeof(T));
  return value;
}

inline void store(const TypeUnderTest &type, void *buffer, std::size_t index, double value) {
  switch (type.type) {
  case ncclInt8:
    return put(buffer, index, std::int8_t(value));
  case ncclUint8:
    return put(buffer, index, std::uint8_t(value));
  case ncclInt32:
    return put(buffer, index, std::int32_t(value));
  case ncclUint32:
    return put(buffer, index, std::uint32_t(value));
  case ncclInt64:
    return put(buffer, index, std::int64_t(value));
  case ncclUint64:
    return put(buffer, index, std::uint64_t(value));
  case ncclFloat16:
    return put(buffer, index, __float2half(float(value)));
  case ncclFloat32:
    return put(buffer, index, float(value));
  case ncclFloat64:
    return put(buffer, index, value);
  case ncclBfloat16:
    return put(buffer, index, __float2bfloat16(float(value)));
  default:
    return;
  }
}

inline double load(const TypeUnderTest &type, const void *buffer, std::size_t index) {
  switch (type.type) {
  case ncclInt8:
    return get<std::int8_t>(buffer, index);
  case ncclUint8:
    return get<std::uint8_t>(buffer, index);
  case ncclInt32:
    return get<std::int32_t>(buffer, index);
  case ncclUint32:
    return get<std::uint32_t>(buffer, index);
  case ncclInt64:
    return double(get<std::int64_t>(buffer, index));
  case ncclUint64:
    return double(get<std::uint64_t>(buffer, index));
  case ncclFloat16:
    return __half2float(get<__half>(buffer, index));
  case ncclFloat32:
    return get<float>(buffer, index);
  case ncclFloat64:
    return get<double>(buffer, index);
  case ncclBfloat16:
    return __bfloat162float(get<__nv_bfloat16>(buffer, index));
  default:
    return NAN;
  }
}

// A buffer of `count` elements of one type, filled and read as doubles.
class TypedBuffer {
public:
  TypedBuffer(const TypeUnderTest &type, std::size_t count)
      : type_(type), bytes_(count * type.size + 1) {} // +1: never a null data() for count 0
  void set(std::size_t index, double value) { store(type_, bytes_.data(), index, value); }
  double at(std::size_t index) const { return load(type_, bytes_.data(), index); }
  void *data() { return bytes_.data(); }
  void *element(std::size_t index) { return bytes_.data() + index * type_.size; }

private:
  TypeUnderTest type_;
  std::vector<std::byte> bytes_;
};

} // namespace collcheck::nccl_double_test
