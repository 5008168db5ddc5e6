// How the records are read (load/reading_cost.h): the machine's costs of a mapped and a copied page
// are measured where the files hold enough records, copying is chosen only where mapping costs over
// four times as much, and copied chunks are read without mapping the files' pages.
#include "analysis_helpers.h"
#include "job_builder.h"
#include "load/reading_cost.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

namespace collcheck::testing {
namespace {

std::string uniformDir(const std::string &name, int ranks, int calls) {
  std::string dir = freshDir(name);
  writeJob(dir, uniformJob(ranks, std::vector<CallSpec>(static_cast<size_t>(calls), allreduce())));
  return dir;
}

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST(ReadingCost, FilesOfFewRecordsAreNotMeasured) {
  // 4,000 calls: 250 KB of records, less than the two regions of 256 KiB a file is measured on.
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("cost-small", 2, 4000)}, 1);
  ASSERT_EQ(traces.files.size(), 2u);
  analyzer::ReadingCost cost = analyzer::measureReadingCost(traces);
  EXPECT_EQ(cost.pages, 0u);
  EXPECT_FALSE(analyzer::copyingIsCheaper(cost));
}

TEST(ReadingCost, BothWaysAreMeasuredOnEveryFileOfEnoughRecords) {
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("cost-large", 3, 9000)}, 1);
  ASSERT_EQ(traces.files.size(), 3u);
  analyzer::ReadingCost cost = analyzer::measureReadingCost(traces);
  EXPECT_EQ(cost.pages, 3u * 256 * 1024 / static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_GT(cost.mappedNsPerPage, 0);
  EXPECT_GT(cost.copiedNsPerPage, 0);
  // The pages measured through the mapping are released again, as the analysis releases them.
  analyzer::AnalysisOptions options;
  options.readAhead = false;
  EXPECT_TRUE(analyzer::analyze(traces, options).findings.empty());
}

TEST(ReadingCost, CopyingIsChosenOnlyWhereAMappedPageCostsOverFourCopiedOnes) {
  EXPECT_TRUE(analyzer::copyingIsCheaper({2500, 350, 1024}));
  EXPECT_TRUE(analyzer::copyingIsCheaper({401, 100, 1}));
  EXPECT_FALSE(analyzer::copyingIsCheaper({400, 100, 1}));
  EXPECT_FALSE(analyzer::copyingIsCheaper({250, 250, 1024}));
  EXPECT_FALSE(analyzer::copyingIsCheaper({2500, 350, 0})); // nothing measured: mapping is kept
}

TEST(ReadingCost, CopiedChunksDoNotMapTheFilesPages) {
  // 400,000 calls: 25 MB of records, which the mapping faults in 64 KiB at a time at most.
  Analyzed mapped;
  mapped.traces = analyzer::TraceSet::open({uniformDir("cost-faults", 1, 400000)}, 1);
  ASSERT_EQ(mapped.traces.files.size(), 1u);
  auto faultsOf = [&](bool copy, analyzer::AnalysisResult &result) {
    analyzer::AnalysisOptions options;
    options.readAhead = false;
    options.copyChunks = copy;
    long before = minorFaults();
    result = analyzer::analyze(mapped.traces, options);
    return minorFaults() - before;
  };
  analyzer::AnalysisResult copiedResult;
  long copiedFaults = faultsOf(true, copiedResult);
  long mappedFaults = faultsOf(false, mapped.result);
  EXPECT_GE(mappedFaults, 25'000'000 / 65536);
  EXPECT_LT(copiedFaults, mappedFaults / 4);
  EXPECT_EQ(jsonReport(mapped.traces, mapped.result), jsonReport(mapped.traces, copiedResult));
}

} // namespace
} // namespace collcheck::testing
