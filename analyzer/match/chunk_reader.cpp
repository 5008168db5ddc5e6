#include "analyzer/match/chunk_reader.h"

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

ChunkReader::ChunkReader(const std::vector<int> &fds, size_t chunk)
    : fds_(fds), chunk_(chunk), states_(new format::SlotState[fds.size() * chunk]) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = (fds.size() * chunk * sizeof(format::Record) + kHuge - 1) & ~(kHuge - 1);
  if (bytes == 0)
    return;
  // Mapped one huge page larger, so that the buffers can start on a huge page's boundary. Not
  // value-initialized: zeroing them all would cost a pass over as much memory before the first
  // record is read.
  void *map = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED)
    throw std::bad_alloc();
  arena_.base = map;
  arena_.bytes = bytes + kHuge;
  data_ = reinterpret_cast<format::Record *>((reinterpret_cast<uintptr_t>(map) + kHuge - 1) &
                                             ~(uintptr_t{kHuge} - 1));
  madvise(data_, bytes, MADV_HUGEPAGE);
}

ChunkReader::Arena::~Arena() {
  if (base)
    munmap(base, bytes);
}

const format::Record *ChunkReader::read(int file, uint64_t first, uint64_t count,
                                        const format::SlotState *&states, ChunkRun *run) {
  const auto f = static_cast<size_t>(file);
  const int fd = fds_[f];
  if (fd < 0 || count > chunk_)
    return nullptr;
  format::Record *data = data_ + f * chunk_;
  const size_t bytes = count * format::kRecordSize;
  if (pread(fd, data, bytes,
            static_cast<off_t>(format::kHeaderSize + first * format::kRecordSize)) !=
      static_cast<ssize_t>(bytes))
    return nullptr;
  format::SlotState *out = states_.get() + f * chunk_;
  ChunkRun leading;
  classifyChunk(data, count, out, leading);
  states = out;
  if (run)
    *run = leading;
  return data;
}

} // namespace collcheck::analyzer
