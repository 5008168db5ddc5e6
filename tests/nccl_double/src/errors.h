// Error reporting of the NCCL test double: the text behind ncclGetLastError and the NCCL_DEBUG
// warnings on stderr.
#pragma once

#include <nccl.h>

#include <string>

// Returns from the enclosing function with the result of `call` unless it is ncclSuccess.
#define NCCL_DOUBLE_CHECK(call)                                                                    \
  do {                                                                                             \
    if (ncclResult_t checkedResult = (call); checkedResult != ncclSuccess)                         \
      return checkedResult;                                                                        \
  } while (0)

namespace collcheck::nccl_double {

// Records `message` as the last error, prints it when NCCL_DEBUG asks for warnings, returns
// `result` so that a failing check reads `return fail(ncclInvalidArgument, "...")`.
ncclResult_t fail(ncclResult_t result, const std::string &message);

// Prints an informational line when NCCL_DEBUG=INFO.
void info(const std::string &message);

const char *errorString(ncclResult_t result);
const char *lastError();

} // namespace collcheck::nccl_double
