// Cross-rank matching of one communicator. Each member's calls arrive in its own order; the
// aligner walks all members together, one position at a time. When the heads agree (the common
// case) the position is matched with one comparison per rank. When they do not, it looks a few
// calls ahead on each diverging rank and picks the cheapest explanation against the reference
// ranks (the largest agreeing group): a different signature at the same position, a call the rank
// skipped, calls only it issued, or a block issued in another order. It then resynchronizes and
// goes on, so one skipped call is one finding, not a cascade.
#pragma once

#include "analyzer/checks/rule.h"
#include "analyzer/match/record_queue.h"

#include <cstdint>
#include <span>
#include <vector>

namespace collcheck::analyzer {

struct MemberStream {
  RecordQueue queue;
  int file = -1;               // the trace file holding this comm rank, -1 while unknown
  bool noTrace = false;        // no trace holds this rank, or its trace is cut from here on
  bool released = false;       // the process released the communicator
  uint64_t nextSeq = 0;        // the sequence number expected next from the file
  uint64_t consumed = 0;       // calls matched so far (holes excluded)
  uint64_t *backlog = nullptr; // the file's count of queued records, decremented on consume
  bool hasLast = false;        // `last` holds the last matched call (kept only across a hole)
  bool lastPoppedHole = false;
  bool lastIsCopy = false; // `last`, not the ring, holds the last matched call
  format::Record last{};
  uint32_t reorderedLeft = 0; // positions still to show as reordered
};

// What the aligner needs to know about the files behind its streams.
class StreamStatus {
public:
  virtual ~StreamStatus() = default;
  virtual bool fileDone(int file) const = 0;
  virtual const ProcessState &process(int file) const = 0;
};

class EventSink {
public:
  virtual ~EventSink() = default;
  virtual void collective(const CollectiveEvent &) = 0;
  virtual void reorder(const ReorderEvent &) = 0;
  virtual void extra(const ExtraEvent &) = 0;
  virtual void communicatorEnd(const CommunicatorEnd &) = 0;
};

class CommAligner {
public:
  CommAligner(Communicator &comm, size_t lookahead) : comm_(comm), lookahead_(lookahead) {}
  // Sized once the communicator's size is known.
  void resize(size_t members);
  MemberStream &member(size_t commRank) { return members_[commRank]; }
  const MemberStream &member(size_t commRank) const { return members_[commRank]; }
  size_t memberCount() const { return members_.size(); }

  enum class Result { Progress, Wait, Done };
  static constexpr size_t kBlock = 256; // positions matched per fast-path step, at most
  // Matches as many positions as the buffered records allow.
  Result run(StreamStatus &status, EventSink &sink);
  // Whether positions can be matched straight from per-member runs of calls (no queued calls, no
  // reorder pending). matchInPlace then matches the first `length` positions of runs[r], whose
  // calls the caller found equal to member 0's (agreeingPrefix): their events are sent, and the
  // caller queues the rest.
  bool canMatchInPlace() const;
  void matchInPlace(std::span<const format::Record *const> runs, size_t length, EventSink &sink);
  // How many of run[0..length) have the signatures of reference[0..length) (member 0's calls).
  static size_t agreeingPrefix(const format::Record *reference, const format::Record *run,
                               size_t length);
  bool done() const { return done_; }
  uint64_t positions() const { return positions_; }
  // Every call buffered was matched and no reorder is still being shown: what an analysis in shares
  // needs at the end of a share to start the next one afresh.
  bool atRest() const;
  // The last call matched for a member, or null.
  const format::Record *lastMatched(size_t commRank) const;

private:
  enum class Move : uint8_t { None, Substitute, Skip, Extra, Reorder };
  struct Explanation {
    Move move = Move::None;
    size_t length = 0;
    int cost = 0;
  };

  bool ended(const MemberStream &m, const StreamStatus &status) const;
  bool complete(const MemberStream &m, const StreamStatus &status) const;
  Presence absence(const MemberStream &m, const StreamStatus &status) const;
  Explanation explain(const MemberStream &rank, const MemberStream &reference,
                      const StreamStatus &status) const;
  int score(const MemberStream &a, size_t fromA, const MemberStream &b, size_t fromB,
            const StreamStatus &status) const;
  void slowStep(StreamStatus &status, EventSink &sink);
  void finish(EventSink &sink);
  void consume(size_t commRank);

  Communicator &comm_;
  size_t lookahead_;
  std::vector<MemberStream> members_;
  std::vector<const format::Record *> records_;
  std::vector<Presence> presence_;
  std::vector<Presence> allMatched_;
  uint64_t positions_ = 0;
  uint32_t reorderedRanks_ = 0;
  bool done_ = false;
};

} // namespace collcheck::analyzer
