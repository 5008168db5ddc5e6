#include "analyzer/match/chunk_reader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace collcheck::analyzer {

namespace {

// Whether `r`, `i` slots after `first`, is the next of `first`'s stream's consecutive calls.
inline bool continuesRun(const format::Record &first, const format::Record &r,
                         format::SlotState state, uint64_t i) {
  return state == format::SlotState::Published && format::isCollectiveKind(r.kind) &&
         r.commId == first.commId && r.commRank == first.commRank && r.seq() == first.seq() + i;
}

constexpr size_t kBatch = 1024; // IOV_MAX: the most ranges one process_madvise takes

// Set once the kernel refused process_madvise(MADV_DONTNEED) on this process: not asked again.
std::atomic<bool> batchRefused{false};

// A pidfd of this process, opened once per process (a forked child opens its own).
int selfPidfd() {
#ifdef SYS_pidfd_open
  static std::mutex mutex;
  static int fd = -1;
  static pid_t owner = 0;
  std::lock_guard lock(mutex);
  if (owner != getpid()) {
    owner = getpid();
    fd = static_cast<int>(syscall(SYS_pidfd_open, owner, 0));
  }
  return fd;
#else
  return -1;
#endif
}

// True when the kernel released every range in one call.
bool releaseBatched(const std::vector<iovec> &ranges) {
#ifdef SYS_process_madvise
  if (batchRefused.load(std::memory_order_relaxed))
    return false;
  const int fd = selfPidfd();
  if (fd < 0) {
    batchRefused.store(true, std::memory_order_relaxed);
    return false;
  }
  size_t bytes = 0;
  for (const iovec &r : ranges)
    bytes += r.iov_len;
  const long done =
      syscall(SYS_process_madvise, fd, ranges.data(), ranges.size(), MADV_DONTNEED, 0U);
  if (done < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM || errno == EBADF))
    batchRefused.store(true, std::memory_order_relaxed);
  return done >= 0 && static_cast<size_t>(done) == bytes;
#else
  (void)ranges;
  return false;
#endif
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

void PageReleaser::add(const format::Reader &reader, uint64_t first, uint64_t count) {
  if (count == 0 || first >= reader.slotCount())
    return;
  count = std::min(count, reader.slotCount() - first);
  static const auto pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(&reader.slot(first));
  auto end = begin + count * format::kRecordSize;
  begin = (begin + pageSize - 1) & ~(pageSize - 1);
  end &= ~(pageSize - 1);
  if (end <= begin)
    return;
  pending_.push_back({reinterpret_cast<void *>(begin), end - begin});
  if (pending_.size() >= kBatch)
    flush();
}

void PageReleaser::flush() {
  if (pending_.empty())
    return;
  // What a refused or partial batch left, or all of it: releasing a range twice is harmless.
  if (!releaseBatched(pending_))
    for (const iovec &r : pending_)
      madvise(r.iov_base, r.iov_len, MADV_DONTNEED);
  pending_.clear();
}

ChunkReader::ChunkReader(std::vector<const format::Reader *> readers, size_t chunk)
    : readers_(std::move(readers)), chunk_(chunk), releasedUpTo_(readers_.size(), 0),
      readEnd_(readers_.size(), 0), states_(new format::SlotState[readers_.size() * chunk]) {}

ChunkReader::~ChunkReader() {
  // A share of a split ends inside the files: what it read would stay mapped until the process
  // ends.
  for (size_t f = 0; f < readers_.size(); ++f)
    if (readers_[f] && readEnd_[f] > releasedUpTo_[f])
      released_.add(*readers_[f], releasedUpTo_[f], readEnd_[f] - releasedUpTo_[f]);
  released_.flush();
}

const format::Record *ChunkReader::read(int file, uint64_t first, uint64_t count,
                                        const format::SlotState *&states, ChunkRun *run) {
  const auto f = static_cast<size_t>(file);
  const format::Reader *reader = readers_[f];
  if (!reader || count > chunk_ || count == 0 || first + count > reader->slotCount())
    return nullptr;
  // Each read gives back the pages before it: one range per read, batched, costs no more than
  // fewer, longer ones (the same pages, a thousandth of the calls).
  if (first > releasedUpTo_[f])
    released_.add(*reader, releasedUpTo_[f], first - releasedUpTo_[f]);
  // From the start of the page that holds `first`: its slots before `first` were not given back
  // with this range (only whole pages are), and they will be with the next.
  static const uint64_t pageSlots =
      std::max<uint64_t>(static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) / format::kRecordSize, 1);
  constexpr uint64_t kHeaderSlots = format::kHeaderSize / format::kRecordSize;
  const uint64_t pageStart = (kHeaderSlots + first) / pageSlots * pageSlots;
  releasedUpTo_[f] = pageStart > kHeaderSlots ? pageStart - kHeaderSlots : 0;
  readEnd_[f] = first + count;
  const format::Record *data = &reader->slot(first);
  format::SlotState *out = states_.get() + f * chunk_;
  ChunkRun leading;
  classifyChunk(data, count, out, leading);
  states = out;
  if (run)
    *run = leading;
  return data;
}

} // namespace collcheck::analyzer
