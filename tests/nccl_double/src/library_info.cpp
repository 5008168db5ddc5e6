// Version and error text. The version is the one of the nccl.h the double was built against, so
// that version checks in applications pass; the error strings say what this library is.
#include "tests/nccl_double/src/api.h"
#include "tests/nccl_double/src/errors.h"

namespace collcheck::nccl_double {

ncclResult_t GetVersion(int *version) {
  if (version == nullptr)
    return fail(ncclInvalidArgument, "ncclGetVersion: null output pointer");
  *version = NCCL_VERSION_CODE;
  info("collcheck NCCL test double " COLLCHECK_VERSION " implementing the NCCL " +
       std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
       std::to_string(NCCL_PATCH) + " API over PMPI in host memory (not NVIDIA NCCL)");
  return ncclSuccess;
}

const char *GetErrorString(ncclResult_t result) { return errorString(result); }

const char *GetLastError(ncclComm_t) { return lastError(); }

} // namespace collcheck::nccl_double
