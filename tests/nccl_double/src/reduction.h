// Reduction operators: the built-in ones and the PreMulSum operators an application creates.
//
// Every reduction runs as NCCL runs it: each rank first pre-multiplies its own input by its own
// scalar (PreMulSum; ncclAvg on floating types with 1/nranks), the results are combined (sum,
// prod, max or min), and integer ncclAvg divides the wrapped sum by nranks, truncating.
#pragma once

#include "tests/nccl_double/src/datatypes.h"

#include <nccl.h>

#include <array>
#include <cstddef>
#include <vector>

namespace collcheck::nccl_double {

struct UserReduction {
  bool live = false;
  ncclDataType_t type = ncclFloat32;
  // ncclScalarHostImmediate: the value, copied when the operator was created.
  std::array<std::byte, 8> scalarValue{};
  // ncclScalarDevice: "device" memory is host memory here, read when the collective runs.
  const void *scalarPointer = nullptr;
};

class ReductionPlan {
public:
  const DataTypeOps *ops = nullptr;
  Combine combine = Combine::sum;
  bool preMultiply = false;
  int postDivisor = 0; // 0: no division

  // The pre-multiplication scalar in effect now (a device-resident one is read at this moment).
  const void *scalar() const { return scalarPointer_ ? scalarPointer_ : scalarValue_.data(); }
  void setScalarValue(const void *element, std::size_t size);
  void setScalarPointer(const void *pointer) { scalarPointer_ = pointer; }

private:
  std::array<std::byte, 8> scalarValue_{};
  const void *scalarPointer_ = nullptr;
};

// Resolves `op` for `type` on a communicator of `nranks` whose user operators are `userOps`.
ncclResult_t planReduction(ncclRedOp_t op, ncclDataType_t type, int nranks,
                           const std::vector<UserReduction> &userOps, ReductionPlan &plan);

ncclResult_t createPreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t type,
                             ncclScalarResidence_t residence, std::vector<UserReduction> &userOps);
ncclResult_t destroyUserOp(ncclRedOp_t op, std::vector<UserReduction> &userOps);

} // namespace collcheck::nccl_double
