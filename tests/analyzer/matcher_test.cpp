// The matcher and the trace rules on synthetic jobs: each finding class from the smallest job that
// has it, correct jobs without any finding, and the honest handling of incomplete input.
#include "tests/analyzer/analysis_helpers.h"
#include "tests/analyzer/job_builder.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <random>

using namespace collcheck;
using namespace collcheck::testing;
using format::DataType;
using format::Kind;
using format::ReduceOp;

namespace {

std::vector<int32_t> ranksOf(const analyzer::Finding &f, std::string_view role) {
  std::vector<int32_t> out;
  for (const auto &g : f.groups)
    if (g.role == role)
      out.insert(out.end(), g.ranks.begin(), g.ranks.end());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Matcher, CorrectJobHasNoFinding) {
  std::string dir = freshDir("clean");
  writeJob(dir, uniformJob(4, {allreduce(), bcast(16, 0), barrier(), allreduce(1)}));
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.findings.empty()) << a.describe();
  EXPECT_EQ(a.result.positions, 4u);
  ASSERT_EQ(a.result.communicators.size(), 1u);
  EXPECT_EQ(a.result.communicators[0].comm.label, "world");
}

TEST(Matcher, RankDependentButUniformConditionsAreClean) {
  // Rank 0 takes one branch, the others another; both branches issue the same calls, and a
  // sub-communicator is used only by its members.
  std::string dir = freshDir("uniform");
  std::vector<RankTrace> ranks;
  constexpr uint64_t kEven = 0x1111, kOdd = 0x2222;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    bool even = r % 2 == 0;
    t.comm(even ? kEven : kOdd, r / 2, even ? std::vector<int32_t>{0, 2} : std::vector{1, 3},
           format::CommOrigin::Split, kWorld, even ? 0 : 1);
    for (int step = 0; step < 50; ++step) {
      t.call(allreduce(256));
      if (even)
        t.call(bcast(8, 0), kEven); // only the even ranks' communicator
      else
        t.call(allreduce(4), kOdd).call(allreduce(4), kOdd);
    }
    t.finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.findings.empty()) << a.describe();
  EXPECT_EQ(a.result.communicators.size(), 3u);
}

TEST(Matcher, SkippedCollectiveIsOneMissingParticipantAndAnalysisGoesOn) {
  std::string dir = freshDir("skip");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    for (int step = 0; step < 20; ++step) {
      ranks.back().call(allreduce(1024));
      if (!(r == 3 && step == 7))
        ranks.back().call(allreduce(1, ReduceOp::Max)); // rank 3 skips it once
    }
    ranks.back().finalize();
  }
  // A later, independent bug must still be found after the resynchronization.
  ranks[1].call(allreduce(5));
  for (int r : {0, 2, 3})
    ranks[static_cast<size_t>(r)].call(allreduce(6));
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto missing = a.of("missing-participant");
  ASSERT_EQ(missing.size(), 1u) << a.describe();
  EXPECT_EQ(ranksOf(missing[0], "issued"), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ranksOf(missing[0], "did not issue"), (std::vector<int32_t>{3}));
  EXPECT_EQ(missing[0].firstSeq, 15u); // step 7's second call on ranks 0-2
  auto count = a.of("count-mismatch");
  ASSERT_EQ(count.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings.size(), 2u) << a.describe();
}

TEST(Matcher, ExtraCollectiveOnOneRank) {
  std::string dir = freshDir("extra");
  auto ranks = uniformJob(3, {});
  for (auto &t : ranks) {
    t.records.pop_back(); // drop finalize, rebuild below
    t.returned.pop_back();
    t.repeat(allreduce(64), 5);
    if (t.worldRank() == 0)
      t.call(barrier());
    t.repeat(allreduce(64), 5).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto missing = a.of("missing-participant");
  ASSERT_EQ(missing.size(), 1u) << a.describe();
  EXPECT_EQ(ranksOf(missing[0], "issued"), (std::vector<int32_t>{0}));
  EXPECT_EQ(ranksOf(missing[0], "did not issue"), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(a.findings.size(), 1u) << a.describe();
}

TEST(Matcher, RepeatedExtraCollectivesAreOneFindingWithTheirCountAndRange) {
  std::string dir = freshDir("extra-repeated");
  auto ranks = uniformJob(3, {});
  for (auto &t : ranks) {
    t.records.pop_back();
    t.returned.pop_back();
    t.repeat(allreduce(64), 2);
    if (t.worldRank() == 0)
      t.repeat(barrier(), 7); // seq 2 to 8 on rank 0 only
    t.repeat(allreduce(64), 2).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto missing = a.of("missing-participant");
  ASSERT_EQ(missing.size(), 1u) << a.describe();
  EXPECT_EQ(missing[0].repeats, 7u) << a.describe();
  EXPECT_EQ(missing[0].firstSeq, 2u) << a.describe();
  EXPECT_EQ(missing[0].lastSeq, 8u) << a.describe();
  EXPECT_EQ(ranksOf(missing[0], "issued"), (std::vector<int32_t>{0}));
  EXPECT_EQ(a.findings.size(), 1u) << a.describe();
}

TEST(Matcher, RepeatedMismatchIsOneFindingWithCountAndRange) {
  std::string dir = freshDir("repeat");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    for (uint32_t step = 0; step < 10000; ++step) {
      ranks.back().window(step);
      ranks.back().call(allreduce(r == 2 ? 1000 : 1024));
    }
    ranks.back().finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  const auto &f = a.findings[0];
  EXPECT_EQ(f.ruleId, "count-mismatch");
  EXPECT_EQ(f.repeats, 10000u);
  EXPECT_EQ(f.firstSeq, 0u);
  EXPECT_EQ(f.lastSeq, 9999u);
  EXPECT_EQ(f.firstWindow, 0u);
  EXPECT_EQ(f.lastWindow, 9999u);
  EXPECT_EQ(ranksOf(f, "differs"), (std::vector<int32_t>{2}));
}

struct SignatureCase {
  const char *rule;
  CallSpec good, bad;
};

// Test names carry the rule; the parameter prints as its rule too, not as raw bytes.
void PrintTo(const SignatureCase &c, std::ostream *out) { *out << c.rule; }

class SignatureMismatch : public ::testing::TestWithParam<SignatureCase> {};

TEST_P(SignatureMismatch, IsReportedByItsRuleAlone) {
  const SignatureCase &c = GetParam();
  std::string dir = freshDir(std::string("sig-") + c.rule);
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call(barrier()).call(r == 1 ? c.bad : c.good).call(barrier()).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, c.rule) << a.describe();
  EXPECT_EQ(a.findings[0].firstSeq, 1u);
  EXPECT_EQ(ranksOf(a.findings[0], "differs"), (std::vector<int32_t>{1}));
}

CallSpec withType(CallSpec s, DataType t) {
  s.dataType = t;
  return s;
}
CallSpec premul(double scalar) {
  CallSpec s = allreduce(1024, ReduceOp::PreMulSum);
  std::memcpy(&s.aux, &scalar, sizeof scalar);
  s.flags = format::kFlagNccl;
  return s;
}
CallSpec nonBlocking(CallSpec s) {
  s.flags |= format::kFlagNonBlocking;
  return s;
}
// A persistent collective's initialization (MPI_<name>_init).
CallSpec persistent(CallSpec s) {
  s.flags |= format::kFlagPersistent;
  return s;
}
CallSpec allgather(uint64_t count) {
  CallSpec s;
  s.kind = Kind::AllGather;
  s.count = count;
  s.op = ReduceOp::None;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, SignatureMismatch,
    ::testing::Values(
        SignatureCase{"kind-mismatch", allreduce(16), bcast(16, 0)},
        SignatureCase{"kind-mismatch", allreduce(16), nonBlocking(allreduce(16))},
        SignatureCase{"kind-mismatch", allreduce(16), persistent(allreduce(16))},
        SignatureCase{"kind-mismatch", nonBlocking(allreduce(16)), persistent(allreduce(16))},
        SignatureCase{"count-mismatch", persistent(allreduce(1024)), persistent(allreduce(1023))},
        SignatureCase{"count-mismatch", allreduce(1024), allreduce(1023)},
        SignatureCase{"count-mismatch", allgather(8), allgather(16)},
        SignatureCase{"datatype-mismatch", allreduce(), withType(allreduce(), DataType::Int32)},
        SignatureCase{"reduce-op-mismatch", allreduce(64, ReduceOp::Sum),
                      allreduce(64, ReduceOp::Avg)},
        SignatureCase{"premulsum-scalar-mismatch", premul(0.25), premul(0.5)},
        SignatureCase{"root-mismatch", bcast(16, 0), bcast(16, 1)}),
    [](const auto &info) {
      std::string name = info.param.rule;
      std::replace(name.begin(), name.end(), '-', '_');
      return name + "_" + std::to_string(info.index);
    });

TEST(Matcher, ReorderIsOneFindingShowingBothOrders) {
  std::string dir = freshDir("reorder");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    t.repeat(allreduce(1024), 3);
    if (r == 3)
      t.call(bcast(8, 0)).call(allreduce(1, ReduceOp::Max));
    else
      t.call(allreduce(1, ReduceOp::Max)).call(bcast(8, 0));
    t.repeat(allreduce(1024), 3).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  const auto &f = a.findings[0];
  EXPECT_EQ(f.ruleId, "collective-reorder");
  EXPECT_EQ(f.firstSeq, 3u);
  EXPECT_EQ(f.lastSeq, 4u);
  EXPECT_NE(f.message.find("broadcast"), std::string::npos);
  EXPECT_EQ(ranksOf(f, "other order"), (std::vector<int32_t>{3}));
  EXPECT_EQ(ranksOf(f, "order"), (std::vector<int32_t>{0, 1, 2}));
}

TEST(Matcher, ReorderSplitEvenlyBlamesNeitherHalf) {
  std::string dir = freshDir("reorder-tie");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    if (r >= 2)
      t.call(bcast(8, 0)).call(allreduce(1, ReduceOp::Max));
    else
      t.call(allreduce(1, ReduceOp::Max)).call(bcast(8, 0));
    t.finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  const auto &f = a.findings[0];
  EXPECT_EQ(f.ruleId, "collective-reorder");
  EXPECT_EQ(ranksOf(f, "disagree"), (std::vector<int32_t>{0, 1, 2, 3})) << f.message;
  EXPECT_TRUE(ranksOf(f, "order").empty() && ranksOf(f, "other order").empty()) << f.message;
  EXPECT_NE(f.message.find("the ranks disagree on the order"), std::string::npos) << f.message;
}

// An even split has no majority: the finding shows both sides and takes neither as the
// reference, whatever the field and whichever rank comes first.
TEST_P(SignatureMismatch, AnEvenSplitBlamesNeitherSide) {
  const SignatureCase &c = GetParam();
  for (int size : {2, 4}) {
    std::string dir = freshDir(std::string("tie-") + c.rule + std::to_string(size));
    std::vector<RankTrace> ranks;
    for (int r = 0; r < size; ++r) {
      ranks.emplace_back(r, size);
      ranks.back().call(r < size / 2 ? c.good : c.bad).finalize();
    }
    writeJob(dir, ranks);
    Analyzed a = analyzeDir(dir);
    ASSERT_EQ(a.findings.size(), 1u) << a.describe();
    const auto &f = a.findings[0];
    EXPECT_EQ(f.ruleId, c.rule) << a.describe();
    ASSERT_EQ(f.groups.size(), 2u) << a.describe();
    for (const auto &g : f.groups)
      EXPECT_EQ(g.role, "disagree") << a.describe();
    EXPECT_EQ(f.groups[0].ranks.size(), static_cast<size_t>(size / 2));
    EXPECT_NE(f.message.find("the ranks disagree"), std::string::npos) << f.message;
  }
}

TEST(Matcher, HangNamesWaitingRanksCulpritAndWhereItIs) {
  // Ranks 0-2 wait in a world barrier; rank 3 is stuck in a barrier on a communicator the others
  // never enter.
  std::string dir = freshDir("hang");
  constexpr uint64_t kSub = 0x5555;
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    RankTrace &t = ranks.back();
    if (r == 0 || r == 3)
      t.comm(kSub, r == 3 ? 1 : 0, {0, 3});
    t.repeat(allreduce(8), 6);
    if (r == 3)
      t.call(barrier(), kSub, false);
    else
      t.call(barrier(), kWorld, false);
    t.finished(false);
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto hangs = a.of("hang");
  ASSERT_GE(hangs.size(), 1u) << a.describe();
  const auto &world = hangs[0].commLabel == "world" ? hangs[0] : hangs.back();
  EXPECT_EQ(world.commLabel, "world") << a.describe();
  EXPECT_EQ(world.firstSeq, 6u);
  EXPECT_EQ(ranksOf(world, "waiting"), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(ranksOf(world, "waited for"), (std::vector<int32_t>{3}));
  bool placed = false;
  for (const auto &g : world.groups)
    placed = placed ||
             (g.role == "waited for" && g.detail.find("stuck in barrier") != std::string::npos);
  EXPECT_TRUE(placed) << a.describe();
  EXPECT_TRUE(a.of("missing-participant").empty()) << a.describe();
}

TEST(Matcher, CallThatNobodyReturnedFromIsAHangInside) {
  std::string dir = freshDir("inside");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back(r, 3);
    ranks.back().repeat(allreduce(8), 3).call(allreduce(8), kWorld, false).finished(false);
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, "hang");
  EXPECT_EQ(ranksOf(a.findings[0], "stuck"), (std::vector<int32_t>{0, 1, 2}));
}

TEST(Matcher, MissingRankFileIsUndecidableNotMissing) {
  std::string dir = freshDir("missing-file");
  auto paths = writeJob(dir, uniformJob(4, {allreduce(), barrier()}));
  std::filesystem::remove(paths[2]);
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.of("missing-participant").empty()) << a.describe();
  auto incomplete = a.of("incomplete-trace");
  ASSERT_FALSE(incomplete.empty()) << a.describe();
  bool named = false;
  for (const auto &f : incomplete)
    named = named || f.message.find("no trace file for rank 2") != std::string::npos;
  EXPECT_TRUE(named) << a.describe();
  EXPECT_EQ(a.traces.missingRanks, (std::vector<int32_t>{2}));
}

TEST(Matcher, TornRecordMakesThatPositionUndecidable) {
  std::string dir = freshDir("torn");
  auto paths = writeJob(dir, uniformJob(3, {allreduce(), allreduce(2), allreduce(3), barrier()}));
  // Clear the check of rank 1's second call: a record written but never published.
  std::fstream f(paths[1], std::ios::in | std::ios::out | std::ios::binary);
  size_t slot = 4; // comm_create, comm_members, allreduce, [allreduce(2)]
  uint16_t zero = 0;
  f.seekp(static_cast<std::streamoff>(format::kHeaderSize + (slot - 1) * format::kRecordSize));
  f.write(reinterpret_cast<const char *>(&zero), sizeof zero);
  f.close();
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.of("missing-participant").empty()) << a.describe();
  EXPECT_TRUE(a.of("count-mismatch").empty()) << a.describe();
  ASSERT_FALSE(a.of("incomplete-trace").empty()) << a.describe();
}

TEST(Matcher, SendRecvSizeMismatchAndUnmatchedSend) {
  std::string dir = freshDir("p2p");
  constexpr uint64_t kNccl = 0x9999;
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back(r, 2);
    ranks.back().ncclComm(kNccl, 1 - r, 2); // comm ranks reversed: names are world ranks
  }
  ranks[0].send(kNccl, 0, 100).send(kNccl, 0, 7).finalize(); // to comm rank 0 = world rank 1
  ranks[1].recv(kNccl, 1, 50).finalize();
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto p2p = a.of("send-recv-mismatch");
  ASSERT_EQ(p2p.size(), 2u) << a.describe();
  EXPECT_NE(p2p[0].message.find("rank 0 sends 100 x float32 to rank 1"), std::string::npos)
      << a.describe();
  EXPECT_NE(p2p[0].message.find("which receives 50"), std::string::npos) << a.describe();
  EXPECT_NE(p2p[1].message.find("never posts the matching receive"), std::string::npos)
      << a.describe();
}

TEST(Matcher, SendToARankTheCommunicatorDoesNotHaveIsReported) {
  std::string dir = freshDir("p2p-out-of-range");
  constexpr uint64_t kNccl = 0x9998;
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back(r, 2);
    ranks.back().ncclComm(kNccl, r, 2);
  }
  ranks[0].send(kNccl, 5, 16).finalize(); // a communicator of 2 has no rank 5
  ranks[1].finalize();
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto p2p = a.of("send-recv-mismatch");
  ASSERT_EQ(p2p.size(), 1u) << a.describe();
  EXPECT_NE(p2p[0].message.find("rank 0 sends 16 x float32 to rank 5"), std::string::npos)
      << a.describe();
  EXPECT_NE(p2p[0].message.find("a rank the communicator does not have"), std::string::npos)
      << a.describe();
}

TEST(Matcher, VariableCountTotalsMustAddUp) {
  std::string dir = freshDir("gatherv");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back(r, 3);
    CallSpec g;
    g.kind = Kind::Gatherv;
    g.op = ReduceOp::None;
    g.root = 0;
    g.count = static_cast<uint64_t>(r + 1); // 1 + 2 + 3 = 6
    g.aux = r == 0 ? 6 : 0;
    ranks.back().call(g);
    g.aux = r == 0 ? 7 : 0; // the root expects one element too many
    ranks.back().call(g).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, "count-mismatch");
  EXPECT_EQ(a.findings[0].firstSeq, 1u);
}

namespace {

// A fixed-count gather, scatter, allgather or alltoall of `count` int32 per rank; `other` is what
// the tracer recorded of the side the count is not (format::OtherSide), in `aux` where it differs.
CallSpec exchange(Kind kind, uint64_t count, format::OtherSide other, uint64_t aux = 0,
                  int32_t root = -1) {
  CallSpec c;
  c.kind = kind;
  c.count = count;
  c.dataType = format::DataType::Int32;
  c.op = static_cast<ReduceOp>(other); // these kinds keep the other side in op
  c.aux = aux;
  c.root = root;
  return c;
}

} // namespace

// Every rank passes the same count, but the side that count is not disagrees with it: the root of
// a gather expects more than each rank sends, the root of a scatter sends more than each rank
// receives, a rank of an allgather or alltoall expects more than the others send.
TEST(Matcher, FixedCountReceiveSideMustMatchTheSenders) {
  using format::OtherSide;
  const int size = 4;
  struct Case {
    Kind kind;
    int32_t root;
    int32_t differing; // the rank whose other side is 3 where every count is 2
    std::string message;
  };
  const std::vector<Case> cases = {
      {Kind::Gather, 0, 0,
       "gather: the root expects 3 elements from each rank but ranks 0-3 send 2"},
      {Kind::Scatter, 1, 1,
       "scatter: the root sends 3 elements to each rank but ranks 0-3 expect 2"},
      {Kind::AllGather, -1, 2,
       "allgather: rank 2 expects 3 elements from each rank but ranks 0-3 send 2"},
      {Kind::AllToAll, -1, 3,
       "alltoall: rank 3 expects 3 elements from each rank but ranks 0-3 send 2"},
  };
  for (const Case &c : cases) {
    std::string dir = freshDir("other-side-" + std::string(format::kindName(c.kind)));
    std::vector<RankTrace> ranks;
    for (int r = 0; r < size; ++r) {
      ranks.emplace_back(r, size);
      // Where the root's side is significant only at the root, the others record nothing.
      OtherSide agreeing =
          c.root >= 0 && r != c.root ? OtherSide::NotRecorded : OtherSide::SameAsCount;
      ranks.back().call(exchange(c.kind, 2, agreeing, 0, c.root));
      ranks.back().call(r == c.differing ? exchange(c.kind, 2, OtherSide::InAux, 3, c.root)
                                         : exchange(c.kind, 2, agreeing, 0, c.root));
      ranks.back().finalize();
    }
    writeJob(dir, ranks);
    Analyzed a = analyzeDir(dir);
    ASSERT_EQ(a.findings.size(), 1u) << a.describe();
    const auto &f = a.findings[0];
    EXPECT_EQ(f.ruleId, "count-mismatch") << a.describe();
    EXPECT_EQ(f.firstSeq, 1u) << a.describe();
    EXPECT_NE(f.message.find(c.message), std::string::npos) << f.message;
    ASSERT_EQ(f.groups.size(), 2u) << a.describe();
    EXPECT_EQ(f.groups[0].ranks, std::vector<int32_t>{c.differing}) << a.describe();
    EXPECT_NE(f.groups[0].detail.find(c.kind == Kind::Scatter ? ", sends 3 per rank"
                                                              : ", receives 3 per rank"),
              std::string::npos)
        << f.groups[0].detail;
    // The other side's call as a rank that does not record the differing count made it.
    EXPECT_EQ(f.groups[1].detail.find(" per rank"), std::string::npos) << f.groups[1].detail;
  }
}

// Older writers, MPI_IN_PLACE and NCCL record no other side (op 0, aux 0 or another meaning):
// nothing to compare, never a mismatch.
TEST(Matcher, UnrecordedReceiveSideIsNoMismatch) {
  std::string dir = freshDir("other-side-absent");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back(r, 3);
    ranks.back().call(exchange(Kind::Gather, 2, format::OtherSide::NotRecorded, 0, 0));
    ranks.back().call(exchange(Kind::AllToAll, 5, format::OtherSide::NotRecorded));
    CallSpec nccl = exchange(Kind::AllGather, 8, format::OtherSide::NotRecorded);
    nccl.flags = format::kFlagNccl;
    nccl.op = ReduceOp::Sum; // NCCL's records keep op as theirs: not read as the other side
    nccl.aux = 99;
    const uint64_t kNccl = 0x77;
    ranks.back().ncclComm(kNccl, r, 3).call(nccl, kNccl);
    ranks.back().finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.findings.empty()) << a.describe();
}

// A derived type keeps its description in aux where the other side equals the count; where it
// differs aux holds that instead, and the datatype rule must not read it as a description.
TEST(Matcher, ReceiveSideInAuxIsNoDerivedTypeDescription) {
  using format::OtherSide;
  std::string dir = freshDir("other-side-derived");
  const uint64_t mixed = format::derivedMixedAux(0x1234abcd, 1, 8);
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.emplace_back(r, 3);
    CallSpec c = exchange(Kind::AllGather, 2, OtherSide::SameAsCount, mixed);
    c.dataType = format::DataType::Mixed;
    c.flags = format::kFlagDerived;
    ranks.back().call(c);
    if (r == 1) { // expects 4 units from each rank
      c.op = static_cast<ReduceOp>(OtherSide::InAux);
      c.aux = 4;
    }
    ranks.back().call(c).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, "count-mismatch") << a.describe();
  EXPECT_NE(a.findings[0].message.find("rank 1 expects 4 elements from each rank but ranks 0-2 "
                                       "send 2"),
            std::string::npos)
      << a.findings[0].message;
}

TEST(Matcher, FileClaimingAnotherWorldSizeIsNamed) {
  std::string dir = freshDir("world-size");
  auto paths = writeJob(dir, uniformJob(4, {allreduce(), barrier()}));
  {
    std::fstream f(paths[3], std::ios::in | std::ios::out | std::ios::binary);
    int32_t claimed = 9;
    f.seekp(offsetof(format::FileHeader, worldSize));
    f.write(reinterpret_cast<const char *>(&claimed), sizeof claimed);
  }
  Analyzed a = analyzeDir(dir);
  bool named = false;
  for (const auto &p : a.traces.problems)
    named = named || (p.file == paths[3] &&
                      p.reason.find("claims a world size of 9, while 3 other "
                                    "file(s) of the job claim 4") != std::string::npos);
  EXPECT_TRUE(named) << a.describe();
  // The larger claim is kept: no rank is dropped, the ranks it adds are named as missing.
  EXPECT_EQ(a.traces.missingRanks, (std::vector<int32_t>{4, 5, 6, 7, 8}));
}

TEST(Matcher, ProblemsOfOneFileAreNamedUpToABoundAndCounted) {
  std::string dir = freshDir("many-problems");
  auto ranks = uniformJob(2, {barrier()});
  for (uint64_t c = 0; c < 100; ++c) // calls on 100 communicators no trace created
    ranks[0].call(barrier(), 0x1000 + c);
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  size_t named = 0, counted = 0;
  for (const auto &p : a.result.problems) {
    named += p.reason.find("no trace records the creation") != std::string::npos;
    counted += p.file.empty() && p.reason.find("84 further problem(s)") != std::string::npos;
  }
  EXPECT_EQ(named, 16u) << a.describe();
  EXPECT_EQ(counted, 1u) << a.describe();
}

TEST(Matcher, TwoFilesClaimingOneRankAreNamedAndTheOtherRanksChecked) {
  std::string dir = freshDir("one-rank-twice");
  auto ranks = uniformJob(3, {allreduce(), barrier()});
  ranks[1].call(bcast(8, 0)); // rank 1 alone: a finding the analysis must still make
  auto paths = writeJob(dir, ranks);
  // A second run's file of rank 2 in the same folder.
  std::filesystem::copy_file(paths[2], dir + "/rank2-again.cctrace");
  Analyzed a = analyzeDir(dir);
  EXPECT_FALSE(a.traces.fatal);
  size_t named = 0;
  for (const auto &p : a.traces.problems)
    named += p.unusable && p.reason.find("claims world rank 2, as does") != std::string::npos;
  EXPECT_EQ(named, 2u) << a.describe();
  EXPECT_EQ(a.traces.files.size(), 2u);
  EXPECT_EQ(a.traces.missingRanks, (std::vector<int32_t>{2}));
  auto extra = a.of("missing-participant");
  ASSERT_EQ(extra.size(), 1u) << a.describe();
  EXPECT_EQ(ranksOf(extra[0], "issued"), (std::vector<int32_t>{1}));
}

TEST(Matcher, TracesOfTwoJobsAreRefused) {
  std::string dir = freshDir("two-jobs");
  writeJob(dir, uniformJob(2, {barrier()}), "job-a");
  auto other = uniformJob(2, {barrier()});
  writeJob(dir, other, "job-b");
  analyzer::TraceSet set = analyzer::TraceSet::open({dir}, 1);
  EXPECT_TRUE(set.fatal);
  bool named = false;
  for (const auto &p : set.problems)
    named = named || p.reason.find("2 different jobs") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Matcher, PartitionsSplitCommunicatorsWithoutLosingFindings) {
  std::string dir = freshDir("partition");
  constexpr uint64_t kSub = 0x7777;
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back(r, 2);
    ranks.back()
        .comm(kSub, r, {0, 1})
        .call(allreduce(r ? 3 : 4), kSub)
        .call(bcast(1, r))
        .finalize();
  }
  writeJob(dir, ranks);
  size_t total = 0;
  for (uint32_t part = 0; part < 2; ++part) {
    analyzer::AnalysisOptions options;
    options.partitionIndex = part;
    options.partitionCount = 2;
    total += analyzeDir(dir, options).findings.size();
  }
  EXPECT_EQ(total, analyzeDir(dir).findings.size());
  EXPECT_EQ(total, 2u);
}

} // namespace

namespace {

// Damaged input is reported, never a crash: random bytes of random records are overwritten (the
// reader catches most through the check; the rest are valid records with nonsense fields).
TEST(Matcher, RandomDamageNeverCrashesOrLoops) {
  std::string dir = freshDir("damage");
  std::vector<RankTrace> ranks;
  constexpr uint64_t kSub = 0x4242;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    if (r < 2)
      ranks.back().comm(kSub, r, {0, 1});
    for (int step = 0; step < 40; ++step) {
      ranks.back().call(allreduce(64)).call(bcast(8, step % 4));
      if (r < 2)
        ranks.back().call(barrier(), kSub);
    }
    ranks.back().finalize();
  }
  auto paths = writeJob(dir, ranks);
  std::mt19937 random(12345);
  for (int round = 0; round < 60; ++round) {
    for (const std::string &path : paths) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      for (int hit = 0; hit < 4; ++hit) {
        uint64_t slot = random() % 130;
        // A whole valid-looking record now and then: kind, comm and counts at random.
        format::Record junk{};
        junk.kind = static_cast<uint8_t>(random() % 40);
        junk.commId = random() % 3 == 0 ? kSub : random() % 2 ? kWorld : random();
        junk.commRank = static_cast<int32_t>(random() % 6) - 1;
        junk.setSeqThread(random() % 200, 0);
        junk.count = random() % 5000;
        junk.peer = static_cast<int32_t>(random() % 6) - 1;
        junk.dataType = static_cast<uint8_t>(random() % 30);
        junk.op = static_cast<uint8_t>(random() % 25);
        if (random() % 2)
          format::publish(junk);
        else
          junk.check = static_cast<uint16_t>(random());
        f.seekp(static_cast<std::streamoff>(format::kHeaderSize + slot * format::kRecordSize));
        f.write(reinterpret_cast<const char *>(&junk), sizeof junk);
      }
    }
    Analyzed a = analyzeDir(dir);
    EXPECT_FALSE(a.traces.fatal);
    EXPECT_FALSE(a.findings.empty()) << "damage must never pass silently";
  }
}

} // namespace

namespace {

// A member list names the world rank of every member, also of one that left no trace: the list
// of a communicator of more than nine members comes in several records, each compared with what
// is known (a whole record at once) and applied where it says more.
TEST(Matcher, MemberListsNameAMemberWithoutATraceInEveryRecord) {
  std::string dir = freshDir("member-lists");
  constexpr uint64_t kOdd = 0x0dd0;
  constexpr int kRanks = 24;
  std::vector<int32_t> odd;
  for (int32_t r = 1; r < kRanks; r += 2)
    odd.push_back(r); // 12 members: a record of nine, then one of three
  std::vector<RankTrace> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back(r, kRanks);
    if (r % 2)
      ranks.back().comm(kOdd, r / 2, odd).repeat(allreduce(), 2, kOdd);
    ranks.back().call(barrier()).finalize();
  }
  auto paths = writeJob(dir, ranks);
  // Comm ranks 2 and 10 of the odd ranks: one in the list's first record, one in its second.
  std::filesystem::remove(paths[5]);
  std::filesystem::remove(paths[21]);
  Analyzed a = analyzeDir(dir);
  bool named = false;
  for (const auto &f : a.of("incomplete-trace"))
    named = named || (f.message.find("split(color=0) of world") != std::string::npos &&
                      f.message.find("could not be checked for ranks 5, 21:") != std::string::npos);
  EXPECT_TRUE(named) << a.describe();
}

} // namespace

// Invalid arguments are findings of their own kinds, not mismatches or unreadable records.
TEST(InvalidArguments, ACallOnNoCommunicatorIsNamedWithItsRanks) {
  std::string dir = freshDir("invalid-comm");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call(barrier());
    if (r >= 2) { // commId 0, rank -1: how the tracer records MPI_COMM_NULL
      ranks.back().call(allreduce(8), 0, /*returned=*/false).finished(false);
      format::Record died{}; // then ended by mpirun's SIGTERM in that call
      died.kind = static_cast<uint8_t>(format::Kind::ProcessSignal);
      died.count = SIGTERM;
      ranks.back().records.push_back(died);
      ranks.back().returned.push_back(true);
    } else
      ranks.back().call(barrier()).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto found = a.of("invalid-communicator");
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(ranksOf(found[0], "called"), (std::vector<int32_t>{2, 3}));
  EXPECT_NE(found[0].message.find("allreduce called without a valid communicator"),
            std::string::npos)
      << found[0].message;
  EXPECT_TRUE(a.of("incomplete-trace").empty()) << a.describe();
  // Where they ended is that call, not a sequence number of a communicator it never had.
  auto ended = a.of("rank-ended-unfinished");
  ASSERT_EQ(ended.size(), 1u) << a.describe();
  ASSERT_EQ(ended[0].groups.size(), 1u) << a.describe();
  EXPECT_EQ(
      ended[0].groups[0].detail,
      "terminated by SIGTERM inside allreduce(8 x float32, sum) without a valid communicator");
}

// Rank 0 crashes after a barrier that completed; the launcher stops the others, one of them still
// on its way out of the barrier (by SIGTERM, recorded) and one without a record (SIGKILL). That is
// a crash, not a hang: no rank is stuck, every rank is reported where it ended.
TEST(RankEndedUnfinished, RanksStoppedInsideACompletedCallAfterACrashAreNoHang) {
  std::string dir = freshDir("torn-down");
  std::vector<RankTrace> ranks;
  auto signal = [](RankTrace &rank, int number) {
    format::Record died{};
    died.kind = static_cast<uint8_t>(format::Kind::ProcessSignal);
    died.count = static_cast<uint64_t>(number);
    rank.records.push_back(died);
    rank.returned.push_back(true);
  };
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call(barrier()).call(barrier(), kWorld, /*returned=*/r < 2).finished(false);
  }
  signal(ranks[0], SIGSEGV);
  signal(ranks[1], SIGTERM);
  signal(ranks[2], SIGTERM); // inside the second barrier
  writeJob(dir, ranks);      // rank 3: inside it, no record
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.of("hang").empty()) << a.describe();
  auto ended = a.of("rank-ended-unfinished");
  ASSERT_EQ(ended.size(), 1u) << a.describe();
  std::vector<int32_t> all;
  for (const auto &g : ended[0].groups)
    all.insert(all.end(), g.ranks.begin(), g.ranks.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int32_t>{0, 1, 2, 3})) << a.describe();
  std::vector<std::string> details;
  for (const auto &g : ended[0].groups)
    details.push_back(g.detail);
  EXPECT_NE(std::find(details.begin(), details.end(),
                      "killed, crashed or aborted inside barrier (seq 1)"),
            details.end())
      << ::testing::PrintToString(details);
}

// The same ranks stuck inside a completed call with nobody crashed: that call hung.
TEST(RankEndedUnfinished, RanksStoppedInsideACallWithoutACrashAreAHang) {
  std::string dir = freshDir("stuck-no-crash");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call(barrier()).call(barrier(), kWorld, /*returned=*/r < 2).finished(false);
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  auto hang = a.of("hang");
  ASSERT_EQ(hang.size(), 1u) << a.describe();
  EXPECT_EQ(ranksOf(hang[0], "stuck"), (std::vector<int32_t>{2, 3}));
}

TEST(InvalidArguments, ANegativeCountIsNoCountMismatch) {
  std::string dir = freshDir("negative-count");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call(allreduce(r == 1 ? static_cast<uint64_t>(-1) : 8)).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, "negative-count");
  EXPECT_EQ(ranksOf(a.findings[0], "negative count"), (std::vector<int32_t>{1}));
  EXPECT_NE(a.findings[0].message.find("negative count (-1)"), std::string::npos)
      << a.findings[0].message;
}

TEST(InvalidArguments, ARootOutsideTheCommunicatorIsNamedAndNoRootMismatch) {
  for (int32_t bad : {4, -1}) {
    std::string dir = freshDir("invalid-root" + std::to_string(bad));
    std::vector<RankTrace> ranks;
    for (int r = 0; r < 4; ++r) {
      ranks.emplace_back(r, 4);
      // Every rank (an agreeing, matched position), then rank 2 alone.
      ranks.back().call(bcast(8, bad)).call(bcast(8, r == 2 ? bad : 0)).finalize();
    }
    writeJob(dir, ranks);
    Analyzed a = analyzeDir(dir);
    auto found = a.of("invalid-root");
    ASSERT_EQ(found.size(), 2u) << a.describe();
    EXPECT_EQ(ranksOf(found[0], "invalid root"), (std::vector<int32_t>{0, 1, 2, 3}));
    EXPECT_EQ(ranksOf(found[1], "invalid root"), (std::vector<int32_t>{2}));
    EXPECT_NE(found[0].message.find("names root " + std::to_string(bad)), std::string::npos)
        << found[0].message;
    EXPECT_EQ(a.findings.size(), 2u) << a.describe();
  }
}

TEST(InvalidArguments, AJobAbortedInACallOfARejectedArgumentSaysSo) {
  std::string dir = freshDir("negative-count-abort");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    // MPI's default handler ends the job inside the call: nobody returns or finishes.
    ranks.back()
        .call(barrier())
        .call(allreduce(r == 1 ? static_cast<uint64_t>(-1) : 8), kWorld, /*returned=*/false)
        .finished(false);
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.of("negative-count").size(), 1u) << a.describe();
  auto hang = a.of("hang");
  ASSERT_EQ(hang.size(), 1u) << a.describe();
  bool said = false;
  for (const auto &note : hang[0].notes)
    said = said || note == "rank 1 passed a negative count (negative-count), which MPI rejects: "
                           "its error handler, by default, aborts the job inside the "
                           "call, and the others wait in it";
  EXPECT_TRUE(said) << a.describe();
}

TEST(InvalidArguments, AnInvalidDatatypeIsNamedAndNoMismatch) {
  std::string dir = freshDir("invalid-datatype");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    // Rank 2 passes MPI_DATATYPE_NULL; the others one contiguous type of 8 floats.
    CallSpec s = bcast(8, 0);
    if (r == 2) {
      s.dataType = format::DataType::Invalid;
    } else {
      s.flags = format::kFlagDerived;
      s.aux = 8;
    }
    ranks.back().call(s).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.findings.size(), 1u) << a.describe();
  EXPECT_EQ(a.findings[0].ruleId, "invalid-datatype");
  EXPECT_EQ(ranksOf(a.findings[0], "invalid datatype"), (std::vector<int32_t>{2}));
  EXPECT_EQ(a.findings[0].message,
            "broadcast on world called with a handle that is no datatype on rank 2");
}

TEST(InvalidArguments, AJobAbortedInACallOfAnInvalidDatatypeSaysSo) {
  std::string dir = freshDir("invalid-datatype-abort");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    CallSpec s = allreduce(8);
    s.dataType = format::DataType::Invalid;
    ranks.back().call(barrier()).call(s, kWorld, /*returned=*/false).finished(false);
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  ASSERT_EQ(a.of("invalid-datatype").size(), 1u) << a.describe();
  auto hang = a.of("hang");
  ASSERT_EQ(hang.size(), 1u) << a.describe();
  bool said = false;
  for (const auto &note : hang[0].notes)
    said = said || note.starts_with("ranks 0-3 passed a handle that is no datatype "
                                    "(invalid-datatype), which MPI rejects");
  EXPECT_TRUE(said) << a.describe();
}

TEST(InvalidArguments, IntercommunicatorRootsAreNotJudged) {
  std::string dir = freshDir("intercomm-root");
  std::vector<RankTrace> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back(r, 2);
    CallSpec s = bcast(8, r == 0 ? -4 : 0); // MPI_ROOT on one side
    s.flags = format::kFlagIntercomm;
    ranks.back().call(s).finalize();
  }
  writeJob(dir, ranks);
  Analyzed a = analyzeDir(dir);
  EXPECT_TRUE(a.of("invalid-root").empty()) << a.describe();
}

TEST(Matcher, OneJobOfAFolderOfSeveralIsPickedByItsId) {
  std::string dir = freshDir("pick-job");
  writeJob(dir, uniformJob(2, {barrier()}), "job-a");
  auto other = uniformJob(3, {barrier()});
  writeJob(dir, other, "job-b");
  analyzer::TraceSet all = analyzer::TraceSet::open({dir}, 1);
  ASSERT_EQ(all.jobs.size(), 2u);
  bool listed = false;
  for (const auto &p : all.problems)
    listed = listed || (p.reason.find("--job ID") != std::string::npos &&
                        p.reason.find("job 'job-b': 3 file(s), world size 3") != std::string::npos);
  EXPECT_TRUE(listed);
  analyzer::TraceSet b = analyzer::TraceSet::open({dir}, 1, nullptr, "job-b");
  EXPECT_FALSE(b.fatal);
  EXPECT_EQ(b.files.size(), 3u);
  EXPECT_EQ(b.jobId, "job-b");
  EXPECT_TRUE(b.problems.empty());
  analyzer::TraceSet none = analyzer::TraceSet::open({dir}, 1, nullptr, "job-c");
  EXPECT_TRUE(none.fatal);
  ASSERT_FALSE(none.problems.empty());
  EXPECT_NE(none.problems.back().reason.find("no trace file of job 'job-c'"), std::string::npos);
}
