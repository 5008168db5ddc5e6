// The communicator behind ncclComm_t, and the table of live ones that every entry point checks
// its handle against.
#pragma once

#include "tests/nccl_double/src/reduction.h"
#include "tests/nccl_double/src/transport.h"

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

struct ncclComm {
  int rank = 0;
  int size = 0;
  int cuDevice = 0;
  bool blocking = true;
  std::string name;
  std::unique_ptr<collcheck::nccl_double::Transport> transport;
  // Splits of this communicator so far: members split in the same order, so equal everywhere.
  int splitCount = 0;
  ncclResult_t asyncError = ncclSuccess;
  bool finalized = false;
  std::vector<collcheck::nccl_double::UserReduction> userOps;
};

namespace collcheck::nccl_double {

// Takes ownership of `comm` and makes it a live handle.
ncclComm_t publish(std::unique_ptr<ncclComm> comm);
// Ends a live handle (ncclCommDestroy, ncclCommAbort); false when `comm` was not live.
bool retire(ncclComm_t comm);
// ncclInvalidArgument, naming `caller`, unless `comm` is a live handle.
ncclResult_t checkComm(const ncclComm *comm, const char *caller);

// Applies the fields of an ncclConfig_t the test double honours (blocking, commName).
ncclResult_t applyConfig(const ncclConfig_t *config, ncclComm &comm);

} // namespace collcheck::nccl_double
