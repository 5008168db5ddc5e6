#include "tests/nccl_double/src/errors.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace collcheck::nccl_double {
namespace {

enum class DebugLevel { none, warn, info };

DebugLevel debugLevel() {
  static const DebugLevel level = [] {
    const char *value = std::getenv("NCCL_DEBUG");
    if (value == nullptr)
      return DebugLevel::none;
    if (strcasecmp(value, "INFO") == 0 || strcasecmp(value, "TRACE") == 0)
      return DebugLevel::info;
    if (strcasecmp(value, "WARN") == 0)
      return DebugLevel::warn;
    return DebugLevel::none;
  }();
  return level;
}

void printLine(const char *level, const std::string &message) {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  std::fprintf(stderr, "%s:%d collcheck NCCL test double %s %s\n", host, int(getpid()), level,
               message.c_str());
}

// ncclGetLastError is process-wide in NCCL; the string is kept until the next error.
std::mutex lastErrorMutex;
std::string lastErrorText;
thread_local std::string lastErrorCopy;

} // namespace

ncclResult_t fail(ncclResult_t result, const std::string &message) {
  {
    std::lock_guard lock(lastErrorMutex);
    lastErrorText = message;
  }
  if (debugLevel() != DebugLevel::none)
    printLine("WARN", message);
  return result;
}

void info(const std::string &message) {
  if (debugLevel() == DebugLevel::info)
    printLine("INFO", message);
}

const char *errorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error (collcheck NCCL test double)";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (collcheck NCCL test double)";
  case ncclSystemError:
    return "unhandled system error (collcheck NCCL test double; see ncclGetLastError)";
  case ncclInternalError:
    return "internal error (collcheck NCCL test double; see ncclGetLastError)";
  case ncclInvalidArgument:
    return "invalid argument (collcheck NCCL test double; see ncclGetLastError)";
  case ncclInvalidUsage:
    return "invalid usage (collcheck NCCL test double; see ncclGetLastError)";
  case ncclRemoteError:
    return "remote process exited or there was a network error (collcheck NCCL test double)";
  case ncclInProgress:
    return "operation in progress (collcheck NCCL test double)";
  default:
    return "unknown result code (collcheck NCCL test double)";
  }
}

const char *lastError() {
  std::lock_guard lock(lastErrorMutex);
  lastErrorCopy = lastErrorText; // stable for the caller even if another thread fails meanwhile
  return lastErrorCopy.c_str();
}

} // namespace collcheck::nccl_double
