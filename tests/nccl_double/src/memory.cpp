// "Device" memory of the test double is host memory: ncclMemAlloc is an aligned allocation, and
// buffer registration has nothing to pin, so it only hands out a handle.
#include "tests/nccl_double/src/api.h"
#include "tests/nccl_double/src/communicator.h"
#include "tests/nccl_double/src/errors.h"

#include <cstdlib>
#include <string>

namespace collcheck::nccl_double {
namespace {

constexpr std::size_t kAlignment = 4096; // NCCL_WIN_REQUIRED_ALIGNMENT: enough for any use
int registrationToken;                   // every registration handle points here

} // namespace

ncclResult_t MemAlloc(void **ptr, size_t size) {
  if (ptr == nullptr)
    return fail(ncclInvalidArgument, "ncclMemAlloc: null output pointer");
  const std::size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  *ptr = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (*ptr == nullptr)
    return fail(ncclSystemError,
                "ncclMemAlloc: out of host memory for " + std::to_string(size) + " bytes");
  return ncclSuccess;
}

ncclResult_t MemFree(void *ptr) {
  std::free(ptr);
  return ncclSuccess;
}

ncclResult_t CommRegister(const ncclComm_t comm, void *buff, size_t, void **handle) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommRegister"));
  if (buff == nullptr || handle == nullptr)
    return fail(ncclInvalidArgument, "ncclCommRegister: null buffer or handle pointer");
  *handle = &registrationToken;
  return ncclSuccess;
}

ncclResult_t CommDeregister(const ncclComm_t comm, void *handle) {
  NCCL_DOUBLE_CHECK(checkComm(comm, "ncclCommDeregister"));
  if (handle != &registrationToken)
    return fail(ncclInvalidArgument, "ncclCommDeregister: not a handle from ncclCommRegister");
  return ncclSuccess;
}

} // namespace collcheck::nccl_double
