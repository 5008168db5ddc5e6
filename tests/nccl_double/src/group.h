// Group semantics and progress. Every operation becomes one phase: the transfers it needs plus
// what the rank does before (stage, pre-multiply) and after (combine, copy out). Outside
// ncclGroupStart/End a phase runs at once; inside, phases queue per thread and run at the
// outermost ncclGroupEnd, each communicator's phases in issue order, all communicators at once,
// so that sends and receives of a group cannot deadlock. Everything completes before the call
// returns: the stream argument is ignored.
#pragma once

#include "tests/nccl_double/src/transport.h"

#include <nccl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace collcheck::nccl_double {

struct Phase {
  ncclComm *comm = nullptr;
  const char *operation = "";
  // Consecutive point-to-point phases of one communicator in a group are posted together.
  bool pointToPoint = false;
  std::vector<Transfer> transfers;
  // Buffers the transfers read or write; allocated when the phase is built, so they do not move.
  std::vector<std::vector<std::byte>> staging;
  std::function<void()> prepare;
  std::function<ncclResult_t()> finish;

  std::byte *stage(std::size_t bytes) { return staging.emplace_back(bytes).data(); }
};

ncclResult_t submit(std::unique_ptr<Phase> phase);
ncclResult_t groupStart();
ncclResult_t groupEnd();

} // namespace collcheck::nccl_double
