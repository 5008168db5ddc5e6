// How the records are read (match/chunk_reader.h): copied with pread, never through the files'
// mappings, in every way the analyzer reads (whole, in shares, among threads), once the limit of
// open files is raised for thousands of files.
#include "analyzer/load/descriptor_limit.h"
#include "analyzer/parallel/share_plan.h"
#include "analyzer/parallel/thread_split.h"
#include "tests/analyzer/analysis_helpers.h"
#include "tests/analyzer/job_builder.h"

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

// The JSON report of the job, analyzed before any mapping is forbidden.
std::string reportOf(const analyzer::TraceSet &traces) {
  return jsonReport(traces, analyzer::analyze(traces, {}));
}

// Reads a record through the mapping: what the guard must kill.
void readMapped(const analyzer::TraceSet &traces) {
  const format::Reader &reader = *traces.files[0].reader;
  volatile uint8_t kind = reader.slot(reader.slotCount() / 2).kind;
  (void)kind;
}

TEST(Reading, CopiedChunksNeverReadTheFilesMapping) {
  // Whether the pages were mapped is not told by the process's fault count: the allocator's first
  // touch of the analysis's tables and the page cache's folio sizes move it more than the reading
  // does. A mapping that kills the process on the first record read from it tells it for certain.
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("cost-unmapped", 2, 40000)}, 1);
  ASSERT_EQ(traces.files.size(), 2u);
  const std::string expected = reportOf(traces);
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        const bool same = jsonReport(traces, analyzer::analyze(traces, {})) == expected;
        std::exit(same ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  // The guard is real: a record read through the mapping kills the process.
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        readMapped(traces);
      },
      "");
}

TEST(Reading, CopyingSplitsCutTheFilesWithoutTheirMapping) {
  // A share's cut search and a handover's cut read the records copied too: not one record read
  // through the mapping, in every way the analyzer splits.
  using analyzer::parallel::Balance;
  analyzer::TraceSet traces =
      analyzer::TraceSet::open({uniformDir("cost-split-unmapped", 3, 40000)}, 1);
  ASSERT_EQ(traces.files.size(), 3u);
  const std::optional<uint64_t> comm = analyzer::parallel::cutCommunicator(traces);
  ASSERT_TRUE(comm.has_value());
  const std::string expected = reportOf(traces);
  const analyzer::AnalysisOptions options;
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        const analyzer::RangeSpec share =
            analyzer::parallel::planShare(traces, *comm, 1, 3, Balance::Records);
        bool same =
            share.begin[0] > 0 && share.end[0] > share.begin[0] &&
            analyzer::parallel::cutAhead(traces, *comm, share.begin, share.end, options.readChunk)
                .has_value();
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
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        readMapped(traces);
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

TEST(Reading, TheDescriptorLimitIsRaisedUpToTheHardLimitNeverLowered) {
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

TEST(Reading, FilesBeyondTheSoftLimitAreCopiedOnceItIsRaised) {
  // 100 files under a soft limit of 64: without the raise the files past it have no descriptor
  // and are read through their mappings, which kills the process here.
  const rlim_t hard = roomyHardLimit();
  if (hard == 0)
    GTEST_SKIP() << "hard limit of open files below 512: too low to test";
  analyzer::TraceSet traces =
      analyzer::TraceSet::open({uniformDir("cost-descriptors", 100, 300)}, 1);
  ASSERT_EQ(traces.files.size(), 100u);
  const std::string expected = reportOf(traces);
  EXPECT_EXIT(
      {
        forbidTheMappedRecords(traces);
        bool same = setLimits(64, hard) &&
                    analyzer::raiseDescriptorLimit(traces.files.size() + 256) >= 356 &&
                    jsonReport(traces, analyzer::analyze(traces, {})) == expected;
        std::exit(same ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_DEATH(
      {
        forbidTheMappedRecords(traces);
        if (setLimits(64, hard))
          analyzer::analyze(traces, {});
      },
      "");
}

} // namespace
} // namespace collcheck::testing
