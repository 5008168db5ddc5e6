// Reads the next chunks of every trace file on a helper thread while the main thread matches the
// current ones, so the copy out of the page cache overlaps the matching instead of adding to it.
// Two buffers per file: one being matched, one being filled (one, without the helper thread). A
// chunk the helper has not started yet is read by the thread that needs it (work stealing): the
// matcher never waits on a queue, and on a machine with no second core free the cost is that of
// reading it in place.
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

// How a chunk starts: with a run of one member stream's consecutive calls (the common case: a
// process issuing collectives on one communicator), which the merge can match in place; `length`
// 0 when its first slot is not such a call.
struct ChunkRun {
  uint64_t length = 0; // the leading slots that are one stream's consecutive calls
  uint64_t commId = 0;
  int32_t commRank = -1;
  uint64_t firstSeq = 0;
};

// Classifies `count` slots and says how many of the first are one stream's run.
void classifyChunk(const format::Record *records, uint64_t count, format::SlotState *states,
                   ChunkRun &run);
// The run that starts `count` slots already classified (the rest of a chunk read in two parts).
ChunkRun leadingRun(const format::Record *records, const format::SlotState *states, uint64_t count);

class ChunkPrefetcher {
public:
  static constexpr int kBuffersPerFile = 2;
  // `fds`: one open file per trace (-1: none); `chunk`: records per read; `helper`: start the
  // read-ahead thread (else every chunk is read when it is waited for).
  ChunkPrefetcher(const std::vector<int> &fds, size_t chunk, bool helper);
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
  enum State : int { kIdle, kAsked, kReading, kReady, kInUse };
  struct Slot {
    // Not value-initialized: every file has its buffers, and zeroing them all costs a pass
    // over as much memory before the first record is read.
    format::Record *data = nullptr; // in arena_
    std::unique_ptr<format::SlotState[]> states;
    size_t capacity = 0;
    ChunkRun run;
    uint64_t first = 0, count = 0;
    bool ok = false;
    std::atomic<int> state{kIdle};
  };
  void work();
  void fill(size_t index);
  Slot &slot(int file, int buffer) {
    return slots_[static_cast<size_t>(file) * static_cast<size_t>(buffersPerFile_) +
                  static_cast<size_t>(buffer)];
  }
  const std::vector<int> &fds_;
  int buffersPerFile_;
  // Every buffer in one mapping asked for in huge pages: the buffers of thousands of files are
  // hundreds of MiB that each round touches once, and in 4 KiB pages every round misses the TLB
  // on every buffer (and a machine with costly page mapping pays the first touch of each page).
  struct Arena {
    void *base = nullptr;
    size_t bytes = 0;
    ~Arena();
  } arena_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex mutex_;
  std::condition_variable wake_; // the helper: a chunk to read, or the end
  // The matcher, waiting for a chunk the helper is reading; the helper stores kReady under
  // mutex_, so no wake-up can pass between the matcher's check and its sleep. Not
  // std::atomic::wait: a test of the analyzer once hung with the matcher asleep in that wait on a
  // chunk already marked ready, the helper idle (whether GCC 12's libstdc++, whose atomic waits use
  // shared futexes, or the kernel lost the wake-up is not known; a debugger's attach ended it).
  std::condition_variable read_;
  std::deque<size_t> queue_; // slot indices to fill
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace collcheck::analyzer
