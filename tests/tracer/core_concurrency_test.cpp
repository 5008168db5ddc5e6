// The tracer core driven directly from many threads at once (also built and run under
// ThreadSanitizer in CI): concurrent records on shared and private communicators, communicators
// registered and released while others record, and file growth across chunks, with nothing lost,
// duplicated or corrupted.
#include "format/reader.h"
#include "format/writer.h"
#include "tracer/preload/core.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collcheck;
using namespace collcheck::tracer;

TEST(TracerCore, ConcurrentRecordingLosesAndCorruptsNothing) {
  auto dir =
      std::filesystem::temp_directory_path() / ("collcheck-core-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("COLLCHECK_OUTPUT", dir.c_str(), 1);

  constexpr int kThreads = 8;
  constexpr int kCallsPerThread = 6000; // 48,000 records: three file extensions
  CommState *shared = registerComm(0x1000, 77, 0, 1);
  ASSERT_NE(shared, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      CommState *own = registerComm(0x2000 + 16 * t, 100 + t, 0, 1);
      for (int i = 0; i < kCallsPerThread; ++i) {
        // Alternate between the thread's own communicator and a shared one; register and release
        // short-lived communicators while other threads look theirs up.
        CommState *comm = i % 2 ? own : findComm(0x1000);
        if (i % 500 == 0) {
          uintptr_t handle = 0x9000 + 16 * (t * 1000 + i);
          registerComm(handle, 5000 + t * 1000 + i, 0, 1);
          releaseComm(handle);
        }
        CallScope scope;
        Record *slot = reserveSlot();
        ASSERT_NE(slot, nullptr);
        Record rec{};
        stamp(rec, format::Kind::AllReduce, comm);
        rec.count = static_cast<uint64_t>(t) << 32 | static_cast<uint64_t>(i);
        commit(*slot, rec);
        endRecord(slot, false);
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  markFinished();

  std::vector<std::filesystem::path> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  std::string error;
  auto reader = format::Reader::open(files[0].string(), error);
  ASSERT_TRUE(reader) << error;
  const format::Reader::Summary &s = reader->summary();
  EXPECT_EQ(s.published, uint64_t{kThreads} * kCallsPerThread);
  EXPECT_EQ(s.torn + s.corrupt + s.holes, 0u);
  std::map<uint64_t, std::set<uint64_t>> seqs;
  std::set<uint64_t> payloads;
  for (uint64_t i = 0; i < reader->slotCount(); ++i) {
    const format::Record &r = reader->slot(i);
    ASSERT_TRUE(seqs[r.commId].insert(r.seq()).second) << "duplicate sequence number";
    payloads.insert(r.count);
    EXPECT_TRUE(format::returned(r));
  }
  EXPECT_EQ(payloads.size(), uint64_t{kThreads} * kCallsPerThread) << "every call exactly once";
  EXPECT_EQ(seqs[77].size(), uint64_t{kThreads} * kCallsPerThread / 2);
  EXPECT_EQ(*seqs[77].rbegin(), uint64_t{kThreads} * kCallsPerThread / 2 - 1);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(seqs[100 + t].size(), kCallsPerThread / 2u);
  std::filesystem::remove_all(dir);
}
