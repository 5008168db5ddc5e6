// The finding model and the catalogue link: repeats fold, ranks print in runs, and every trace rule
// the analyzer can report has its page in rules/pages.
#include "catalogue.h"
#include "match/signature.h"
#include "model/finding.h"
#include "rules/rule.h"

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

TEST(Model, EveryParticipationRuleIsRegisteredAndHasACataloguePage) {
  std::vector<std::string> registered;
  for (const auto &rule : makeTraceRules())
    registered.emplace_back(rule->id());
  for (const char *id :
       {"missing-participant", "kind-mismatch", "count-mismatch", "datatype-mismatch",
        "reduce-op-mismatch", "premulsum-scalar-mismatch", "root-mismatch", "collective-reorder",
        "send-recv-mismatch", "hang", "incomplete-trace", "rank-ended-unfinished",
        "invalid-communicator", "negative-count", "invalid-root"}) {
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
