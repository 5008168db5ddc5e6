#include "analyzer/match/chunk_reader.h"

#include <algorithm>
#include <unistd.h>

namespace collcheck::analyzer {

namespace {

// Whether `r`, `i` slots after `first`, is the next of `first`'s stream's consecutive calls.
inline bool continuesRun(const format::Record &first, const format::Record &r,
                         format::SlotState state, uint64_t i) {
  // A call that holds its values (format::holdsValues) is a value record too: routed, not run.
  return state == format::SlotState::Published && format::isCollectiveKind(r.kind) &&
         r.commId == first.commId && r.commRank == first.commRank && r.seq() == first.seq() + i &&
         !format::holdsValues(r);
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
