// Test helper: writes synthetic per-rank trace files through the real format::Writer, so analyzer
// tests describe a job in a few lines ("rank 3 skips the barrier") and get the files a traced job
// would leave.
#pragma once

#include "format/record.h"
#include "tests/support/scratch.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collcheck::testing {

inline constexpr uint64_t kWorld = 0x776f726c64000001ull;

struct CallSpec {
  format::Kind kind = format::Kind::AllReduce;
  uint64_t count = 1024;
  format::DataType dataType = format::DataType::Float32;
  format::ReduceOp op = format::ReduceOp::Sum;
  int32_t root = -1;
  uint64_t aux = 0;
  uint8_t flags = 0;
};
CallSpec allreduce(uint64_t count = 1024, format::ReduceOp op = format::ReduceOp::Sum);
CallSpec bcast(uint64_t count, int32_t root);
CallSpec barrier();

class RankTrace {
public:
  RankTrace(int worldRank, int worldSize);
  // A communicator this rank is a member of (world is created by the constructor).
  RankTrace &comm(uint64_t id, int32_t commRank, const std::vector<int32_t> &members,
                  format::CommOrigin origin = format::CommOrigin::Split, uint64_t parent = kWorld,
                  int32_t color = 0);
  // An NCCL communicator: the size is known, the member list holds only this rank's world rank.
  RankTrace &ncclComm(uint64_t id, int32_t commRank, int32_t size);
  // One call on `commId`, next sequence number; `returned` false: it never returned.
  RankTrace &call(const CallSpec &spec, uint64_t commId = kWorld, bool returned = true);
  RankTrace &repeat(const CallSpec &spec, int times, uint64_t commId = kWorld);
  RankTrace &send(uint64_t commId, int32_t peer, uint64_t count);
  RankTrace &recv(uint64_t commId, int32_t peer, uint64_t count);
  RankTrace &window(uint32_t w);
  // An annotation of the current window: ValidCount, Normalization (`how` its LossNormalization)
  // or ReducerScale, with its value.
  RankTrace &declare(format::Kind kind, double value, uint8_t how = 0);
  RankTrace &finalize();
  // Cleanly exited (header `finished`); false leaves the file as a killed process would.
  RankTrace &finished(bool yes);

  int worldRank() const { return worldRank_; }
  std::vector<format::Record> records;
  std::vector<bool> returned;
  bool isFinished = true;

private:
  int32_t commRankOf(uint64_t id) const;
  uint64_t nextSeq(uint64_t id);
  format::Record base(format::Kind kind, uint64_t commId);
  RankTrace &append(const format::Record &r, bool didReturn = true);
  RankTrace &pointToPoint(format::Kind kind, uint64_t commId, int32_t peer, uint64_t count);
  int worldRank_, worldSize_;
  std::vector<std::pair<uint64_t, uint64_t>> seqs_;     // comm id -> next seq
  std::vector<std::pair<uint64_t, int32_t>> commRanks_; // comm id -> my rank
  uint32_t window_ = 0;
  uint64_t tsc_ = 1000;
};

// Writes one file per rank into `dir` (stem rank<N>); returns the paths.
std::vector<std::string> writeJob(const std::string &dir, const std::vector<RankTrace> &ranks,
                                  const std::string &jobId = "job-1");
// `n` ranks that all issue `calls`, finished.
std::vector<RankTrace> uniformJob(int n, const std::vector<CallSpec> &calls);

} // namespace collcheck::testing
