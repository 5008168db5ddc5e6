// How the records are read (load/reading_cost.h): the machine's costs of a mapped and a copied page
// are measured where the files hold enough records, copying is chosen only where mapping costs over
// four times as much, and copied chunks are read without touching the files' mappings.
#include "analysis_helpers.h"
#include "job_builder.h"
#include "load/descriptor_limit.h"
#include "load/reading_cost.h"
#include "parallel/share_plan.h"
#include "parallel/thread_split.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdlib>

namespace collcheck::testing {
namespace {

std::string uniformDir(const std::string &name, int ranks, int calls) {
  std::string dir = freshDir(name);
  writeJob(dir, uniformJob(ranks, std::vector<CallSpec>(static_cast<size_t>(calls), allreduce())));
  return dir;
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

// Makes the records of every file unreadable through this process's mapping of it (all but those
// on the page that holds the header), so that any record read from the mapping kills the process.
void forbidTheMappedRecords(const analyzer::TraceSet &traces) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const analyzer::TraceFile &file : traces.files) {
    const format::Reader &reader = *file.reader;
    auto first = reinterpret_cast<uintptr_t>(&reader.slot(0));
    auto end =
        reinterpret_cast<uintptr_t>(&reader.slot(reader.slotCount() - 1)) + sizeof(format::Record);
    first = (first + page - 1) / page * page;
    end = end / page * page;
    if (end > first && mprotect(reinterpret_cast<void *>(first), end - first, PROT_NONE) != 0)
      std::abort();
  }
}

// Options that match one chunk at a time on this thread (no read-ahead: the path that maps or
// copies as told), and the JSON report they give the job with its records matched where mapped.
struct MappedBaseline {
  analyzer::AnalysisOptions options;
  std::string report;
};
MappedBaseline mappedBaseline(const analyzer::TraceSet &traces) {
  MappedBaseline baseline;
  baseline.options.readAhead = false;
  baseline.report = jsonReport(traces, analyzer::analyze(traces, baseline.options));
  return baseline;
}

TEST(ReadingCost, CopiedChunksNeverReadTheFilesMapping) {
  // Whether the pages were mapped is not told by the process's fault count: the allocator's first
  // touch of the analysis's tables and the page cache's folio sizes move it more than the reading
  // does. A mapping that kills the process on the first record read from it tells it for certain.
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("cost-unmapped", 2, 40000)}, 1);
  ASSERT_EQ(traces.files.size(), 2u);
  auto [options, expected] = mappedBaseline(traces);
  options.copyChunks = true;
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        const bool same = jsonReport(traces, analyzer::analyze(traces, options)) == expected;
        std::exit(same ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  // The guard is real: matched where mapped, the same analysis dies on its first chunk.
  options.copyChunks = false;
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        analyzer::analyze(traces, options);
      },
      "");
}

TEST(ReadingCost, CopyingSplitsCutTheFilesWithoutTheirMapping) {
  // Where the records are copied, a share's cut search and a handover's cut read them copied too:
  // the same cuts, and not one record read through the mapping, in every way the analyzer splits.
  using analyzer::parallel::Balance;
  analyzer::TraceSet traces =
      analyzer::TraceSet::open({uniformDir("cost-split-unmapped", 3, 40000)}, 1);
  ASSERT_EQ(traces.files.size(), 3u);
  const std::optional<uint64_t> comm = analyzer::parallel::cutCommunicator(traces);
  ASSERT_TRUE(comm.has_value());
  auto [options, expected] = mappedBaseline(traces);
  const analyzer::RangeSpec mapped =
      analyzer::parallel::planShare(traces, *comm, 1, 3, Balance::Records);
  const std::optional<std::vector<uint64_t>> mappedAhead =
      analyzer::parallel::cutAhead(traces, *comm, mapped.begin, mapped.end, options.readChunk);
  ASSERT_TRUE(mappedAhead.has_value());
  options.copyChunks = true;
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        const analyzer::RangeSpec copied =
            analyzer::parallel::planShare(traces, *comm, 1, 3, Balance::Records, true);
        bool same = copied.begin == mapped.begin && copied.end == mapped.end &&
                    analyzer::parallel::cutAhead(traces, *comm, mapped.begin, mapped.end,
                                                 options.readChunk, true) == mappedAhead;
        for (int count : {2, 3}) {
          analyzer::AnalysisResult split;
          std::string why;
          same = same &&
                 analyzer::parallel::analyzeInShares(traces, options, count, split, why,
                                                     Balance::Records, 3) &&
                 jsonReport(traces, split) == expected;
        }
        analyzer::AnalysisResult threads;
        std::string why;
        analyzer::parallel::ThreadSplitStats stats;
        same = same &&
               analyzer::parallel::analyzeInThreads(traces, options, 2, threads, why, stats,
                                                    Balance::Records) &&
               jsonReport(traces, threads) == expected;
        std::exit(same ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  // The guard is real: the cut search through the mapping dies on its first record.
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        analyzer::parallel::planShare(traces, *comm, 1, 3, Balance::Records);
      },
      "");
}

// The hard limit of open files, or 0 where it is below 512: too low for the tests below, which set
// a soft limit of 64 and raise it past 356.
rlim_t roomyHardLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 ||
      (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 512))
    return 0;
  return limit.rlim_max;
}

// Sets the limits of open files (a macro's argument cannot hold a braced pair).
bool setLimits(rlim_t soft, rlim_t hard) {
  rlimit limit{};
  limit.rlim_cur = soft;
  limit.rlim_max = hard;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

// The soft limit of open files in force.
uint64_t softLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

TEST(ReadingCost, TheDescriptorLimitIsRaisedUpToTheHardLimitNeverLowered) {
  const rlim_t hard = roomyHardLimit();
  if (hard == 0)
    GTEST_SKIP() << "hard limit of open files below 512: too low to test";
  EXPECT_EXIT(
      {
        bool ok = setLimits(64, hard);
        ok = ok && analyzer::raiseDescriptorLimit(32) == 64 && softLimit() == 64; // not lowered
        ok = ok && analyzer::raiseDescriptorLimit(300) == 300 && softLimit() == 300;
        ok = ok && setLimits(64, 128) && // the hard limit caps it
             analyzer::raiseDescriptorLimit(300) == 128 && softLimit() == 128;
        std::exit(ok ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ReadingCost, FilesBeyondTheSoftLimitAreCopiedOnceItIsRaised) {
  // 100 files under a soft limit of 64: without the raise the files past it have no descriptor
  // and are read through their mappings, which kills the process here.
  const rlim_t hard = roomyHardLimit();
  if (hard == 0)
    GTEST_SKIP() << "hard limit of open files below 512: too low to test";
  analyzer::TraceSet traces =
      analyzer::TraceSet::open({uniformDir("cost-descriptors", 100, 300)}, 1);
  ASSERT_EQ(traces.files.size(), 100u);
  auto [options, expected] = mappedBaseline(traces);
  options.copyChunks = true;
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        bool same = setLimits(64, hard) &&
                    analyzer::raiseDescriptorLimit(traces.files.size() + 256) >= 356 &&
                    jsonReport(traces, analyzer::analyze(traces, options)) == expected;
        std::exit(same ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        if (setLimits(64, hard))
          analyzer::analyze(traces, options);
      },
      "");
}

} // namespace
} // namespace collcheck::testing
