#include "tests/analyzer/job_builder.h"

#include "format/writer.h"

#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace collcheck::testing {

using namespace format;

CallSpec allreduce(uint64_t count, ReduceOp op) {
  CallSpec s;
  s.count = count;
  s.op = op;
  return s;
}
CallSpec bcast(uint64_t count, int32_t root) {
  CallSpec s;
  s.kind = Kind::Broadcast;
  s.count = count;
  s.op = ReduceOp::None;
  s.root = root;
  return s;
}
CallSpec barrier() {
  CallSpec s;
  s.kind = Kind::Barrier;
  s.count = 0;
  s.dataType = DataType::None;
  s.op = ReduceOp::None;
  return s;
}

RankTrace::RankTrace(int worldRank, int worldSize) : worldRank_(worldRank), worldSize_(worldSize) {
  std::vector<int32_t> members;
  for (int r = 0; r < worldSize; ++r)
    members.push_back(r);
  comm(kWorld, worldRank, members, CommOrigin::World, 0, -1);
}

Record RankTrace::base(Kind kind, uint64_t commId) {
  Record r{};
  r.kind = static_cast<uint8_t>(kind);
  r.commId = commId;
  r.commRank = commRankOf(commId);
  r.peer = -1;
  r.window = window_;
  r.tscStart = tsc_;
  tsc_ += 1000;
  return r;
}

int32_t RankTrace::commRankOf(uint64_t id) const {
  for (auto [comm, rank] : commRanks_)
    if (comm == id)
      return rank;
  return -1;
}

uint64_t RankTrace::nextSeq(uint64_t id) {
  for (auto &[comm, seq] : seqs_)
    if (comm == id)
      return seq++;
  seqs_.emplace_back(id, 1);
  return 0;
}

RankTrace &RankTrace::comm(uint64_t id, int32_t commRank, const std::vector<int32_t> &members,
                           CommOrigin origin, uint64_t parent, int32_t color) {
  commRanks_.emplace_back(id, commRank);
  Record c = base(Kind::CommCreate, id);
  c.count = members.size();
  c.aux = parent;
  c.peer = color;
  c.op = static_cast<uint8_t>(origin);
  append(c);
  for (size_t first = 0; first < members.size(); first += kMembersPerRecord) {
    Record m{};
    m.kind = static_cast<uint8_t>(Kind::CommMembers);
    m.commId = id;
    m.commRank = commRank;
    for (int i = 0; i < kMembersPerRecord; ++i)
      setMemberAt(m, i, first + i < members.size() ? members[first + i] : -1);
    m.setSeqThread(first, 0);
    append(m);
  }
  return *this;
}

RankTrace &RankTrace::ncclComm(uint64_t id, int32_t commRank, int32_t size) {
  commRanks_.emplace_back(id, commRank);
  Record c = base(Kind::CommCreate, id);
  c.count = static_cast<uint64_t>(size);
  c.peer = -1;
  c.op = static_cast<uint8_t>(CommOrigin::NcclInitRank);
  c.flags = kFlagNccl;
  append(c);
  Record m{};
  m.kind = static_cast<uint8_t>(Kind::CommMembers);
  m.commId = id;
  m.commRank = commRank;
  m.flags = kFlagNccl;
  for (int i = 0; i < kMembersPerRecord; ++i)
    setMemberAt(m, i, i == 0 ? worldRank_ : -1);
  m.setSeqThread(static_cast<uint64_t>(commRank), 0);
  return append(m);
}

RankTrace &RankTrace::call(const CallSpec &spec, uint64_t commId, bool didReturn) {
  Record r = base(spec.kind, commId);
  r.setSeqThread(nextSeq(commId), 0);
  r.count = spec.count;
  r.dataType = static_cast<uint8_t>(spec.dataType);
  r.op = static_cast<uint8_t>(spec.op);
  r.peer = spec.root;
  r.aux = spec.aux;
  r.flags = spec.flags;
  return append(r, didReturn);
}

RankTrace &RankTrace::repeat(const CallSpec &spec, int times, uint64_t commId) {
  for (int i = 0; i < times; ++i)
    call(spec, commId);
  return *this;
}

RankTrace &RankTrace::pointToPoint(Kind kind, uint64_t commId, int32_t peer, uint64_t count) {
  CallSpec s;
  s.kind = kind;
  s.count = count;
  s.op = ReduceOp::None;
  s.root = peer;
  s.flags = kFlagNccl;
  return call(s, commId);
}

RankTrace &RankTrace::send(uint64_t commId, int32_t peer, uint64_t count) {
  return pointToPoint(Kind::Send, commId, peer, count);
}

RankTrace &RankTrace::recv(uint64_t commId, int32_t peer, uint64_t count) {
  return pointToPoint(Kind::Recv, commId, peer, count);
}

RankTrace &RankTrace::append(const Record &r, bool didReturn) {
  // The two lists stay in step: one entry each per record.
  records.push_back(r);
  returned.push_back(didReturn);
  return *this;
}

RankTrace &RankTrace::window(uint32_t w) {
  window_ = w;
  Record r = base(Kind::WindowBegin, 0);
  r.count = w;
  return append(r);
}

RankTrace &RankTrace::declare(Kind kind, double value, uint8_t how) {
  Record r = base(kind, 0);
  r.op = how;
  r.setAuxDouble(value);
  return append(r);
}

RankTrace &RankTrace::finalize() { return append(base(Kind::Finalize, 0)); }

RankTrace &RankTrace::finished(bool yes) {
  isFinished = yes;
  return *this;
}

std::vector<std::string> writeJob(const std::string &dir, const std::vector<RankTrace> &ranks,
                                  const std::string &jobId) {
  std::vector<std::string> paths;
  for (const RankTrace &rank : ranks) {
    std::string error;
    Writer::Identity id{"testhost", jobId, "synthetic", 1000 + rank.worldRank()};
    auto w = Writer::create(dir, "rank" + std::to_string(rank.worldRank()), id, error);
    if (!w)
      throw std::runtime_error(error);
    w->header().worldRank = rank.worldRank();
    w->header().worldSize = static_cast<int32_t>(ranks.size());
    for (size_t i = 0; i < rank.records.size(); ++i) {
      Record *slot = w->reserve();
      *slot = rank.records[i];
      publish(*slot);
      if (rank.returned[i])
        storeDuration(*slot, 1600, false);
    }
    paths.push_back(w->path());
    if (rank.isFinished)
      w->finish();
    else
      w->abandon(); // as SIGKILL leaves it: never marked finished
  }
  return paths;
}

std::vector<RankTrace> uniformJob(int n, const std::vector<CallSpec> &calls) {
  std::vector<RankTrace> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.emplace_back(r, n);
    for (const CallSpec &c : calls)
      ranks.back().call(c);
    ranks.back().finalize();
  }
  return ranks;
}

} // namespace collcheck::testing
