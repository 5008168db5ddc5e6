#include "analyzer/parallel/share_plan.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

namespace collcheck::analyzer::parallel {
namespace {

using format::Kind;

bool isCallOn(const format::Record &r, uint64_t commId) {
  return r.commId == commId && format::isCallKind(r.kind) &&
         format::classify(r) == format::SlotState::Published && format::isKnownKind(r.kind);
}

// The sequence number of the first call on `commId` at or after slot `i`; UINT64_MAX: none.
// A file's end is preallocated, never-written slots: a long run of empty slots is taken for it
// (a cut placed wrongly by this guess is found by the merge's check, never trusted).
uint64_t nextSeqAt(const format::Reader &slots, uint64_t i, uint64_t commId) {
  constexpr uint64_t kEmptyRunIsEnd = 256;
  uint64_t empty = 0;
  for (uint64_t n = slots.slotCount(); i < n && empty < kEmptyRunIsEnd; ++i) {
    const format::Record &r = slots.slot(i);
    if (isCallOn(r, commId))
      return r.seq();
    empty = format::classify(r) == format::SlotState::Empty ? empty + 1 : 0;
  }
  return UINT64_MAX;
}

// The first slot at which the calls on `commId` have sequence numbers `seq` or later: a page or two
// of each file, read where it is mapped.
uint64_t cutSlot(const format::Reader &slots, uint64_t commId, uint64_t seq, uint64_t guess) {
  uint64_t n = slots.slotCount();
  // Files of one program have the same layout: the first file's cut is nearly always right.
  if (guess > 0 && guess <= n && isCallOn(slots.slot(guess - 1), commId) &&
      slots.slot(guess - 1).seq() < seq && nextSeqAt(slots, guess, commId) >= seq)
    return guess;
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (nextSeqAt(slots, mid, commId) >= seq)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Slots up to the first file's last non-empty one.
uint64_t usedSlots(const format::Reader &slots) {
  uint64_t n = slots.slotCount();
  while (n > 0 && format::classify(slots.slot(n - 1)) == format::SlotState::Empty)
    --n;
  return n;
}

// In every file, the first slot at which the calls on `commId` have sequence numbers `seq` or
// later (the first file's slot is the guess for the others: files of one program agree).
std::vector<uint64_t> cutsAt(const TraceSet &traces, uint64_t commId, uint64_t seq) {
  const format::Reader &first = *traces.files[0].reader;
  uint64_t guess = cutSlot(first, commId, seq, 0);
  std::vector<uint64_t> cuts(traces.files.size());
  cuts[0] = guess;
  for (size_t f = 1; f < traces.files.size(); ++f) {
    const format::Reader &slots = *traces.files[f].reader;
    cuts[f] = cutSlot(slots, commId, seq, guess);
  }
  return cuts;
}

// The cut of boundary `k` of `count` in every file (0: the files' starts; count: their ends).
std::vector<uint64_t> boundary(const TraceSet &traces, uint64_t commId, int k, int count,
                               Balance balance) {
  std::vector<uint64_t> cuts(traces.files.size(), 0);
  if (k <= 0)
    return cuts;
  for (size_t f = 0; f < traces.files.size(); ++f)
    cuts[f] = traces.files[f].reader->slotCount();
  if (k >= count)
    return cuts;
  // Equal byte ranges of the first file: an unfinished file's preallocated, never-written end is
  // read too, and costs nearly what records cost (the page-cache traffic dominates).
  const format::Reader &first = *traces.files[0].reader;
  uint64_t slots = balance == Balance::Bytes ? first.slotCount() : usedSlots(first);
  uint64_t target = slots * static_cast<uint64_t>(k) / static_cast<uint64_t>(count);
  uint64_t seq = nextSeqAt(first, target, commId);
  if (seq == 0)
    return std::vector<uint64_t>(traces.files.size(), 0);
  if (seq == UINT64_MAX)
    return cuts; // past the communicator's last call: the share before reads the files' ends
  return cutsAt(traces, commId, seq);
}

} // namespace

std::optional<uint64_t> cutCommunicator(const TraceSet &traces) {
  if (traces.files.empty())
    return std::nullopt;
  // Communicators are created at the start: the first file's first slots tell which span every
  // file and which of them carries the most calls.
  const format::Reader &first = *traces.files[0].reader;
  constexpr uint64_t kLook = 8192;
  std::map<uint64_t, uint64_t> calls;
  std::map<uint64_t, bool> spansAll;
  for (uint64_t i = 0; i < std::min(kLook, first.slotCount()); ++i) {
    const format::Record &r = first.slot(i);
    if (format::classify(r) != format::SlotState::Published)
      continue;
    if (r.kind == static_cast<uint8_t>(Kind::CommCreate))
      spansAll[r.commId] = r.count >= traces.files.size();
    else if (isCallOn(r, r.commId))
      ++calls[r.commId];
  }
  std::optional<uint64_t> best;
  uint64_t most = 0;
  for (const auto &[id, n] : calls)
    if (spansAll[id] && n > most) {
      best = id;
      most = n;
    }
  return best;
}

Balance balanceFromEnvironment() {
  const char *value = std::getenv("COLLCHECK_SPLIT_BALANCE");
  return value && std::string_view(value) == "records" ? Balance::Records : Balance::Bytes;
}

RangeSpec planShare(const TraceSet &traces, uint64_t commId, int index, int count,
                    Balance balance) {
  RangeSpec spec;
  spec.begin = boundary(traces, commId, index, count, balance);
  spec.end = boundary(traces, commId, index + 1, count, balance);
  spec.first = index == 0;
  // The share that reads to the files' ends is the last one (those after it, if any, are empty).
  spec.last = true;
  for (size_t f = 0; f < traces.files.size(); ++f)
    spec.last = spec.last && spec.end[f] == traces.files[f].reader->slotCount();
  spec.alongComm = commId;
  return spec;
}

std::optional<std::vector<uint64_t>> cutAhead(const TraceSet &traces, uint64_t commId,
                                              const std::vector<uint64_t> &from,
                                              const std::vector<uint64_t> &end,
                                              uint64_t startSlots) {
  const size_t files = traces.files.size();
  if (files == 0 || from.size() != files || end.size() != files || from[0] >= end[0])
    return std::nullopt;
  // The asker pays a share's start, then both end together when it gets g with
  // left - g = start + g. Less than half a start is within the error of the estimate: kept.
  const auto left = static_cast<double>(end[0] - from[0]);
  const auto start = static_cast<double>(std::max<uint64_t>(startSlots, 1));
  const double given = (left - start) / 2;
  if (given < start / 2)
    return std::nullopt;
  const format::Reader &first = *traces.files[0].reader;
  uint64_t seq = nextSeqAt(first, end[0] - static_cast<uint64_t>(given), commId);
  if (seq == 0 || seq == UINT64_MAX)
    return std::nullopt;
  std::vector<uint64_t> cuts = cutsAt(traces, commId, seq);
  for (size_t f = 0; f < files; ++f)
    if (cuts[f] <= from[f] || cuts[f] > end[f])
      return std::nullopt;
  return cuts;
}

} // namespace collcheck::analyzer::parallel
