// The finding model and the catalogue link: repeats fold, ranks print in runs, and every trace rule
// the analyzer can report has its page in rules/pages.
#include "analyzer/checks/rule.h"
#include "analyzer/model/finding.h"
#include "analyzer/model/signature.h"
#include "rules/catalogue.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace collcheck;
using namespace collcheck::analyzer;

TEST(Model, RanksPrintInRuns) {
  EXPECT_EQ(formatRanks({0, 1, 2, 3, 5, 7, 8, 9}), "0-3, 5, 7-9");
  EXPECT_EQ(formatRanks({4, 3}), "3, 4");
  EXPECT_EQ(describeRanks({3}), "rank 3");
  EXPECT_EQ(describeRanks({0, 1, 2}), "ranks 0-2");
}

TEST(Model, RepeatsFoldIntoOneFinding) {
  FindingCollector c;
  for (uint64_t seq = 10; seq < 20; ++seq) {
    Finding f;
    f.ruleId = "count-mismatch";
    f.commId = 1;
    f.hasPosition = true;
    f.firstSeq = f.lastSeq = seq;
    f.firstWindow = f.lastWindow = static_cast<uint32_t>(seq / 2);
    c.add(f, "same");
  }
  Finding other;
  other.ruleId = "count-mismatch";
  other.commId = 1;
  c.add(other, "different");
  auto all = c.take();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].repeats, 10u);
  EXPECT_EQ(all[0].firstSeq, 10u);
  EXPECT_EQ(all[0].lastSeq, 19u);
  EXPECT_EQ(all[0].lastWindow, 9u);
}

TEST(Model, DistinctFindingsAreBounded) {
  FindingCollector c(5);
  for (int i = 0; i < 100; ++i) {
    Finding f;
    f.ruleId = "kind-mismatch";
    f.commId = 1;
    c.add(f, std::to_string(i));
  }
  auto all = c.take();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.back().repeats, 95u);
}

// Participation and objective rules alike: one interface, one registry.
TEST(Model, EveryAnalyzerRuleIsRegisteredAndHasACataloguePage) {
  std::vector<std::string> registered;
  for (const auto &rule : makeTraceRules())
    registered.emplace_back(rule->id());
  for (const char *id : {"missing-participant",  "kind-mismatch",
                         "count-mismatch",       "datatype-mismatch",
                         "reduce-op-mismatch",   "premulsum-scalar-mismatch",
                         "root-mismatch",        "collective-reorder",
                         "send-recv-mismatch",   "hang",
                         "incomplete-trace",     "rank-ended-unfinished",
                         "invalid-communicator", "negative-count",
                         "invalid-root",         "invalid-datatype",
                         "uncompensated-mean",   "double-normalization",
                         "partial-window",       "zero-count-skip",
                         "zero-count-division",  "count-on-active-ranks",
                         "unverified-reduction"}) {
    EXPECT_NE(std::find(registered.begin(), registered.end(), id), registered.end()) << id;
    const rules::Rule *page = rules::find(id);
    ASSERT_NE(page, nullptr) << id << " has no page in rules/pages";
    EXPECT_NE(page->checker, "lint") << id;
    for (const char *section : {"## Rationale", "## Bad", "## Good", "## Fix"})
      EXPECT_NE(page->page.find(section), std::string::npos) << id << ": " << section;
  }
}

TEST(Model, ANegativeCountPrintsAsTheApplicationPassedIt) {
  format::Record r{};
  r.kind = static_cast<uint8_t>(format::Kind::Broadcast);
  r.count = static_cast<uint64_t>(int64_t{-1});
  r.dataType = static_cast<uint8_t>(format::DataType::Int32);
  r.peer = 0;
  EXPECT_EQ(describeCall(r).rfind("broadcast(-1 x ", 0), 0u) << describeCall(r);
  r.count = 4;
  EXPECT_EQ(describeCall(r).rfind("broadcast(4 x ", 0), 0u) << describeCall(r);
}

namespace {

format::Record typed(format::Kind kind, uint64_t count, format::DataType type, uint64_t aux = 0,
                     bool derived = false) {
  format::Record r{};
  r.kind = static_cast<uint8_t>(kind);
  r.count = count;
  r.dataType = static_cast<uint8_t>(type);
  r.aux = aux;
  r.flags = derived ? format::kFlagDerived : 0;
  r.peer = kind == format::Kind::AllGather ? -1 : 0;
  return r;
}

} // namespace

TEST(TypeSignatures, AHomogeneousDerivedTypeMatchesItsBasicTypeByElements) {
  using format::DataType;
  using format::Kind;
  // 4 x MPI_INT against 1 x MPI_Type_contiguous(4, MPI_INT): the tracer records the latter as 4
  // elements of int32, 4 per item.
  format::Record basic = typed(Kind::Broadcast, 4, DataType::Int32);
  format::Record contiguous = typed(Kind::Broadcast, 4, DataType::Int32, 4, true);
  EXPECT_EQ(signatureDifferences(basic, contiguous), 0u);
  EXPECT_TRUE(sameSignature(basic, contiguous));
  EXPECT_EQ(describeCall(contiguous), "broadcast(1 x derived (4 x int32), root 0)");
  EXPECT_EQ(describeCall(basic), "broadcast(4 x int32, root 0)");
  // A vector of one-element blocks of 4 ints: the same record as the contiguous type.
  format::Record vector = typed(Kind::Broadcast, 4, DataType::Int32, 4, true);
  EXPECT_EQ(signatureDifferences(vector, contiguous), 0u);
  // 3 x MPI_INT against it: a count mismatch, and nothing else.
  format::Record three = typed(Kind::Broadcast, 3, DataType::Int32);
  EXPECT_EQ(signatureDifferences(three, contiguous), uint32_t{kFieldCount});
  EXPECT_EQ(describeField(contiguous, kFieldCount), "count 4 (1 x derived (4 x int32))");
  EXPECT_EQ(describeField(three, kFieldCount), "count 3");
  // 4 x MPI_FLOAT against it: a datatype mismatch of equal byte counts.
  format::Record floats = typed(Kind::Broadcast, 4, DataType::Float32);
  EXPECT_EQ(signatureDifferences(floats, contiguous), uint32_t{kFieldDataType});
  EXPECT_EQ(describeField(contiguous, kFieldDataType),
            "datatype int32 (a derived type of 4 x int32)");
  EXPECT_EQ(payloadBytes(contiguous, contiguous.count), 16u);
}

TEST(TypeSignatures, MixedSignaturesCompareByTheirUnit) {
  using format::DataType;
  using format::Kind;
  constexpr uint32_t kIntFloat = 0x1a2b3c4d, kFloatInt = 0x5e6f7081;
  // 2 x struct {int, float} against 1 x contiguous(2, struct {int, float}): 2 units either way.
  format::Record two =
      typed(Kind::AllGather, 2, DataType::Mixed, format::derivedMixedAux(kIntFloat, 1, 8), true);
  format::Record pair =
      typed(Kind::AllGather, 2, DataType::Mixed, format::derivedMixedAux(kIntFloat, 2, 8), true);
  EXPECT_EQ(signatureDifferences(two, pair), 0u);
  EXPECT_TRUE(sameSignature(two, pair));
  EXPECT_EQ(describeCall(two), "allgather(2 x derived (mixed signature 1a2b3c4d of 8 bytes))");
  EXPECT_EQ(describeCall(pair), "allgather(1 x derived (2 x mixed signature 1a2b3c4d of 8 bytes))");
  EXPECT_EQ(payloadBytes(pair, pair.count), 16u);
  // struct {float, int}: the same size, another signature.
  format::Record swapped =
      typed(Kind::AllGather, 2, DataType::Mixed, format::derivedMixedAux(kFloatInt, 1, 8), true);
  EXPECT_EQ(signatureDifferences(two, swapped), uint32_t{kFieldDataType});
  EXPECT_EQ(describeField(swapped, kFieldDataType), "datatype mixed signature 5e6f7081 of 8 bytes");
  // A unit of more than 65535 bytes is not recorded in bytes: its payload is unknown.
  format::Record large = typed(Kind::AllGather, 1, DataType::Mixed,
                               format::derivedMixedAux(kIntFloat, 1, 70000), true);
  EXPECT_EQ(payloadBytes(large, large.count), 0u);
}

TEST(TypeSignatures, OlderTracesCompareDerivedTypesBySize) {
  using format::DataType;
  using format::Kind;
  // Traces written before signatures (and types the tracer does not flatten): Derived, its size.
  format::Record a = typed(Kind::Broadcast, 1, DataType::Derived, 16, true);
  format::Record b = typed(Kind::Broadcast, 1, DataType::Derived, 16, true);
  format::Record c = typed(Kind::Broadcast, 1, DataType::Derived, 12, true);
  EXPECT_EQ(signatureDifferences(a, b), 0u);
  EXPECT_EQ(signatureDifferences(a, c), uint32_t{kFieldDataType});
  EXPECT_EQ(describeField(c, kFieldDataType), "datatype derived of 12 bytes");
  EXPECT_EQ(describeCall(c), "broadcast(1 x derived of 12 bytes, root 0)");
  EXPECT_EQ(payloadBytes(c, 2), 24u);
}

TEST(TypeSignatures, AVCollectiveCountsElementsOfADerivedType) {
  using format::DataType;
  using format::Kind;
  // gatherv of one contiguous triple of ints: the count and the root's total in int32 elements;
  // aux is the total, so the elements per item are not said.
  format::Record r = typed(Kind::Gatherv, 3, DataType::Int32, 12, true);
  EXPECT_EQ(describeCall(r), "gatherv(3 x int32 in a derived type, root 0, total 12)");
  EXPECT_EQ(describeField(r, kFieldDataType), "datatype int32 (in a derived type)");
}
