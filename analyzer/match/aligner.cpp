#include "analyzer/match/aligner.h"

#include "analyzer/model/signature.h"

#include <span>

#include <algorithm>
#include <map>

namespace collcheck::analyzer {
namespace {

bool matches(const format::Record &a, const format::Record &b) {
  return isHole(a) || isHole(b) || sameSignature(a, b);
}

// Whether the rules of a position where every rank issued `call` read each rank's record (`at`),
// not `call` alone: the v-variants' counts always; a fixed-count exchange's only where some
// rank's other side differs from its count, so that a matched position of one stays one record
// in a share's event log whatever the communicator's size.
template <class At> bool readsEachRank(const format::Record &call, size_t count, At at) {
  if (hasVariableCounts(call))
    return true;
  if (!format::carriesOtherSide(call))
    return false;
  for (size_t r = 0; r < count; ++r)
    if (otherSideDiffers(at(r)))
      return true;
  return false;
}

} // namespace

void CommAligner::resize(size_t members) {
  if (members <= members_.size())
    return;
  members_.resize(members);
  records_.assign(members, nullptr);
  presence_.assign(members, Presence::Matched);
  allMatched_.assign(members, Presence::Matched);
}

bool CommAligner::complete(const MemberStream &m, const StreamStatus &status) const {
  return m.noTrace || (m.file >= 0 && status.fileDone(m.file));
}

bool CommAligner::ended(const MemberStream &m, const StreamStatus &status) const {
  return m.queue.empty() && complete(m, status);
}

Presence CommAligner::absence(const MemberStream &m, const StreamStatus &status) const {
  if (m.noTrace || m.file < 0)
    return Presence::NoTrace;
  const ProcessState &p = status.process(m.file);
  if (p.cut)
    return Presence::NoTrace;
  if (m.released || p.finalized || p.finished)
    return Presence::Exited;
  return Presence::NotReached;
}

void CommAligner::consume(size_t commRank) {
  MemberStream &m = members_[commRank];
  // The last matched call stays readable in the ring behind the head (nothing is pushed once a
  // stream ended); only a hole popped after it needs a copy.
  bool hole = isHole(m.queue.front());
  if (hole && !m.lastPoppedHole && !m.lastIsCopy && m.consumed) {
    m.last = m.queue.lastPopped();
    m.hasLast = true;
  }
  m.lastPoppedHole = hole;
  m.lastIsCopy = m.lastIsCopy && hole;
  m.consumed += !hole;
  if (m.reorderedLeft && --m.reorderedLeft == 0)
    --reorderedRanks_;
  m.queue.pop();
  if (m.backlog && *m.backlog)
    --*m.backlog;
}

CommAligner::Result CommAligner::run(StreamStatus &status, EventSink &sink) {
  if (done_)
    return Result::Done;
  bool progressed = false;
  const size_t count = members_.size();
  if (count == 0 || comm_.size < 0)
    return Result::Wait;
  while (true) {
    // Fast path, a block of positions at a time: the longest run over which every member's calls
    // carry the signatures of member 0's. Compared rank by rank, so that each queue is read
    // sequentially instead of one record from each of P queues per position.
    size_t block = reorderedRanks_ == 0 ? kBlock : 0;
    for (size_t r = 0; r < count && block > 0; ++r)
      block = std::min(block, members_[r].queue.size());
    const RecordQueue &reference = members_[0].queue;
    for (size_t k = 0; k < block; ++k)
      if (isHole(reference.at(k))) {
        block = k;
        break;
      }
    for (size_t r = 1; r < count && block > 0; ++r) {
      const RecordQueue &q = members_[r].queue;
      for (size_t k = 0; k < block; ++k)
        if (!sameSignature(reference.at(k), q.at(k))) {
          block = k;
          break;
        }
    }
    if (block > 0) {
      for (size_t k = 0; k < block; ++k) {
        const format::Record &call = reference.at(k);
        // Every rank issued `call`; only the v-variants' rules, and a fixed-count exchange's where
        // some rank's other side differs, need each rank's own record.
        std::span<const format::Record *const> records;
        if (readsEachRank(call, count, [&](size_t r) -> const format::Record & {
              return members_[r].queue.at(k);
            })) {
          for (size_t r = 0; r < count; ++r)
            records_[r] = &members_[r].queue.at(k);
          records = records_;
        }
        CollectiveEvent event{comm_, call, 0, records, allMatched_, true, false};
        sink.collective(event);
      }
      for (size_t r = 0; r < count; ++r) {
        MemberStream &m = members_[r];
        m.consumed += block;
        m.lastPoppedHole = false;
        m.lastIsCopy = false;
        m.queue.pop(block);
        if (m.backlog)
          *m.backlog -= std::min(*m.backlog, uint64_t{block});
      }
      positions_ += block;
      progressed = true;
      continue;
    }
    // Slow path: every stream needs its lookahead buffered, or must be complete.
    bool anyHead = false;
    for (size_t r = 0; r < count; ++r) {
      const MemberStream &m = members_[r];
      if (!complete(m, status) && m.queue.size() < lookahead_)
        return progressed ? Result::Progress : Result::Wait;
      anyHead = anyHead || !m.queue.empty();
    }
    if (!anyHead) {
      finish(sink);
      return Result::Done;
    }
    slowStep(status, sink);
    progressed = true;
  }
}

bool CommAligner::canMatchInPlace() const {
  if (done_ || reorderedRanks_ || comm_.size < 0 || members_.empty())
    return false;
  for (const MemberStream &m : members_)
    if (!m.queue.empty() || m.noTrace || m.file < 0)
      return false;
  return true;
}

size_t CommAligner::agreeingPrefix(const format::Record *reference, const format::Record *run,
                                   size_t length) {
  for (size_t k = 0; k < length; ++k)
    if (!sameSignature(reference[k], run[k]))
      return k;
  return length;
}

void CommAligner::matchInPlace(std::span<const format::Record *const> runs, size_t length,
                               EventSink &sink) {
  const size_t count = members_.size();
  const format::Record *reference = runs[0];
  for (size_t k = 0; k < length; ++k) {
    std::span<const format::Record *const> records;
    if (readsEachRank(reference[k], count,
                      [&](size_t r) -> const format::Record & { return runs[r][k]; })) {
      for (size_t r = 0; r < count; ++r)
        records_[r] = &runs[r][k];
      records = records_;
    }
    sink.collective({comm_, reference[k], 0, records, allMatched_, true, false});
  }
  if (length > 0) {
    for (size_t r = 0; r < count; ++r) {
      MemberStream &m = members_[r];
      m.consumed += length;
      m.last = runs[r][length - 1];
      m.hasLast = true;
      m.lastIsCopy = true;
      m.lastPoppedHole = false;
    }
    positions_ += length;
  }
}

int CommAligner::score(const MemberStream &a, size_t fromA, const MemberStream &b, size_t fromB,
                       const StreamStatus &status) const {
  int mismatches = 0;
  bool aComplete = complete(a, status), bComplete = complete(b, status);
  for (size_t t = 0; t < lookahead_; ++t) {
    bool hasA = fromA + t < a.queue.size(), hasB = fromB + t < b.queue.size();
    if (!hasA && !hasB)
      break;
    if (!hasA) {
      mismatches += aComplete; // the reference goes on where this rank has nothing more
      continue;
    }
    if (!hasB) {
      mismatches += bComplete;
      continue;
    }
    mismatches += !matches(a.queue.at(fromA + t), b.queue.at(fromB + t));
  }
  return mismatches;
}

CommAligner::Explanation CommAligner::explain(const MemberStream &rank,
                                              const MemberStream &reference,
                                              const StreamStatus &status) const {
  const RecordQueue &a = rank.queue, &b = reference.queue;
  // Ties go to the more common bug: same call with a wrong field, then a skipped call, then a
  // reorder, then calls issued by this rank alone, then a different call in the same place.
  Explanation best;
  bool sameKind = a.at(0).kind == b.at(0).kind;
  if (sameKind)
    best = {Move::Substitute, 1, 1 + score(rank, 1, reference, 1, status)};
  auto consider = [&](Move move, size_t length, int cost) {
    if (best.move == Move::None || cost < best.cost)
      best = {move, length, cost};
  };
  for (size_t j = 1; j < lookahead_ && j < b.size(); ++j)
    if (matches(a.at(0), b.at(j)))
      consider(Move::Skip, j, static_cast<int>(j) + score(rank, 0, reference, j, status));
  for (size_t length = 2; length <= lookahead_ && length <= a.size() && length <= b.size();
       ++length) {
    // The same calls in another order: each of the reference's calls pairs with one of ours.
    std::vector<bool> used(length, false);
    bool permutation = true;
    for (size_t i = 0; i < length && permutation; ++i) {
      permutation = false;
      for (size_t k = 0; k < length; ++k)
        if (!used[k] && sameSignature(b.at(i), a.at(k))) {
          used[k] = permutation = true;
          break;
        }
    }
    if (permutation) {
      consider(Move::Reorder, length, 1 + score(rank, length, reference, length, status));
      break;
    }
  }
  for (size_t i = 1; i < lookahead_ && i < a.size(); ++i)
    if (matches(a.at(i), b.at(0)))
      consider(Move::Extra, i, static_cast<int>(i) + score(rank, i, reference, 0, status));
  if (!sameKind)
    consider(Move::Substitute, 1, 2 + score(rank, 1, reference, 1, status));
  return best;
}

void CommAligner::slowStep(StreamStatus &status, EventSink &sink) {
  const size_t count = members_.size();
  // Group the heads by signature; the largest group (lowest rank on a tie) is the reference the
  // others are aligned against. A tie is said so in the event: the rules then blame no side.
  std::vector<size_t> groupOf(count, SIZE_MAX);
  std::vector<size_t> representatives, sizes;
  for (size_t r = 0; r < count; ++r) {
    const RecordQueue &q = members_[r].queue;
    if (q.empty() || isHole(q.front()))
      continue;
    size_t g = 0;
    while (g < representatives.size() &&
           !sameSignature(members_[representatives[g]].queue.front(), q.front()))
      ++g;
    if (g == representatives.size()) {
      representatives.push_back(r);
      sizes.push_back(0);
    }
    groupOf[r] = g;
    ++sizes[g];
  }
  if (representatives.empty()) {
    // Only lost records at this position: nothing to compare, every rank is unknown here.
    for (size_t r = 0; r < count; ++r)
      if (!members_[r].queue.empty())
        consume(r);
    return;
  }
  size_t referenceGroup = 0;
  for (size_t g = 1; g < sizes.size(); ++g)
    if (sizes[g] > sizes[referenceGroup])
      referenceGroup = g;
  const size_t referenceRank = representatives[referenceGroup];
  MemberStream &reference = members_[referenceRank];
  // A lost record followed by this position's call stood for something else (a send, a call the
  // matcher does not see): drop it instead of letting it shift the rank by one position.
  bool droppedHole = false;
  for (size_t r = 0; r < count; ++r) {
    RecordQueue &q = members_[r].queue;
    const RecordQueue &ref = reference.queue;
    if (!q.empty() && isHole(q.front()) && q.size() > 1 && !isHole(q.at(1)) &&
        sameSignature(q.at(1), ref.front()) &&
        !(ref.size() > 1 && sameSignature(q.at(1), ref.at(1)))) {
      consume(r);
      droppedHole = true;
    }
  }
  if (droppedHole)
    return;

  std::vector<Explanation> explanations(count);
  bool anyExtra = false;
  for (size_t r = 0; r < count; ++r) {
    if (groupOf[r] == SIZE_MAX || groupOf[r] == referenceGroup)
      continue;
    explanations[r] = explain(members_[r], reference, status);
    anyExtra = anyExtra || explanations[r].move == Move::Extra;
  }

  if (anyExtra) {
    // Calls only some ranks issued: report and drop them, then look at this position again. One
    // event per call: a rank's k-th extra call of a signature goes with every other rank's k-th
    // of it, so that N repeated extras are N events (one finding with its count and seq range).
    std::vector<ExtraEvent> events;
    std::map<std::pair<size_t, size_t>, size_t> eventOf; // (signature, occurrence) -> event
    std::vector<format::Record> signatures;
    std::vector<bool> extraRank(count, false);
    for (size_t r = 0; r < count; ++r) {
      if (explanations[r].move != Move::Extra)
        continue;
      extraRank[r] = true;
      std::vector<size_t> occurrences(signatures.size(), 0);
      for (size_t i = 0; i < explanations[r].length; ++i) {
        const format::Record &call = members_[r].queue.at(i);
        if (isHole(call))
          continue;
        size_t sig = static_cast<size_t>(
            std::find_if(signatures.begin(), signatures.end(),
                         [&](const format::Record &s) { return sameSignature(s, call); }) -
            signatures.begin());
        if (sig == signatures.size())
          signatures.push_back(call);
        occurrences.resize(signatures.size(), 0);
        auto [at, added] = eventOf.try_emplace({sig, occurrences[sig]++}, events.size());
        if (added)
          events.push_back({comm_, call, {}, {}});
        events[at->second].issuedBy.push_back(static_cast<int32_t>(r));
      }
    }
    for (ExtraEvent &e : events) {
      for (size_t r = 0; r < count; ++r)
        if (std::find(e.issuedBy.begin(), e.issuedBy.end(), static_cast<int32_t>(r)) ==
                e.issuedBy.end() &&
            !members_[r].noTrace &&
            !(members_[r].queue.empty() && absence(members_[r], status) == Presence::NoTrace))
          e.notIssuedBy.push_back(static_cast<int32_t>(r));
      sink.extra(e);
    }
    for (size_t r = 0; r < count; ++r)
      if (extraRank[r])
        for (size_t i = explanations[r].length; i > 0; --i)
          consume(r);
    return;
  }

  // Reorders: report each distinct order once, then put the rank's calls in the reference order
  // so that the positions of the block match.
  std::vector<ReorderEvent> reorders;
  for (size_t r = 0; r < count; ++r) {
    if (explanations[r].move != Move::Reorder)
      continue;
    size_t length = explanations[r].length;
    std::vector<format::Record> actual, expected;
    for (size_t i = 0; i < length; ++i) {
      actual.push_back(members_[r].queue.at(i));
      expected.push_back(reference.queue.at(i));
    }
    auto sameOrder = [&](const ReorderEvent &e) {
      if (e.actual.size() != actual.size())
        return false;
      for (size_t i = 0; i < actual.size(); ++i)
        if (!sameSignature(e.actual[i], actual[i]) || !sameSignature(e.expected[i], expected[i]))
          return false;
      return true;
    };
    auto known = std::find_if(reorders.begin(), reorders.end(), sameOrder);
    if (known == reorders.end()) {
      std::vector<int32_t> referenceRanks;
      for (size_t q = 0; q < count; ++q)
        if (groupOf[q] == referenceGroup)
          referenceRanks.push_back(static_cast<int32_t>(q));
      reorders.push_back({comm_, expected, actual, {}, std::move(referenceRanks)});
      known = reorders.end() - 1;
    }
    known->ranks.push_back(static_cast<int32_t>(r));
    std::vector<format::Record> reordered;
    std::vector<bool> used(length, false);
    for (size_t i = 0; i < length; ++i)
      for (size_t k = 0; k < length; ++k)
        if (!used[k] && sameSignature(expected[i], actual[k])) {
          used[k] = true;
          reordered.push_back(actual[k]);
          break;
        }
    for (size_t i = 0; i < length; ++i)
      members_[r].queue.at(i) = reordered[i];
    if (members_[r].reorderedLeft == 0)
      ++reorderedRanks_;
    members_[r].reorderedLeft = static_cast<uint32_t>(length);
    explanations[r].move = Move::None;
    groupOf[r] = referenceGroup;
  }
  for (const ReorderEvent &e : reorders)
    sink.reorder(e);

  for (size_t r = 0; r < count; ++r) {
    MemberStream &m = members_[r];
    records_[r] = nullptr;
    if (m.queue.empty()) {
      presence_[r] = absence(m, status);
    } else if (isHole(m.queue.front())) {
      presence_[r] = Presence::NoTrace;
    } else if (groupOf[r] == referenceGroup) {
      presence_[r] = m.reorderedLeft ? Presence::Reordered : Presence::Matched;
      records_[r] = &m.queue.front();
    } else if (explanations[r].move == Move::Skip) {
      presence_[r] = Presence::Skipped;
    } else {
      presence_[r] = Presence::Variant;
      records_[r] = &m.queue.front();
    }
  }
  // A tie: some other signature was issued by as many ranks as the reference's.
  std::vector<size_t> issuedBy(sizes.size(), 0);
  for (size_t r = 0; r < count; ++r)
    if (issued(presence_[r]))
      ++issuedBy[groupOf[r]];
  bool tied = false;
  for (size_t g = 0; g < issuedBy.size(); ++g)
    tied = tied || (g != referenceGroup && issuedBy[g] >= issuedBy[referenceGroup]);
  CollectiveEvent event{comm_,
                        reference.queue.front(),
                        static_cast<int32_t>(referenceRank),
                        records_,
                        presence_,
                        false,
                        tied};
  sink.collective(event);
  for (size_t r = 0; r < count; ++r) {
    MemberStream &m = members_[r];
    if (!m.queue.empty() && presence_[r] != Presence::Skipped)
      consume(r);
  }
  ++positions_;
}

void CommAligner::finish(EventSink &sink) {
  done_ = true;
  std::vector<uint64_t> calls(members_.size());
  std::vector<const format::Record *> last(members_.size(), nullptr);
  for (size_t r = 0; r < members_.size(); ++r) {
    calls[r] = members_[r].consumed;
    last[r] = lastMatched(r);
  }
  sink.communicatorEnd({comm_, calls, last, positions_});
}

const format::Record *CommAligner::lastMatched(size_t commRank) const {
  const MemberStream &m = members_[commRank];
  if (!m.consumed)
    return nullptr;
  return m.lastIsCopy || m.lastPoppedHole ? (m.hasLast ? &m.last : nullptr) : &m.queue.lastPopped();
}

bool CommAligner::atRest() const {
  if (reorderedRanks_)
    return false;
  for (const MemberStream &m : members_)
    if (!m.queue.empty())
      return false;
  return true;
}

} // namespace collcheck::analyzer
