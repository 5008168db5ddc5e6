// The weighing of gradient reductions (analyzer/checks/objective/weighing.h) on synthetic traces:
// each rank's effective per-item weight, normalization x reducer factor, against 1/N. The numbers
// are the seed's (rules/pages/uncompensated-mean.md): n = 2 and 6, N = 8, P = 2.
#include "tests/analyzer/analysis_helpers.h"
#include "tests/analyzer/job_builder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace collcheck;
using namespace collcheck::testing;
using format::Kind;
using format::LossNormalization;
using format::ReduceOp;

namespace {

struct Rank {
  double count;
  LossNormalization normalization;
  double multiplier = 0;
};

// One window on two ranks: each declares its count and normalization, then the gradient reduction.
Analyzed oneWindow(const std::string &name, const std::vector<Rank> &ranks, ReduceOp op,
                   double reducerScale = 0, uint8_t flags = 0) {
  std::string dir = freshDir("weighing-" + name);
  std::vector<RankTrace> traces;
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankTrace &t = traces.emplace_back(static_cast<int>(r), static_cast<int>(ranks.size()));
    t.window(0)
        .declare(Kind::ValidCount, ranks[r].count)
        .declare(Kind::Normalization, ranks[r].multiplier,
                 static_cast<uint8_t>(ranks[r].normalization));
    if (reducerScale != 0)
      t.declare(Kind::ReducerScale, reducerScale);
    CallSpec call = allreduce(1024, op);
    call.flags |= flags;
    t.call(call).finalize();
  }
  writeJob(dir, traces);
  return analyzeDir(dir);
}

std::vector<analyzer::Finding> objectiveFindings(const Analyzed &a) {
  std::vector<analyzer::Finding> out;
  for (const auto &f : a.result.findings)
    if (f.ruleId != "incomplete-trace" && !isParticipationRule(f.ruleId))
      out.push_back(f);
  return out;
}

} // namespace

TEST(Weighing, LocalMeansAveragedWeighOneQuarterAndOneTwelfthAgainstOneEighth) {
  Analyzed a =
      oneWindow("seed", {{2, LossNormalization::LocalMean}, {6, LossNormalization::LocalMean}},
                ReduceOp::Avg);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "uncompensated-mean");
  EXPECT_EQ(found[0].severity, rules::Severity::Error);
  const std::string &m = found[0].message;
  EXPECT_NE(m.find("1/8"), std::string::npos) << m;
  std::string all = m;
  for (const auto &g : found[0].groups)
    all += " | " + g.detail;
  for (const auto &n : found[0].notes)
    all += " | " + n;
  EXPECT_NE(all.find("1/4"), std::string::npos) << all;
  EXPECT_NE(all.find("1/12"), std::string::npos) << all;
  // The fix names the exact factors P*n_r/N: 0.5 and 1.5.
  EXPECT_NE(all.find("0.5"), std::string::npos) << all;
  EXPECT_NE(all.find("1.5"), std::string::npos) << all;
}

TEST(Weighing, LocalMeansScaledByPTimesCountOverNBeforeTheAverageAreClean) {
  // x (P n_r / N) on top of the local mean 1/n_r: the multiplier P/N = 1/4 on both ranks.
  Analyzed a = oneWindow(
      "compensated",
      {{2, LossNormalization::Multiplier, 0.25}, {6, LossNormalization::Multiplier, 0.25}},
      ReduceOp::Avg);
  EXPECT_TRUE(objectiveFindings(a).empty()) << a.describe();
}

TEST(Weighing, EqualCountsMakeLocalMeansAveragedCorrect) {
  Analyzed a =
      oneWindow("equal", {{4, LossNormalization::LocalMean}, {4, LossNormalization::LocalMean}},
                ReduceOp::Avg);
  EXPECT_TRUE(objectiveFindings(a).empty()) << a.describe();
}

TEST(Weighing, GlobalMeanThenAverageIsDoubleNormalization) {
  Analyzed a =
      oneWindow("double", {{2, LossNormalization::GlobalMean}, {6, LossNormalization::GlobalMean}},
                ReduceOp::Avg);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "double-normalization");
}

TEST(Weighing, GlobalMeanThenSumIsClean) {
  Analyzed a = oneWindow("global-sum",
                         {{2, LossNormalization::GlobalMean}, {6, LossNormalization::GlobalMean}},
                         ReduceOp::Sum);
  EXPECT_TRUE(objectiveFindings(a).empty()) << a.describe();
}

TEST(Weighing, SumThenDeclaredDivisionByPOverLocalMeansIsTheSeedBug) {
  // MPI_SUM, then the result divided by P (declared as the reducer scale): the same weights as avg.
  Analyzed a = oneWindow("sum-divide",
                         {{2, LossNormalization::LocalMean}, {6, LossNormalization::LocalMean}},
                         ReduceOp::Sum, 0.5);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "uncompensated-mean");
}

TEST(Weighing, UndeclaredNormalizationUnderAMeanReducerOfUnequalCountsIsAWarning) {
  Analyzed a =
      oneWindow("unknown-normalization",
                {{2, LossNormalization::Unknown}, {6, LossNormalization::Unknown}}, ReduceOp::Avg);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "uncompensated-mean");
  EXPECT_EQ(found[0].severity, rules::Severity::Warning);
}

TEST(Weighing, APersistentInitializationIsNotWeighed) {
  // The same window as above, the reduction initialized as a persistent collective
  // (MPI_Allreduce_init): its starts reduce, and they are not recorded; the initialization says
  // nothing of the values.
  Analyzed a = oneWindow("persistent-init",
                         {{2, LossNormalization::Unknown}, {6, LossNormalization::Unknown}},
                         ReduceOp::Sum, 0, format::kFlagPersistent);
  EXPECT_TRUE(objectiveFindings(a).empty()) << a.describe();
  Analyzed called =
      oneWindow("persistent-init-called",
                {{2, LossNormalization::Unknown}, {6, LossNormalization::Unknown}}, ReduceOp::Sum);
  EXPECT_FALSE(objectiveFindings(called).empty()) << called.describe();
}

TEST(Weighing, SumsOfPerItemLossesOverASumReducerWeighEveryItemOne) {
  Analyzed a =
      oneWindow("sums", {{2, LossNormalization::Sum}, {6, LossNormalization::Sum}}, ReduceOp::Sum);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "uncompensated-mean");
  EXPECT_NE(found[0].message.find("weighs every item 1 instead of 1/N = 1/8"), std::string::npos)
      << found[0].message;
}

TEST(Weighing, CountsDeclaredBySomeRanksOnlyNameTheRanksThatDidNot) {
  // Rank 0 declares its count and normalization; rank 1 declares nothing in the window (as when its
  // trace is lost); no count all-reduce carries the counts.
  std::string dir = freshDir("weighing-declared-by-one");
  std::vector<RankTrace> traces;
  for (int r = 0; r < 2; ++r) {
    RankTrace &t = traces.emplace_back(r, 2);
    t.window(0);
    if (r == 0)
      t.declare(Kind::ValidCount, 2)
          .declare(Kind::Normalization, 0, static_cast<uint8_t>(LossNormalization::LocalMean));
    t.call(allreduce(1024, ReduceOp::Avg)).finalize();
  }
  writeJob(dir, traces);
  Analyzed a = analyzeDir(dir);
  auto found = objectiveFindings(a);
  ASSERT_EQ(found.size(), 1u) << a.describe();
  EXPECT_EQ(found[0].ruleId, "unverified-reduction");
  const std::string &m = found[0].message;
  EXPECT_NE(m.find("rank 0 declared theirs"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 1 did not in this window or left no trace"), std::string::npos) << m;
}

// Without annotations, the note that a gradient reduction could not be verified is for jobs that
// reduce through a mean reducer: an integer count beside SUMs is also a molecular-dynamics step
// (an atom count and a few energies), and gets no note, whatever the size of its sums.
TEST(Weighing, SumsBesideAnIntegerCountGetNoNoteWithoutAMeanReducer) {
  for (auto [elements, op] : {std::pair{3u, ReduceOp::Sum}, std::pair{1024u, ReduceOp::Sum},
                              std::pair{1024u, ReduceOp::Avg}}) {
    std::string dir =
        freshDir("weighing-md-" + std::to_string(elements) + std::string(format::reduceOpName(op)));
    std::vector<RankTrace> traces;
    for (int r = 0; r < 2; ++r) {
      RankTrace &t = traces.emplace_back(r, 2);
      CallSpec count = allreduce(1);
      count.dataType = format::DataType::Int32;
      CallSpec sums = allreduce(elements, op);
      sums.dataType = format::DataType::Float64;
      for (int step = 0; step < 5; ++step)
        t.call(count).call(sums);
      t.finalize();
    }
    writeJob(dir, traces);
    Analyzed a = analyzeDir(dir);
    auto objective = objectiveFindings(a);
    if (op == ReduceOp::Sum) {
      EXPECT_TRUE(objective.empty()) << a.describe();
    } else {
      ASSERT_FALSE(objective.empty()) << a.describe();
      EXPECT_NE(objective[0].message.find("gradient all-reduce"), std::string::npos)
          << a.describe();
    }
  }
}
