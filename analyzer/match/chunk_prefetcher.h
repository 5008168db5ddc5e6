// Reads the next chunks of every trace file on a helper thread while the main thread matches the
// current ones, and classifies their slots there (format::classify: the check of every record),
// so the copy out of the page cache and the validation overlap the matching instead of adding to
// it. Two buffers per file: one being matched, one being filled.
#pragma once

#include "reader.h"
#include "record.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace collcheck::analyzer {

// A chunk that is one member stream's consecutive calls and nothing else (the common case: a
// process issuing collectives on one communicator), which the merge can match in place.
struct ChunkRun {
  bool single = false;
  uint64_t commId = 0;
  int32_t commRank = -1;
  uint64_t firstSeq = 0;
};

class ChunkPrefetcher {
public:
  static constexpr int kBuffersPerFile = 2;
  // `fds`: one open file per trace (-1: none); `chunk`: records per read.
  ChunkPrefetcher(const std::vector<int> &fds, size_t chunk);
  ~ChunkPrefetcher();
  // Asks for records [first, first+count) of `file`; false when both of its buffers are taken.
  bool request(int file, uint64_t first, uint64_t count);
  // The records asked for, once read, the state of each and whether they are one stream's run;
  // null when they were not asked for or could not be read. The buffer stays the caller's until
  // release(file).
  const format::Record *wait(int file, uint64_t first, uint64_t count,
                             const format::SlotState *&states, ChunkRun *run = nullptr);
  void release(int file);

private:
  enum State : int { kIdle, kAsked, kReady, kInUse };
  struct Slot {
    std::vector<format::Record> data;
    std::vector<format::SlotState> states;
    ChunkRun run;
    uint64_t first = 0, count = 0;
    bool ok = false;
    std::atomic<int> state{kIdle};
  };
  void work();
  const std::vector<int> &fds_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<size_t> queue_; // slot indices to fill
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace collcheck::analyzer
