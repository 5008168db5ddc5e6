// How the records are read (match/chunk_reader.h): where the files are mapped, the pages behind
// given back in batches so that the pages held do not grow with the trace, and the same report
// whatever the chunk, the budget or the split among threads.
#include "analyzer/match/chunk_reader.h"
#include "analyzer/parallel/thread_split.h"
#include "tests/analyzer/analysis_helpers.h"
#include "tests/analyzer/job_builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <unistd.h>

namespace collcheck::testing {
namespace {

std::string uniformDir(const std::string &name, int ranks, int calls) {
  std::string dir = freshDir(name);
  writeJob(dir, uniformJob(ranks, std::vector<CallSpec>(static_cast<size_t>(calls), allreduce())));
  return dir;
}

// The KiB of `reader`'s mapping resident in this process (/proc/self/smaps: the mapping whose
// start is the reader's first page), -1 when it is not found.
long residentKiB(const format::Reader &reader) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(&reader.slot(0)) & ~(page - 1);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inIt = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2) {
      inIt = from <= start && start < to;
      continue;
    }
    long kib = 0;
    if (inIt && std::sscanf(line.c_str(), "Rss: %ld kB", &kib) == 1)
      return kib;
  }
  return -1;
}

// Reads every slot through the mapping, as a reader that never gives pages back would.
uint64_t touchAll(const format::Reader &reader) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < reader.slotCount(); ++i)
    sum += reader.slot(i).kind;
  return sum;
}

TEST(Reading, TheReportIsTheSameWhateverTheChunk) {
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("read-chunks", 3, 20000)}, 1);
  ASSERT_EQ(traces.files.size(), 3u);
  const std::string expected = jsonReport(traces, analyzer::analyze(traces, {}));
  for (size_t chunk : {16, 100, 512, 2048, 8192}) {
    analyzer::AnalysisOptions options;
    options.readChunk = chunk;
    EXPECT_EQ(jsonReport(traces, analyzer::analyze(traces, options)), expected)
        << "chunk " << chunk;
    analyzer::AnalysisResult split;
    std::string why;
    analyzer::parallel::ThreadSplitStats stats;
    ASSERT_TRUE(analyzer::parallel::analyzeInThreads(traces, options, 2, split, why, stats,
                                                     analyzer::parallel::Balance::Records))
        << why;
    EXPECT_EQ(jsonReport(traces, split), expected) << "2 threads, chunk " << chunk;
  }
}

TEST(Reading, ThePagesReadAreGivenBackBehind) {
  // 250,000 records of 64 bytes: 15.6 MiB per file, read 100 at a time, so that most chunks start
  // inside a page. What stays mapped at the end is the last chunk and what the kernel mapped around
  // its faults (whole page-cache folios, up to 2 MiB on some file systems): well under a quarter.
  // A page kept per chunk would leave 2,500 of them, 10 MiB.
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("read-release", 2, 250000)}, 1);
  ASSERT_EQ(traces.files.size(), 2u);
  const format::Reader &reader = *traces.files[0].reader;
  const long fileKiB = static_cast<long>(reader.slotCount() * format::kRecordSize / 1024);
  ASSERT_GT(fileKiB, 15000);
  analyzer::AnalysisOptions options;
  options.readChunk = 100;
  const analyzer::AnalysisResult result = analyzer::analyze(traces, options);
  EXPECT_TRUE(result.findings.empty());
  const long after = residentKiB(reader);
  ASSERT_GE(after, 0) << "no mapping of the trace in /proc/self/smaps";
  EXPECT_LT(after, fileKiB / 4) << "of " << fileKiB << " KiB";
  // The measure sees pages that are kept: all of them once read without releases.
  EXPECT_GT(touchAll(reader), 0u);
  EXPECT_GT(residentKiB(reader), fileKiB * 9 / 10);
}

TEST(Reading, AReleasedRangeReadsBackTheSameRecords) {
  analyzer::TraceSet traces = analyzer::TraceSet::open({uniformDir("read-back", 1, 70000)}, 1);
  ASSERT_EQ(traces.files.size(), 1u);
  const format::Reader &reader = *traces.files[0].reader;
  std::vector<format::Record> before(&reader.slot(0), &reader.slot(0) + reader.slotCount());
  const long fileKiB = static_cast<long>(reader.slotCount() * format::kRecordSize / 1024);
  {
    analyzer::PageReleaser releaser;
    // A page per range (the records start on a page), more ranges than one batch holds (1,024):
    // a full batch and the rest are both released.
    for (uint64_t first = 0; first + 64 <= reader.slotCount(); first += 64)
      releaser.add(reader, first, 64);
  }
  EXPECT_LT(residentKiB(reader), fileKiB / 10) << "of " << fileKiB << " KiB";
  for (uint64_t i = 0; i < reader.slotCount(); ++i)
    ASSERT_EQ(std::memcmp(&before[i], &reader.slot(i), sizeof(format::Record)), 0) << "slot " << i;
}

} // namespace
} // namespace collcheck::testing
