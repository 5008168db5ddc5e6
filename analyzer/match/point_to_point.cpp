#include "analyzer/match/point_to_point.h"

#include "analyzer/model/signature.h"

namespace collcheck::analyzer {

void PointToPointMatcher::add(const Communicator &comm, const format::Record &r, const Emit &emit) {
  bool isSend = kindOf(r) == Kind::Send;
  Pair pair = isSend ? Pair{r.commRank, r.peer} : Pair{r.peer, r.commRank};
  auto &mine = isSend ? sends_ : recvs_;
  auto &theirs = isSend ? recvs_ : sends_;
  auto it = theirs.find(pair);
  if (it == theirs.end() || it->second.empty()) {
    mine[pair].push_back(r);
    return;
  }
  format::Record other = it->second.front();
  it->second.pop_front();
  if (it->second.empty())
    theirs.erase(it);
  ++matched_;
  const format::Record &send = isSend ? r : other;
  const format::Record &recv = isSend ? other : r;
  emit({comm, &send, &recv, pair.first, pair.second, false, Presence::Matched});
}

void PointToPointMatcher::finish(const Communicator &comm,
                                 const std::function<Presence(int32_t)> &peerState,
                                 const Emit &emit) {
  for (auto *side : {&sends_, &recvs_}) {
    bool isSend = side == &sends_;
    for (const auto &[pair, calls] : *side) {
      int32_t peer = isSend ? pair.second : pair.first;
      for (const format::Record &r : calls)
        emit({comm, isSend ? &r : nullptr, isSend ? nullptr : &r, pair.first, pair.second, true,
              peerState(peer)});
    }
  }
  sends_.clear();
  recvs_.clear();
}

} // namespace collcheck::analyzer
