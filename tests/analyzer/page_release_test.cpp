// Read pages are released in batches (load/page_release.h): whatever path the kernel allows, the
// pages leave this process's resident memory, a range at a time or a thousand at once.
#include "job_builder.h"
#include "load/page_release.h"
#include "load/trace_set.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace collcheck::testing {
namespace {

// Resident pages of mapped files (RssFile), in KiB.
long residentFileKiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = -1;
  while (status >> key)
    if (key == "RssFile:" && status >> value)
      return value;
  return -1;
}

// One rank, 40,000 calls: 2.5 MB of slots, mapped by the reader.
analyzer::TraceSet bigTrace(const std::string &name) {
  std::vector<RankTrace> ranks;
  ranks.emplace_back(0, 1);
  for (int i = 0; i < 40000; ++i)
    ranks.back().call(allreduce(64));
  ranks.back().finalize();
  std::string dir = freshDir(name);
  writeJob(dir, ranks);
  return analyzer::TraceSet::open({dir}, 1);
}

long touchAll(const format::Reader &reader) {
  long sum = 0;
  for (uint64_t i = 0; i < reader.slotCount(); i += 64) // one slot per page
    sum += reader.slot(i).kind;
  return sum;
}

TEST(PageRelease, BatchedRangesLeaveResidentMemory) {
  analyzer::TraceSet traces = bigTrace("page-release");
  ASSERT_EQ(traces.files.size(), 1u);
  const format::Reader &reader = *traces.files[0].reader;
  const long bytes = static_cast<long>(reader.slotCount() * format::kRecordSize);
  ASSERT_GT(bytes, 2'000'000);
  for (uint64_t pagesPerRange : {uint64_t{1}, uint64_t{64}}) {
    // One page per range makes about 600 ranges, and a full batch of 1,024 with the pages of the
    // first pass counted twice: the queue releases itself once full, the rest on flush.
    EXPECT_GT(touchAll(reader), 0);
    const long before = residentFileKiB();
    ASSERT_GT(before, bytes / 1024 / 2) << "the trace was not mapped in";
    analyzer::PageReleaser releaser;
    for (int pass = 0; pass < 2; ++pass)
      for (uint64_t first = 0; first < reader.slotCount(); first += 64 * pagesPerRange)
        releaser.add(reader, first, 64 * pagesPerRange);
    releaser.flush();
    const long after = residentFileKiB();
    EXPECT_LT(after, before - bytes / 1024 * 9 / 10)
        << pagesPerRange << " page(s) per range: " << before << " KiB before, " << after;
  }
}

// A slot range that ends inside a page keeps that page: its next slots are read still.
TEST(PageRelease, APartPageStays) {
  analyzer::TraceSet traces = bigTrace("page-release-part");
  const format::Reader &reader = *traces.files[0].reader;
  EXPECT_GT(touchAll(reader), 0);
  const long before = residentFileKiB();
  analyzer::PageReleaser releaser;
  for (uint64_t first = 1; first + 64 < reader.slotCount(); first += 64)
    releaser.add(reader, first, 62); // never a whole page
  releaser.flush();
  EXPECT_GT(residentFileKiB(), before - 64) << "pages partly outside the ranges were released";
}

} // namespace
} // namespace collcheck::testing
