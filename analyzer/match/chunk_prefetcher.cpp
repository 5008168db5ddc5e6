#include "chunk_prefetcher.h"

#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace collcheck::analyzer {

namespace {

// Whether `r`, `i` slots after `first`, is the next of `first`'s stream's consecutive calls.
inline bool continuesRun(const format::Record &first, const format::Record &r,
                         format::SlotState state, uint64_t i) {
  return state == format::SlotState::Published && format::isCollectiveKind(r.kind) &&
         r.commId == first.commId && r.commRank == first.commRank && r.seq() == first.seq() + i;
}

} // namespace

void classifyChunk(const format::Record *records, uint64_t count, format::SlotState *states,
                   ChunkRun &run) {
  run = {};
  if (count == 0)
    return;
  const format::Record &first = records[0];
  // A run may end inside the chunk (a file's last calls are followed by its release and finalize
  // records, its first ones come after the member lists): its leading part is still matched in
  // place.
  uint64_t length = 0;
  bool inRun = true;
  // The chunk crosses a page every 64 records, where the hardware prefetcher stops: asking 2 KiB
  // ahead keeps the next page's lines coming while these are classified.
  constexpr uint64_t kAhead = 32;
  for (uint64_t i = 0; i < count; ++i) {
    if (i + kAhead < count)
      __builtin_prefetch(&records[i + kAhead]);
    const format::Record &r = records[i];
    states[i] = format::classify(r);
    inRun = inRun && continuesRun(first, r, states[i], i);
    length += inRun;
  }
  run = {length, first.commId, first.commRank, first.seq()};
}

ChunkRun leadingRun(const format::Record *records, const format::SlotState *states,
                    uint64_t count) {
  if (count == 0)
    return {};
  const format::Record &first = records[0];
  uint64_t length = 0;
  while (length < count && continuesRun(first, records[length], states[length], length))
    ++length;
  return {length, first.commId, first.commRank, first.seq()};
}

ChunkPrefetcher::ChunkPrefetcher(const std::vector<int> &fds, size_t chunk, bool helper)
    : fds_(fds), buffersPerFile_(helper ? kBuffersPerFile : 1),
      slots_(new Slot[fds.size() * static_cast<size_t>(buffersPerFile_)]) {
  // Without a helper nothing is read ahead, and a second buffer would only alternate with the
  // first: one per file then.
  const size_t count = fds.size() * static_cast<size_t>(buffersPerFile_);
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = (count * chunk * sizeof(format::Record) + kHuge - 1) & ~(kHuge - 1);
  // Mapped one huge page larger, so that the buffers can start on a huge page's boundary.
  void *map = bytes ? mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                    : MAP_FAILED;
  if (bytes && map == MAP_FAILED)
    throw std::bad_alloc();
  format::Record *aligned = nullptr;
  if (bytes) {
    arena_.base = map;
    arena_.bytes = bytes + kHuge;
    aligned = reinterpret_cast<format::Record *>((reinterpret_cast<uintptr_t>(map) + kHuge - 1) &
                                                 ~(uintptr_t{kHuge} - 1));
    madvise(aligned, bytes, MADV_HUGEPAGE);
  }
  for (size_t s = 0; s < count; ++s) {
    slots_[s].data = aligned + s * chunk;
    slots_[s].states.reset(new format::SlotState[chunk]);
    slots_[s].capacity = chunk;
  }
  if (helper)
    thread_ = std::thread([this] { work(); });
}

ChunkPrefetcher::Arena::~Arena() {
  if (base)
    munmap(base, bytes);
}

ChunkPrefetcher::~ChunkPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void ChunkPrefetcher::fill(size_t index) {
  Slot &s = slots_[index];
  size_t bytes = s.count * format::kRecordSize;
  int fd = fds_[index / static_cast<size_t>(buffersPerFile_)];
  ssize_t got =
      fd < 0 ? -1
             : pread(fd, s.data, bytes,
                     static_cast<off_t>(format::kHeaderSize + s.first * format::kRecordSize));
  s.ok = got == static_cast<ssize_t>(bytes);
}

bool ChunkPrefetcher::request(int file, uint64_t first, uint64_t count) {
  for (int b = 0; b < buffersPerFile_; ++b) {
    Slot &s = slot(file, b);
    size_t index = static_cast<size_t>(&s - slots_.get());
    if (s.state.load(std::memory_order_acquire) != kIdle)
      continue;
    s.first = first;
    s.count = std::min<uint64_t>(count, s.capacity);
    s.state.store(kAsked, std::memory_order_release);
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(index);
      }
      wake_.notify_one();
    }
    return true;
  }
  return false;
}

const format::Record *ChunkPrefetcher::wait(int file, uint64_t first, uint64_t count,
                                            const format::SlotState *&states, ChunkRun *run) {
  for (int b = 0; b < buffersPerFile_; ++b) {
    Slot &s = slot(file, b);
    int state = s.state.load(std::memory_order_acquire);
    if ((state != kAsked && state != kReading && state != kReady) || s.first != first)
      continue;
    if (state == kAsked && s.state.compare_exchange_strong(state, kReading)) {
      fill(static_cast<size_t>(&s - slots_.get())); // not started yet: read it here
      state = kReady;
    }
    if (state == kReading) {
      // The helper is reading it (read_, in the header, says why not std::atomic::wait).
      std::unique_lock<std::mutex> lock(mutex_);
      read_.wait(lock, [&] { return s.state.load(std::memory_order_acquire) != kReading; });
      state = s.state.load(std::memory_order_acquire);
    }
    s.state.store(kInUse, std::memory_order_relaxed);
    if (!s.ok || s.count != count) {
      s.state.store(kIdle, std::memory_order_release);
      return nullptr;
    }
    // Classified here, by the thread that matches them next: the records are then in its cache.
    classifyChunk(s.data, s.count, s.states.get(), s.run);
    states = s.states.get();
    if (run)
      *run = s.run;
    return s.data;
  }
  return nullptr;
}

void ChunkPrefetcher::release(int file) {
  for (int b = 0; b < buffersPerFile_; ++b) {
    Slot &s = slot(file, b);
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
    int expected = kAsked;
    if (!s.state.compare_exchange_strong(expected, kReading))
      continue; // the matcher took it
    fill(index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s.state.store(kReady, std::memory_order_release);
    }
    read_.notify_all();
  }
}

} // namespace collcheck::analyzer
