#include "chunk_prefetcher.h"

#include <unistd.h>

namespace collcheck::analyzer {

ChunkPrefetcher::ChunkPrefetcher(const std::vector<int> &fds, size_t chunk)
    : fds_(fds), slots_(new Slot[fds.size() * kBuffersPerFile]) {
  for (size_t s = 0; s < fds.size() * kBuffersPerFile; ++s) {
    slots_[s].data.resize(chunk);
    slots_[s].states.resize(chunk);
  }
  thread_ = std::thread([this] { work(); });
}

ChunkPrefetcher::~ChunkPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool ChunkPrefetcher::request(int file, uint64_t first, uint64_t count) {
  for (int b = 0; b < kBuffersPerFile; ++b) {
    size_t index = static_cast<size_t>(file) * kBuffersPerFile + static_cast<size_t>(b);
    Slot &s = slots_[index];
    if (s.state.load(std::memory_order_acquire) != kIdle)
      continue;
    s.first = first;
    s.count = std::min<uint64_t>(count, s.data.size());
    s.state.store(kAsked, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(index);
    }
    wake_.notify_one();
    return true;
  }
  return false;
}

const format::Record *ChunkPrefetcher::wait(int file, uint64_t first, uint64_t count,
                                            const format::SlotState *&states, ChunkRun *run) {
  for (int b = 0; b < kBuffersPerFile; ++b) {
    Slot &s = slots_[static_cast<size_t>(file) * kBuffersPerFile + static_cast<size_t>(b)];
    int state = s.state.load(std::memory_order_acquire);
    if ((state != kAsked && state != kReady) || s.first != first)
      continue;
    while (state == kAsked) {
      s.state.wait(kAsked, std::memory_order_acquire);
      state = s.state.load(std::memory_order_acquire);
    }
    s.state.store(kInUse, std::memory_order_relaxed);
    if (!s.ok || s.count != count) {
      s.state.store(kIdle, std::memory_order_release);
      return nullptr;
    }
    states = s.states.data();
    if (run)
      *run = s.run;
    return s.data.data();
  }
  return nullptr;
}

void ChunkPrefetcher::release(int file) {
  for (int b = 0; b < kBuffersPerFile; ++b) {
    Slot &s = slots_[static_cast<size_t>(file) * kBuffersPerFile + static_cast<size_t>(b)];
    if (s.state.load(std::memory_order_acquire) == kInUse)
      s.state.store(kIdle, std::memory_order_release);
  }
}

void ChunkPrefetcher::work() {
  while (true) {
    size_t index;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      index = queue_.front();
      queue_.pop_front();
    }
    Slot &s = slots_[index];
    size_t bytes = s.count * format::kRecordSize;
    int fd = fds_[index / kBuffersPerFile];
    ssize_t got =
        fd < 0 ? -1
               : pread(fd, s.data.data(), bytes,
                       static_cast<off_t>(format::kHeaderSize + s.first * format::kRecordSize));
    s.ok = got == static_cast<ssize_t>(bytes);
    s.run = {};
    if (s.ok && s.count > 0) {
      const format::Record &first = s.data[0];
      bool single = true;
      for (uint64_t i = 0; i < s.count; ++i) {
        const format::Record &r = s.data[i];
        s.states[i] = format::classify(r);
        single = single && s.states[i] == format::SlotState::Published &&
                 r.kind < static_cast<uint8_t>(format::Kind::Send) && r.commId == first.commId &&
                 r.commRank == first.commRank && r.seq() == first.seq() + i;
      }
      s.run = {single, first.commId, first.commRank, first.seq()};
    }
    s.state.store(kReady, std::memory_order_release);
    s.state.notify_one();
  }
}

} // namespace collcheck::analyzer
