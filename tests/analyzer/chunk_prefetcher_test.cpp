// The read-ahead thread hands its chunks to the matcher (match/chunk_prefetcher.h): every chunk
// asked for arrives, holding its own records, however the two threads interleave. A chunk the
// matcher waits for while the helper is still reading it is the handover whose wake-up can be
// lost: the matcher here spends from nothing to longer than a read on each chunk, so that it
// arrives at a chunk being read hundreds of times a run, and the test fails instead of
// hanging when a waiter is never woken (as it does with the helper's notification removed).
#include "match/chunk_prefetcher.h"

#include "scratch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace collcheck::testing {
namespace {

constexpr int kFiles = 2;
constexpr uint64_t kRecords = 65536, kChunk = 256;
constexpr int kRounds = 40;

// A file of `kRecords` records after an empty header; record i of file f carries f * kRecords + i
// in its count, so a chunk shows whose records it holds.
std::string writeFile(const std::string &dir, int f) {
  std::string path = dir + "/" + std::to_string(f) + ".cctrace";
  std::vector<char> bytes(format::kHeaderSize + kRecords * format::kRecordSize, 0);
  auto *records = reinterpret_cast<format::Record *>(bytes.data() + format::kHeaderSize);
  for (uint64_t i = 0; i < kRecords; ++i)
    records[i].count = static_cast<uint64_t>(f) * kRecords + i;
  FILE *out = std::fopen(path.c_str(), "wb");
  EXPECT_NE(out, nullptr) << path;
  if (out) {
    EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
    std::fclose(out);
  }
  return path;
}

TEST(ChunkPrefetcher, EveryChunkReadAheadReachesItsWaiter) {
  std::string dir = freshDir("prefetcher");
  std::filesystem::create_directories(dir);
  std::vector<int> fds;
  for (int f = 0; f < kFiles; ++f)
    fds.push_back(open(writeFile(dir, f).c_str(), O_RDONLY | O_CLOEXEC));
  for (int fd : fds)
    ASSERT_GE(fd, 0);

  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  uint64_t wrong = 0;
  std::atomic<uint64_t> handed{0};
  std::thread matcher([&] {
    // Each round matches the chunks for a different time, from none to longer than the helper
    // takes to read one: somewhere in between, the matcher keeps arriving at the chunk the helper
    // is reading.
    for (int round = 0; round < kRounds; ++round) {
      analyzer::ChunkPrefetcher prefetcher(fds, kChunk, /*helper=*/true);
      for (int f = 0; f < kFiles; ++f)
        for (int b = 0; b < analyzer::ChunkPrefetcher::kBuffersPerFile; ++b)
          wrong += !prefetcher.request(f, static_cast<uint64_t>(b) * kChunk, kChunk);
      volatile uint64_t sink = 0;
      for (uint64_t first = 0; first < kRecords; first += kChunk) {
        for (int f = 0; f < kFiles; ++f) {
          const format::SlotState *states = nullptr;
          const format::Record *records = prefetcher.wait(f, first, kChunk, states);
          ++handed;
          if (!records) {
            ++wrong;
            continue;
          }
          uint64_t base = static_cast<uint64_t>(f) * kRecords + first;
          for (uint64_t i = 0; i < kChunk; ++i)
            wrong += records[i].count != base + i;
          for (int spin = 0; spin < round * 400; ++spin)
            sink = sink + records[spin % kChunk].count;
          prefetcher.release(f);
          uint64_t next = first + analyzer::ChunkPrefetcher::kBuffersPerFile * kChunk;
          if (next < kRecords)
            wrong += !prefetcher.request(f, next, kChunk);
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (!finished.wait_for(lock, std::chrono::seconds(60), [&] { return done; })) {
      // The matcher is stuck in a wait no one will end: it cannot be joined, so the test ends here.
      std::fprintf(stderr, "a waiter was never woken (after %llu chunks)\n",
                   static_cast<unsigned long long>(handed.load()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  matcher.join();
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(handed.load(), uint64_t{kRounds} * kFiles * (kRecords / kChunk));
  for (int fd : fds)
    close(fd);
}

} // namespace
} // namespace collcheck::testing
