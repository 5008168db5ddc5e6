// Appends records to one trace file through a shared mapping, so that every published record is in
// the page cache the moment it is published and survives SIGKILL of the process.
// reserve() is lock-free and allocation-free; growing the file (every kChunkRecords records) takes
// a mutex and reserves the disk space first (posix_fallocate), so a full disk is an error code
// here, never a SIGBUS in the application. With startGrower(), a thread of the writer's own does
// the growing ahead of need (extends, maps and write-faults the chunks after the one in use), so
// that the threads that call reserve() do not wait for it.
#pragma once

#include "format/record.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace collcheck::format {

class Writer {
public:
  static constexpr uint64_t kChunkRecords = 16384; // 1 MiB of records per extension
  static constexpr uint64_t kMaxChunks = 1u << 16; // 64 GiB per file
  // With a grower: chunks kept mapped beyond the one in use (the file's preallocated end is at
  // most this many chunks more), and how often (in records) reserve() wakes a waiting grower.
  static constexpr uint64_t kChunksAhead = 2;
  static constexpr uint64_t kWakeEvery = 4096;

  struct Identity {
    std::string host;
    std::string jobId;
    std::string command;
    int pid = 0;
  };

  // Creates a new trace file in `dir` (the folder is created 0700 when missing, its parent must
  // exist; the file is created 0600 with O_EXCL|O_NOFOLLOW, never overwriting one). `stem` names
  // the file: DIR/STEM.cctrace, or DIR/STEM.N.cctrace when that exists. Returns null and sets
  // `error`.
  static std::unique_ptr<Writer> create(const std::string &dir, const std::string &stem,
                                        const Identity &identity, std::string &error);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  // A slot for one record, or null when the file cannot grow (the loss is counted in the header).
  // The caller fills it and calls format::publish().
  Record *reserve() {
    uint64_t index = next_.fetch_add(1, std::memory_order_relaxed);
    uint64_t chunk = index / kChunkRecords;
    if (index % kWakeEvery == 0 && growerStarted_) [[unlikely]]
      wakeGrower();
    if (chunk >= kMaxChunks) [[unlikely]]
      return drop();
    Record *base = chunks_[chunk].load(std::memory_order_acquire);
    if (!base) [[unlikely]] {
      base = grow(chunk);
      if (!base)
        return drop();
    }
    return base + index % kChunkRecords;
  }

  // A slot only where its chunk is mapped already, never growing the file (which takes a mutex):
  // what a signal handler may call. Null otherwise (the loss is counted).
  Record *reserveMapped() {
    uint64_t index = next_.fetch_add(1, std::memory_order_relaxed);
    uint64_t chunk = index / kChunkRecords;
    Record *base = chunk < kMaxChunks ? chunks_[chunk].load(std::memory_order_acquire) : nullptr;
    return base ? base + index % kChunkRecords : drop();
  }

  FileHeader &header() { return *header_; }
  const std::string &path() const { return path_; }
  // The first error that stopped the file from growing, empty while none.
  std::string failure() const;
  uint64_t reserved() const { return next_.load(std::memory_order_relaxed); }

  // Marks the trace complete and refines the clock calibration. Safe to call more than once.
  void finish();
  // In a forked child: forget the parent's mappings without touching the parent's file.
  void abandon();

  // Starts the thread that grows the file ahead of need; false where no thread could be started
  // (the callers of reserve() then grow it themselves). The thread blocks every signal, so that
  // none meant for the application lands on it. Call once, before the first reserve().
  bool startGrower();

private:
  Writer() = default;
  Record *grow(uint64_t chunk);
  Record *mapChunk(uint64_t chunk); // growMutex_ held
  Record *drop();
  void wakeGrower();
  static void *growerMain(void *self);
  void growAhead();

  int fd_ = -1;
  std::string path_;
  FileHeader *header_ = nullptr;
  std::atomic<uint64_t> next_{0};
  std::unique_ptr<std::atomic<Record *>[]> chunks_;
  std::mutex growMutex_;
  std::string failure_;
  std::atomic<bool> failed_{false};
  bool abandoned_ = false;
  // The grower: started once, stopped by the destructor; it sleeps on growerEpoch_ (a futex) while
  // growerWaiting_ says so, and reserve() bumps the epoch every kWakeEvery records.
  bool growerStarted_ = false;
  unsigned long growerThread_ = 0; // pthread_t
  std::atomic<bool> growerStop_{false};
  std::atomic<bool> growerWaiting_{false};
  std::atomic<uint32_t> growerEpoch_{0};
  uint64_t grownChunks_ = 0; // grower only: chunks known mapped
  uint64_t touchedUpTo_ = 0; // grower only: records whose pages it has write-faulted
};

} // namespace collcheck::format
