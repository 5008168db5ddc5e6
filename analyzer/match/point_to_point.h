// Matches NCCL sends and receives of one communicator: per ordered pair of ranks, the k-th send
// from a to b pairs with the k-th receive at b from a (NCCL keeps that order). Unmatched calls wait
// in per-pair queues, so memory is the number of calls in flight, not the trace length.
#pragma once

#include "analyzer/checks/rule.h"

#include <deque>
#include <functional>
#include <map>
#include <utility>

namespace collcheck::analyzer {

class PointToPointMatcher {
public:
  using Emit = std::function<void(const PointToPointEvent &)>;
  // A Send or Recv record of this communicator.
  void add(const Communicator &comm, const format::Record &r, const Emit &emit);
  // At the end of the traces: every call still waiting, with what its peer's trace says.
  void finish(const Communicator &comm, const std::function<Presence(int32_t)> &peerState,
              const Emit &emit);
  uint64_t matched() const { return matched_; }
  // Calls still waiting for their other side.
  bool waiting() const { return !sends_.empty() || !recvs_.empty(); }

private:
  using Pair = std::pair<int32_t, int32_t>; // (sender, receiver) in comm ranks
  std::map<Pair, std::deque<format::Record>> sends_, recvs_;
  uint64_t matched_ = 0;
};

} // namespace collcheck::analyzer
