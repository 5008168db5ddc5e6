#include "tests/nccl_double/src/reduction.h"

#include "tests/nccl_double/src/errors.h"

#include <cstring>
#include <string>

namespace collcheck::nccl_double {

void ReductionPlan::setScalarValue(const void *element, std::size_t size) {
  std::memcpy(scalarValue_.data(), element, size);
  scalarPointer_ = nullptr;
}

ncclResult_t planReduction(ncclRedOp_t op, ncclDataType_t type, int nranks,
                           const std::vector<UserReduction> &userOps, ReductionPlan &plan) {
  const char *why = "";
  plan = ReductionPlan{};
  plan.ops = dataTypeOps(type, &why);
  if (plan.ops == nullptr)
    return fail(ncclInvalidArgument, "datatype " + std::to_string(int(type)) + ": " + why);
  switch (op) {
  case ncclSum:
    plan.combine = Combine::sum;
    return ncclSuccess;
  case ncclProd:
    plan.combine = Combine::prod;
    return ncclSuccess;
  case ncclMax:
    plan.combine = Combine::max;
    return ncclSuccess;
  case ncclMin:
    plan.combine = Combine::min;
    return ncclSuccess;
  case ncclAvg:
    plan.combine = Combine::sum;
    if (plan.ops->floating) { // NCCL: PreMulSum by 1/nranks rounded to the type
      std::array<std::byte, 8> reciprocal{};
      plan.ops->reciprocal(nranks, reciprocal.data());
      plan.preMultiply = true;
      plan.setScalarValue(reciprocal.data(), plan.ops->size);
    } else { // NCCL: SumPostDiv, the wrapped sum divided by nranks
      plan.postDivisor = nranks;
    }
    return ncclSuccess;
  default:
    break;
  }
  const int index = int(op) - int(ncclNumOps);
  if (index < 0 || index >= int(userOps.size()) || !userOps[std::size_t(index)].live)
    return fail(ncclInvalidArgument,
                "reduction operator " + std::to_string(int(op)) +
                    " is neither built in nor a live PreMulSum of this communicator");
  const UserReduction &user = userOps[std::size_t(index)];
  if (user.type != type)
    return fail(ncclInvalidArgument, "the PreMulSum operator was created for datatype " +
                                         std::to_string(int(user.type)) + " and used with " +
                                         std::to_string(int(type)));
  plan.combine = Combine::sum;
  plan.preMultiply = true;
  if (user.scalarPointer != nullptr)
    plan.setScalarPointer(user.scalarPointer);
  else
    plan.setScalarValue(user.scalarValue.data(), plan.ops->size);
  return ncclSuccess;
}

ncclResult_t createPreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t type,
                             ncclScalarResidence_t residence, std::vector<UserReduction> &userOps) {
  const char *why = "";
  const DataTypeOps *ops = dataTypeOps(type, &why);
  if (ops == nullptr)
    return fail(ncclInvalidArgument, std::string("ncclRedOpCreatePreMulSum: ") + why);
  if (op == nullptr || scalar == nullptr)
    return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: null op or scalar");
  if (residence != ncclScalarHostImmediate && residence != ncclScalarDevice)
    return fail(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: unknown scalar residence");
  UserReduction user;
  user.live = true;
  user.type = type;
  if (residence == ncclScalarHostImmediate)
    std::memcpy(user.scalarValue.data(), scalar, ops->size);
  else
    user.scalarPointer = scalar;
  std::size_t index = 0;
  while (index < userOps.size() && userOps[index].live)
    ++index;
  if (index == userOps.size())
    userOps.push_back(user);
  else
    userOps[index] = user;
  *op = ncclRedOp_t(int(ncclNumOps) + int(index));
  return ncclSuccess;
}

ncclResult_t destroyUserOp(ncclRedOp_t op, std::vector<UserReduction> &userOps) {
  if (int(op) >= 0 && int(op) < int(ncclNumOps))
    return fail(ncclInvalidArgument, "ncclRedOpDestroy: operator is a NCCL built-in");
  const int index = int(op) - int(ncclNumOps);
  if (index < 0 || index >= int(userOps.size()) || !userOps[std::size_t(index)].live)
    return fail(ncclInvalidArgument, "ncclRedOpDestroy: operator unknown to this communicator");
  userOps[std::size_t(index)].live = false;
  return ncclSuccess;
}

} // namespace collcheck::nccl_double
