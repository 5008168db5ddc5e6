#include "tests/nccl_double/src/group.h"

#include "tests/nccl_double/src/communicator.h"
#include "tests/nccl_double/src/errors.h"

#include <sched.h>

#include <deque>
#include <string>
#include <utility>

namespace collcheck::nccl_double {
namespace {

// NCCL's group state is per thread.
struct GroupState {
  int depth = 0;
  std::vector<std::unique_ptr<Phase>> queued;
};
thread_local GroupState group;

struct CommProgress {
  ncclComm *comm;
  std::deque<std::unique_ptr<Phase>> phases;
  std::unique_ptr<PostedTransfers> posted;
};

// Queued phases per communicator, first-seen order, consecutive point-to-point ones merged.
std::vector<CommProgress> schedule(std::vector<std::unique_ptr<Phase>> phases) {
  std::vector<CommProgress> progress;
  for (std::unique_ptr<Phase> &phase : phases) {
    CommProgress *entry = nullptr;
    for (CommProgress &existing : progress)
      if (existing.comm == phase->comm)
        entry = &existing;
    if (entry == nullptr)
      entry = &progress.emplace_back(CommProgress{phase->comm, {}, nullptr});
    if (phase->pointToPoint && !entry->phases.empty() && entry->phases.back()->pointToPoint) {
      Phase &merged = *entry->phases.back();
      merged.transfers.insert(merged.transfers.end(), phase->transfers.begin(),
                              phase->transfers.end());
      for (auto &buffer : phase->staging)
        merged.staging.push_back(std::move(buffer)); // the bytes stay where the transfers point
      continue;
    }
    entry->phases.push_back(std::move(phase));
  }
  return progress;
}

ncclResult_t failPhase(CommProgress &entry, ncclResult_t result) {
  entry.comm->asyncError = result;
  const std::string operation = entry.phases.front()->operation;
  entry.phases.clear();
  entry.posted.reset();
  return fail(result,
              operation + " on " + entry.comm->transport->describe() + " failed: " + lastError());
}

// Advances the front phase of one communicator; sets `progressed` when it completed one.
ncclResult_t step(CommProgress &entry, bool &progressed) {
  Phase &phase = *entry.phases.front();
  if (!entry.posted) {
    if (phase.prepare)
      phase.prepare();
    NCCL_DOUBLE_CHECK(entry.comm->transport->post(phase.transfers, entry.posted));
  }
  bool done = false;
  NCCL_DOUBLE_CHECK(entry.posted->test(done));
  if (!done)
    return ncclSuccess;
  entry.posted.reset();
  if (phase.finish)
    NCCL_DOUBLE_CHECK(phase.finish());
  entry.phases.pop_front();
  progressed = true;
  return ncclSuccess;
}

ncclResult_t run(std::vector<std::unique_ptr<Phase>> phases) {
  std::vector<CommProgress> progress = schedule(std::move(phases));
  ncclResult_t firstError = ncclSuccess;
  for (bool pending = true; pending;) {
    pending = false;
    bool progressed = false;
    for (CommProgress &entry : progress) {
      if (entry.phases.empty())
        continue;
      if (ncclResult_t result = step(entry, progressed); result != ncclSuccess) {
        const ncclResult_t reported = failPhase(entry, result);
        if (firstError == ncclSuccess)
          firstError = reported;
      }
      pending = pending || !entry.phases.empty();
    }
    if (pending && !progressed)
      sched_yield(); // waiting on peers: other processes or the other ranks' threads
  }
  return firstError;
}

} // namespace

ncclResult_t submit(std::unique_ptr<Phase> phase) {
  if (group.depth > 0) {
    group.queued.push_back(std::move(phase));
    return ncclSuccess;
  }
  std::vector<std::unique_ptr<Phase>> single;
  single.push_back(std::move(phase));
  return run(std::move(single));
}

ncclResult_t groupStart() {
  ++group.depth;
  return ncclSuccess;
}

ncclResult_t groupEnd() {
  if (group.depth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without a matching ncclGroupStart");
  if (--group.depth > 0)
    return ncclSuccess;
  return run(std::exchange(group.queued, {}));
}

} // namespace collcheck::nccl_double
