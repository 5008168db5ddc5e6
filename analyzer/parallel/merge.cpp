#include "analyzer/parallel/merge.h"

#include "analyzer/match/event_log.h"
#include "analyzer/match/record_queue.h"
#include "analyzer/match/wire.h"
#include "analyzer/parallel/share_plan.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace collcheck::analyzer::parallel {
namespace {

// The job as the merged shares tell it: what the rules see.
class MergedJob final : public JobView {
public:
  explicit MergedJob(const TraceSet &traces) : traces_(traces) {}
  const TraceSet &traces() const override { return traces_; }
  const ProcessState &process(int file) const override {
    return processes[static_cast<size_t>(file)];
  }
  const Communicator *communicator(uint64_t id) const override {
    auto it = comms.find(id);
    return it == comms.end() ? nullptr : &it->second.comm;
  }
  double wallTimeNs(int file, const format::Record &r) const override {
    const format::FileHeader &h = traces_.files[static_cast<size_t>(file)].reader->header();
    return static_cast<double>(h.createdRealtimeNs) + format::nanosSinceCreate(h, r.tscStart);
  }
  const std::vector<InputProblem> &streamProblems() const override { return problems; }

  struct Comm {
    Communicator comm;
    CommOrderKey key;
    uint64_t positions = 0, pointToPoint = 0;
    std::vector<uint64_t> calls;
    std::vector<format::Record> last;
    int releasedIn = INT32_MAX, lastActive = -1;
  };
  std::vector<ProcessState> processes;
  std::map<uint64_t, Comm> comms;
  std::vector<InputProblem> problems;

private:
  const TraceSet &traces_;
};

// Folds one share's view of a communicator into the job's; false when the two disagree.
bool fold(MergedJob::Comm &m, const RangeComm &rc, std::string &why) {
  Communicator &c = m.comm;
  m.key = std::min(m.key, rc.key);
  if (c.size < 0 && rc.comm.size >= 0) {
    c.size = rc.comm.size;
    c.origin = rc.comm.origin;
    c.parentId = rc.comm.parentId;
    c.color = rc.comm.color;
    c.nccl = rc.comm.nccl;
  } else if (rc.comm.size >= 0 && rc.comm.size != c.size) {
    why = "the shares disagree on the size of " + c.label;
    return false;
  }
  auto join = [&](auto &mine, const auto &theirs) {
    if (mine.size() < theirs.size())
      mine.resize(theirs.size(), -1);
    for (size_t r = 0; r < theirs.size(); ++r) {
      if (mine[r] < 0)
        mine[r] = theirs[r];
      else if (theirs[r] >= 0 && theirs[r] != mine[r])
        return false;
    }
    return true;
  };
  if (!join(c.worldRankOf, rc.comm.worldRankOf) || !join(c.fileOf, rc.comm.fileOf)) {
    why = "the shares disagree on the members of " + c.label;
    return false;
  }
  m.positions += rc.positions;
  m.pointToPoint += rc.pointToPoint;
  if (m.calls.size() < rc.consumed.size())
    m.calls.resize(rc.consumed.size(), 0);
  for (size_t r = 0; r < rc.consumed.size(); ++r)
    m.calls[r] += rc.consumed[r];
  format::Record none{};
  none.kind = kHoleKind;
  if (m.last.size() < rc.last.size())
    m.last.resize(rc.last.size(), none);
  for (size_t r = 0; r < rc.last.size(); ++r)
    if (!isHole(rc.last[r]))
      m.last[r] = rc.last[r];
  return true;
}

// Whether share k's fresh start of each communicator is where a single process would stand:
// every member at the sequence number the shares before it left all members at.
// On failure `badCut` is the cut that does not join: c between shares c and c+1.
bool checkCut(const RangeResult &share, size_t k, bool last,
              std::unordered_map<uint64_t, uint64_t> &inStep, std::string &why, size_t &badCut) {
  if (!last && share.waitsAtEnd) {
    why = "sends or receives wait across the end of share " + std::to_string(k);
    badCut = k;
    return false;
  }
  for (const RangeComm &rc : share.comms) {
    if (!rc.active)
      continue;
    if (k > 0) {
      uint64_t expected = inStep.count(rc.comm.id) ? inStep[rc.comm.id] : 0;
      for (size_t r = 0; r < rc.firstSeq.size(); ++r)
        if (rc.firstSeq[r] != UINT64_MAX && rc.firstSeq[r] != expected) {
          why = "rank " + std::to_string(r) + " of " + rc.comm.label + " starts share " +
                std::to_string(k) + " at call " + std::to_string(rc.firstSeq[r]) + ", not " +
                std::to_string(expected) + ": the ranks are out of step at the cut";
          badCut = k - 1;
          return false;
        }
    }
    if (last)
      continue;
    if (!rc.atRest) {
      why = "calls of " + rc.comm.label + " wait to be matched at the end of share " +
            std::to_string(k);
      badCut = k;
      return false;
    }
    std::optional<uint64_t> next;
    for (size_t r = 0; r < rc.nextSeq.size(); ++r) {
      if (r >= rc.comm.fileOf.size() || rc.comm.fileOf[r] < 0)
        continue; // no trace of this member: it is unknown in every share alike
      if (next && *next != rc.nextSeq[r]) {
        why = "the ranks of " + rc.comm.label + " are out of step at the end of share " +
              std::to_string(k);
        badCut = k;
        return false;
      }
      next = rc.nextSeq[r];
    }
    if (next)
      inStep[rc.comm.id] = *next;
  }
  return true;
}

// Sizes and indices of a share are checked before anything is sized or indexed by them: a share
// that disagrees with the files is declined, never read out of bounds.
bool plausible(const RangeResult &share, const TraceSet &traces) {
  const size_t files = traces.files.size();
  const auto members = static_cast<size_t>(
      std::max<int64_t>(std::max<int64_t>(traces.worldSize, 1), static_cast<int64_t>(files)));
  if (share.files.size() != files)
    return false;
  for (const RangeComm &c : share.comms) {
    if (c.comm.size < -1 || c.comm.size > static_cast<int64_t>(members))
      return false;
    for (size_t n : {c.comm.worldRankOf.size(), c.comm.fileOf.size(), c.consumed.size(),
                     c.firstSeq.size(), c.nextSeq.size(), c.last.size()})
      if (n > members)
        return false;
    for (int f : c.comm.fileOf)
      if (f < -1 || f >= static_cast<int>(files))
        return false;
  }
  return true;
}

// Whether the shares read every file from its first slot to its last, each from where the one
// before it ended.
bool tiled(const std::vector<RangeResult> &shares, const TraceSet &traces, std::string &why) {
  for (size_t f = 0; f < traces.files.size(); ++f) {
    uint64_t at = 0;
    for (size_t k = 0; k < shares.size(); ++k) {
      const RangeFile &rf = shares[k].files[f];
      if (rf.begin != at || rf.end < rf.begin) {
        why = "share " + std::to_string(k) + " read slots " + std::to_string(rf.begin) + "-" +
              std::to_string(rf.end) + " of " + traces.files[f].path + ", not from slot " +
              std::to_string(at) + ": the shares do not tile it";
        return false;
      }
      at = rf.end;
    }
    if (at != traces.files[f].reader->slotCount()) {
      why = "the shares read " + std::to_string(at) + " slots of " + traces.files[f].path +
            ", which has " + std::to_string(traces.files[f].reader->slotCount());
      return false;
    }
  }
  return true;
}

} // namespace

bool mergeShares(const TraceSet &traces, const AnalysisOptions &options,
                 const std::vector<RangeResult> &shares, AnalysisResult &out, std::string &why,
                 size_t *badCut) {
  if (badCut)
    *badCut = SIZE_MAX;
  MergedJob job(traces);
  std::unordered_map<uint64_t, uint64_t> inStep;
  std::vector<size_t> finalizedIn(traces.files.size(), SIZE_MAX);
  for (size_t k = 0; k < shares.size(); ++k) {
    if (!shares[k].unclean.empty()) {
      why = "share " + std::to_string(k) + ": " + shares[k].unclean;
      return false;
    }
    if (!plausible(shares[k], traces)) {
      why = "share " + std::to_string(k) + " does not fit the files";
      return false;
    }
  }
  if (!tiled(shares, traces, why))
    return false;
  for (size_t k = 0; k < shares.size(); ++k) {
    const RangeResult &share = shares[k];
    if (size_t cut = SIZE_MAX; !checkCut(share, k, share.last, inStep, why, cut)) {
      if (badCut)
        *badCut = cut;
      return false;
    }
    // A share's aligners take a member without calls for one whose process is still running: a
    // process that finalized in an earlier share must have no communicator active here.
    for (const RangeComm &rc : share.comms)
      for (int file : rc.comm.fileOf)
        if (rc.active && file >= 0 && finalizedIn[static_cast<size_t>(file)] < k) {
          why = traces.files[static_cast<size_t>(file)].path + " finalized in share " +
                std::to_string(finalizedIn[static_cast<size_t>(file)]) + ", before calls of " +
                rc.comm.label + " in share " + std::to_string(k);
          return false;
        }
    for (size_t f = 0; f < share.files.size(); ++f)
      if (share.files[f].finalized)
        finalizedIn[f] = std::min(finalizedIn[f], k);
    for (const RangeComm &rc : share.comms) {
      auto [it, inserted] = job.comms.try_emplace(rc.comm.id);
      MergedJob::Comm &m = it->second;
      if (inserted) {
        m.comm = rc.comm;
        m.comm.worldRankOf.clear();
        m.comm.fileOf.clear();
        m.comm.size = -1;
      }
      if (!fold(m, rc, why))
        return false;
      if (rc.released)
        m.releasedIn = std::min(m.releasedIn, static_cast<int>(k));
      if (rc.active)
        m.lastActive = static_cast<int>(k);
    }
  }
  std::vector<MergedJob::Comm *> order;
  for (auto &[id, m] : job.comms) {
    if (m.comm.size < 0) {
      why = "no share found the creation of " + m.comm.label;
      return false;
    }
    if (m.releasedIn < m.lastActive) {
      why = m.comm.label + " was released by a rank before the share of its last calls";
      return false;
    }
    order.push_back(&m);
  }
  std::stable_sort(
      order.begin(), order.end(),
      [](const MergedJob::Comm *a, const MergedJob::Comm *b) { return a->key < b->key; });
  std::unordered_map<uint64_t, uint32_t> rankOf;
  for (size_t i = 0; i < order.size(); ++i) {
    Communicator &c = order[i]->comm;
    c.index = static_cast<uint32_t>(i);
    c.label = commLabel(c, job.communicator(c.parentId)); // parents come first in this order
    rankOf[c.id] = static_cast<uint32_t>(i);
  }

  // The processes, as the last share that saw each thing tells.
  job.processes.resize(traces.files.size());
  std::vector<SlotCounters> slots(traces.files.size());
  for (size_t f = 0; f < traces.files.size(); ++f) {
    const format::Reader &reader = *traces.files[f].reader;
    ProcessState &p = job.processes[f];
    p.finished = traces.files[f].finished;
    p.cut = reader.summary().partialTail || reader.header().droppedRecords;
    const format::Record *lastRecord = nullptr;
    for (const RangeResult &share : shares) {
      const RangeFile &rf = share.files[f];
      SlotCounters &s = slots[f];
      s.published += rf.slots.published;
      s.unknownKind += rf.slots.unknownKind;
      s.torn += rf.slots.torn;
      s.corrupt += rf.slots.corrupt;
      s.holes += rf.slots.holes;
      s.firstProblem = std::min(s.firstProblem, rf.slots.firstProblem);
      p.finalized = p.finalized || rf.finalized;
      p.endSignal = rf.endSignal ? rf.endSignal : p.endSignal;
      if (rf.hasLastCall) {
        p.hasLastCall = true;
        p.lastCall = rf.lastCall;
        p.lastCallCommId = rf.lastCall.commId;
      }
      if (rf.hasLastRecord)
        lastRecord = &rf.lastRecord;
    }
    p.cut = p.cut || slots[f].torn || slots[f].corrupt;
    if (lastRecord)
      p.endTimeNs = format::nanosSinceCreate(reader.header(), lastRecord->tscStart) +
                    format::durationNanos(reader.header(), *lastRecord);
    std::string damage = describeDamage(slots[f]);
    if (!damage.empty())
      job.problems.push_back({traces.files[f].path, damage, false});
  }

  Judge judge(job, options.participation, options.reference);
  CommLookup lookup = [&](uint64_t id) { return job.communicator(id); };
  for (size_t k = 0; k < shares.size(); ++k)
    if (!replayEvents(shares[k].events, lookup, judge)) {
      why = "the events of share " + std::to_string(k) + " are damaged";
      return false;
    }
  std::vector<const format::Record *> last;
  for (MergedJob::Comm *m : order) {
    last.assign(m->calls.size(), nullptr);
    for (size_t r = 0; r < m->calls.size() && r < m->last.size(); ++r)
      if (!isHole(m->last[r]))
        last[r] = &m->last[r];
    judge.communicatorEnd({m->comm, m->calls, last, m->positions});
  }
  judge.jobEnd();

  out = AnalysisResult{};
  for (const RangeResult &share : shares)
    out.recordsRead += share.recordsRead;
  for (const SlotCounters &s : slots)
    out.recordsPerFile.push_back(s.published);
  for (MergedJob::Comm *m : order) {
    CommSummary summary;
    summary.comm = m->comm;
    summary.positions = m->positions;
    summary.pointToPoint = m->pointToPoint;
    summary.callsIssued = m->calls;
    out.positions += m->positions;
    out.communicators.push_back(std::move(summary));
  }
  out.problems = job.problems;
  out.findings = judge.takeFindings(rankOf);
  out.pictures = judge.takePictures(rankOf);
  out.uncheckable = judge.takeUncheckable();
  return true;
}

bool mergeJoining(const TraceSet &traces, const AnalysisOptions &options, uint64_t commId,
                  std::vector<RangeResult> shares, AnalysisResult &out, std::string &why,
                  int *joined) {
  if (joined)
    *joined = 0;
  while (true) {
    size_t bad = SIZE_MAX;
    if (mergeShares(traces, options, shares, out, why, &bad))
      return true;
    if (bad == SIZE_MAX || bad + 1 >= shares.size())
      return false;
    // The two shares beside the cut, read again as one: a divergence near the cut is then
    // matched with its lookahead, as a single process matches it. (mergeShares checked that the
    // shares tile the files, so their ranges can be trusted.)
    RangeSpec both;
    for (size_t f = 0; f < traces.files.size(); ++f) {
      both.begin.push_back(shares[bad].files[f].begin);
      both.end.push_back(shares[bad + 1].files[f].end);
    }
    both.first = bad == 0;
    both.last = shares[bad + 1].last;
    both.alongComm = commId;
    shares[bad] = analyzeRange(traces, options, both);
    shares.erase(shares.begin() + static_cast<std::ptrdiff_t>(bad) + 1);
    if (joined)
      ++*joined;
  }
}

int indexFromEnvironment(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 && value < INT32_MAX ? static_cast<int>(value) : -1;
}

bool analyzeInShares(const TraceSet &traces, const AnalysisOptions &options, int count,
                     AnalysisResult &out, std::string &why, Balance balance,
                     uint64_t handoverEvery) {
  std::optional<uint64_t> comm = cutCommunicator(traces);
  if (!comm) {
    why = "no communicator spans every file";
    return false;
  }
  // Handovers as a thread that finished early would ask for them: every `handoverEvery`-th
  // time a share asks, it gives about the second half of what it has left (cutAhead, a share's
  // start counted as one chunk); the parts are analyzed after the planned shares, and may be cut
  // again.
  struct Local final : RangeControl {
    const TraceSet &traces;
    uint64_t commId, every, startSlots, polls = 0;
    std::vector<RangeSpec> given;
    Local(const TraceSet &t, uint64_t c, uint64_t e, uint64_t s)
        : traces(t), commId(c), every(e), startSlots(s) {}
    bool asked() override { return every > 0 && ++polls % every == 0; }
    std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                  const RangeSpec &range) override {
      // An empty `from` (a file read to its end) gives nothing: cutAhead checks the sizes.
      std::optional<std::vector<uint64_t>> cut =
          cutAhead(traces, commId, from, range.end, startSlots);
      if (cut)
        given.push_back({*cut, range.end, false, range.last, range.alongComm});
      return cut;
    }
  } local(traces, *comm, handoverEvery, options.readChunk);
  std::vector<RangeResult> shares;
  for (int k = 0; k < count; ++k)
    shares.push_back(
        analyzeRange(traces, options, planShare(traces, *comm, k, count, balance), &local));
  for (size_t i = 0; i < local.given.size(); ++i) // grows while the halves are analyzed
    shares.push_back(analyzeRange(traces, options, RangeSpec(local.given[i]), &local));
  sortShares(shares);
  return mergeJoining(traces, options, *comm, std::move(shares), out, why, nullptr);
}

void sortShares(std::vector<RangeResult> &shares) {
  // Shares of another file count go first, where the merge declines them; the others by where
  // they start (and an empty one before the share that starts where it does).
  std::stable_sort(shares.begin(), shares.end(), [](const RangeResult &a, const RangeResult &b) {
    if (a.files.size() != b.files.size())
      return a.files.size() < b.files.size();
    for (size_t f = 0; f < a.files.size(); ++f) {
      if (a.files[f].begin != b.files[f].begin)
        return a.files[f].begin < b.files[f].begin;
      if (a.files[f].end != b.files[f].end)
        return a.files[f].end < b.files[f].end;
    }
    return false;
  });
}

} // namespace collcheck::analyzer::parallel
