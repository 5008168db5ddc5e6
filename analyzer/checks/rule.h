// The one interface of the analyzer's rules. The matcher turns the per-rank traces of each
// communicator into events (one per matched position, per reorder, per call issued by some ranks
// only, per point-to-point pair, per end of communicator); at the job's end the objective checks
// (analyzer/checks/objective) weigh the reductions of every window and hand each weighed
// reduction to the rules. A rule judges the events it cares for and writes findings. Rules never
// read files and never see the merge; reporters never see events.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/model/communicator.h"
#include "analyzer/model/finding.h"
#include "format/record.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace collcheck::analyzer {

namespace objective {
struct GradientCheck;
struct CountCheck;
struct ReferenceRun;
} // namespace objective

// What one member of a communicator did at one matched position.
enum class Presence : uint8_t {
  Matched,    // issued the reference call
  Variant,    // issued a call at this position with a different signature
  Reordered,  // issued it, in another order than the reference ranks (reported as a reorder)
  Skipped,    // did not issue it and went on to later calls on this communicator
  Exited,     // did not issue it: its process finalized, released the communicator or exited
  NotReached, // did not issue it: its process was stopped before (killed while stuck elsewhere)
  NoTrace,    // unknown: no trace of this rank here (file missing, cut, or a lost record)
};
std::string_view presenceName(Presence p);
// "died of SIGSEGV", "terminated by SIGTERM": how a process ended of a recorded signal.
std::string describeSignal(int signal);
// A signal that ends a process by its own fault, not one sent to stop it.
bool isCrashSignal(int signal);
inline bool issued(Presence p) {
  return p == Presence::Matched || p == Presence::Variant || p == Presence::Reordered;
}

// What the job's processes did, as far as the traces tell (final once a communicator ends).
struct ProcessState {
  bool finished = false;  // clean exit recorded in the header
  bool finalized = false; // an MPI_Finalize record was seen
  int endSignal = 0;      // the fatal signal the process died of, where the tracer recorded it
  bool cut = false;       // the trace lost records (torn, corrupt, dropped, truncated)
  bool hasLastCall = false;
  format::Record lastCall{}; // the last sequenced call of the process, on any communicator
  uint64_t lastCallCommId = 0;
  double endTimeNs = 0; // time of the last record, ns since the file was created
};

class JobView {
public:
  virtual ~JobView() = default;
  virtual const TraceSet &traces() const = 0;
  virtual const ProcessState &process(int file) const = 0;
  virtual const Communicator *communicator(uint64_t id) const = 0;
  // Wall-clock ns since the epoch of a record of `file`.
  virtual double wallTimeNs(int file, const format::Record &r) const = 0;
  // Problems found while reading the records (sequence gaps, unknown communicators, ...).
  virtual const std::vector<InputProblem> &streamProblems() const = 0;
};

// Whether some process died of a crash signal where it was not inside a call: the launcher then
// stops the others wherever they are, possibly still inside a call every member issued (on their
// way out of a barrier that just completed). Those are neither stuck nor a hang.
bool crashedOutsideCalls(const JobView &job);

// One position of a communicator: the reference call and what every member did.
struct CollectiveEvent {
  const Communicator &comm;
  const format::Record &reference; // the call of the largest agreeing group
  int32_t referenceRank;           // comm rank whose record is `reference`
  // Per comm rank, null when not issued. Empty for an allMatched position of a fixed-size kind
  // (every rank issued `reference`): filling it for every position costs a pointer per rank.
  std::span<const format::Record *const> records;
  std::span<const Presence> presence; // per comm rank
  bool allMatched;                    // every member issued the reference call (the common case)
  // No signature was issued by more ranks than another: `reference` is only the alignment's
  // anchor (the lowest rank's call), not the call the others got wrong.
  bool tied = false;
};

// Some ranks issued a block of calls in another order than the reference ranks.
struct ReorderEvent {
  const Communicator &comm;
  std::vector<format::Record> expected; // the reference ranks' order
  std::vector<format::Record> actual;   // these ranks' order
  std::vector<int32_t> ranks;           // comm ranks that issued `actual`
  std::vector<int32_t> referenceRanks;  // comm ranks that issued `expected`
  // As many ranks issued `actual` as `expected`: neither order is the reference.
  bool tied() const { return ranks.size() >= referenceRanks.size(); }
};

// A call issued by some ranks where the other members issued nothing.
struct ExtraEvent {
  const Communicator &comm;
  format::Record call;
  std::vector<int32_t> issuedBy;    // comm ranks
  std::vector<int32_t> notIssuedBy; // comm ranks, with a trace going on past this point
};

// A send and the receive it was matched with (in order, per ordered pair of ranks), or one of them
// alone when the other side has none.
struct PointToPointEvent {
  const Communicator &comm;
  const format::Record *send; // null: a receive without a send
  const format::Record *recv; // null: a send without a receive
  int32_t sender, receiver;   // comm ranks
  bool endOfTrace;            // unmatched at the end of the traces
  Presence otherSide;         // for an unmatched call: what the peer's trace says
};

// A record outside any communicator's sequence (window, valid count, normalization, ...), in the
// order its process wrote it: the input of the per-window objective rules.
struct MetaEvent {
  int file;
  const format::Record &record;
};

struct CommunicatorEnd {
  const Communicator &comm;
  std::span<const uint64_t> callsIssued;           // per comm rank: sequenced calls seen on comm
  std::span<const format::Record *const> lastCall; // per comm rank: the last one, or null
  uint64_t positions;                              // positions matched
};

class RuleContext {
public:
  RuleContext(FindingCollector &findings, const JobView &job) : findings(findings), job(job) {}
  FindingCollector &findings;
  const JobView &job;
  // Why the job could not be judged as asked (a --reference run with nothing to compare): the
  // analysis then ends with exit status 2, never "no findings".
  std::vector<std::string> uncheckable;
  // A finding of `ruleId` at the reference call's position, severity from the catalogue.
  Finding make(std::string_view ruleId, const Communicator &comm, const format::Record &at) const;
  Finding make(std::string_view ruleId) const;
  // World ranks of comm ranks.
  std::vector<int32_t> worldRanks(const Communicator &comm,
                                  const std::vector<int32_t> &commRanks) const;
};

class TraceRule {
public:
  virtual ~TraceRule() = default;
  virtual std::string_view id() const = 0;
  virtual void onCollective(const CollectiveEvent &, RuleContext &) {}
  virtual void onReorder(const ReorderEvent &, RuleContext &) {}
  virtual void onExtra(const ExtraEvent &, RuleContext &) {}
  virtual void onPointToPoint(const PointToPointEvent &, RuleContext &) {}
  virtual void onMeta(const MetaEvent &, RuleContext &) {}
  virtual void onCommunicatorEnd(const CommunicatorEnd &, RuleContext &) {}
  virtual void onJobEnd(RuleContext &) {}
  // After every rule's onJobEnd, for each window: its gradient reductions and its count
  // reductions, weighed (analyzer/checks/objective/weighing.h).
  virtual void onGradientReduction(const objective::GradientCheck &, RuleContext &) {}
  virtual void onCountReduction(const objective::CountCheck &, RuleContext &) {}
};

// Every rule of the analyzer, one instance each (rules keep per-job state); reference-mismatch
// where a reference run is given.
std::vector<std::unique_ptr<TraceRule>>
makeTraceRules(const objective::ReferenceRun *reference = nullptr);

} // namespace collcheck::analyzer
