#include "split_analysis.h"

#include "../match/event_log.h"
#include "../match/record_queue.h"
#include "../match/wire.h"
#include "share_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <thread>
#include <unordered_map>

namespace collcheck::analyzer::distributed {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename Sink> void putComm(Sink &w, const Communicator &c) {
  w.put(c.id);
  w.put(c.size);
  w.put(c.origin);
  w.put(c.parentId);
  w.put(c.color);
  w.put(static_cast<uint8_t>(c.nccl));
  w.putVector(c.worldRankOf);
  w.putVector(c.fileOf);
  w.putString(c.label);
}

bool getComm(wire::Reader &r, Communicator &c) {
  uint8_t nccl = 0;
  bool ok = r.get(c.id) && r.get(c.size) && r.get(c.origin) && r.get(c.parentId) &&
            r.get(c.color) && r.get(nccl) && r.getVector(c.worldRankOf) && r.getVector(c.fileOf) &&
            r.getString(c.label);
  c.nccl = nccl != 0;
  return ok;
}

// The job as the merged shares tell it: what the rules see on rank 0.
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

// A share's message comes from a process of this analysis, yet it is input like any other: sizes
// and indices are checked before anything is sized or indexed by them.
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

// Whether the shares read every file from its first slot to its last as rank 0 sees it, each
// from where the one before it ended. Every process cuts the files it opened itself (no cut is
// sent); one that saw other files (a file still growing, another folder) is found here.
bool tiled(const std::vector<RangeResult> &shares, const TraceSet &traces, std::string &why) {
  for (size_t f = 0; f < traces.files.size(); ++f) {
    uint64_t at = 0;
    for (size_t k = 0; k < shares.size(); ++k) {
      const RangeFile &rf = shares[k].files[f];
      if (rf.begin != at || rf.end < rf.begin) {
        why = "share " + std::to_string(k) + " read slots " + std::to_string(rf.begin) + "-" +
              std::to_string(rf.end) + " of " + traces.files[f].path + ", not from slot " +
              std::to_string(at) + ": the processes cut other files";
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

// One encoder for the message and its size (wire::Writer, wire::Counter): all of a share but its
// log's bytes, which putShare writes after it (and encodeShares sends from where they lie).
template <typename Sink> void putShareHead(Sink &w, const RangeResult &share) {
  w.putString(share.unclean);
  w.put(share.recordsRead);
  w.put(static_cast<uint8_t>(share.last));
  w.put(static_cast<uint8_t>(share.waitsAtEnd));
  w.put(static_cast<uint64_t>(share.files.size()));
  for (const RangeFile &f : share.files) {
    w.put(f.begin);
    w.put(f.end);
    w.put(f.slots);
    w.put(static_cast<uint8_t>(f.finalized));
    w.put(static_cast<uint8_t>(f.hasLastCall));
    w.put(static_cast<uint8_t>(f.hasLastRecord));
    w.put(f.lastCall);
    w.put(f.lastRecord);
  }
  w.put(static_cast<uint64_t>(share.comms.size()));
  for (const RangeComm &c : share.comms) {
    putComm(w, c.comm);
    w.put(c.key);
    w.put(c.positions);
    w.put(c.pointToPoint);
    w.put(static_cast<uint8_t>(c.active));
    w.put(static_cast<uint8_t>(c.atRest));
    w.put(static_cast<uint8_t>(c.released));
    w.putVector(c.consumed);
    w.putVector(c.firstSeq);
    w.putVector(c.nextSeq);
    w.putVector(c.last);
  }
  w.template put<uint64_t>(share.events.size()); // the log as a string: its length, then its bytes
}

template <typename Sink> void putShare(Sink &w, const RangeResult &share) {
  putShareHead(w, share);
  w.putBytes(share.events);
}

} // namespace

size_t encodedSize(const RangeResult &share) {
  wire::Counter counter;
  putShare(counter, share);
  return counter.size();
}

std::string encodeShare(const RangeResult &share) {
  wire::Writer w;
  w.reserve(encodedSize(share));
  putShare(w, share);
  return w.take();
}

bool decodeShare(std::string_view bytes, RangeResult &share,
                 std::shared_ptr<const std::string> message) {
  wire::Reader r(bytes);
  uint64_t files = 0, comms = 0;
  uint8_t last = 0, waits = 0;
  if (!r.getString(share.unclean) || !r.get(share.recordsRead) || !r.get(last) || !r.get(waits) ||
      !r.get(files) || files > bytes.size())
    return false;
  share.last = last != 0;
  share.waitsAtEnd = waits != 0;
  share.files.resize(files);
  for (RangeFile &f : share.files) {
    uint8_t finalized = 0, hasLastCall = 0, hasLastRecord = 0;
    if (!r.get(f.begin) || !r.get(f.end) || !r.get(f.slots) || !r.get(finalized) ||
        !r.get(hasLastCall) || !r.get(hasLastRecord) || !r.get(f.lastCall) || !r.get(f.lastRecord))
      return false;
    f.finalized = finalized;
    f.hasLastCall = hasLastCall;
    f.hasLastRecord = hasLastRecord;
  }
  if (!r.get(comms) || comms > bytes.size())
    return false;
  share.comms.resize(comms);
  for (RangeComm &c : share.comms) {
    uint8_t active = 0, atRest = 0, released = 0;
    if (!getComm(r, c.comm) || !r.get(c.key) || !r.get(c.positions) || !r.get(c.pointToPoint) ||
        !r.get(active) || !r.get(atRest) || !r.get(released) || !r.getVector(c.consumed) ||
        !r.getVector(c.firstSeq) || !r.getVector(c.nextSeq) || !r.getVector(c.last))
      return false;
    c.active = active;
    c.atRest = atRest;
    c.released = released;
  }
  std::string_view events;
  if (!r.getView(events) || !r.done())
    return false;
  share.events =
      message ? wire::Bytes(std::move(message), events) : wire::Bytes(std::string(events));
  return true;
}

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
      why = "the message of share " + std::to_string(k) + " is damaged, or it read other files";
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

  Judge judge(job, options.participation);
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
  std::optional<uint64_t> comm = cutCommunicator(traces, options.copyChunks);
  if (!comm) {
    why = "no communicator spans every file";
    return false;
  }
  // Handovers as a process that finished early would ask for them: every `handoverEvery`-th
  // time a share asks, it gives about the second half of what it has left (cutAhead, a share's
  // start counted as one chunk); the parts are analyzed after the planned shares, and may be cut
  // again.
  struct Local final : RangeControl {
    const TraceSet &traces;
    uint64_t commId, every, startSlots, polls = 0;
    bool copied;
    std::vector<RangeSpec> given;
    Local(const TraceSet &t, uint64_t c, uint64_t e, uint64_t s, bool copy)
        : traces(t), commId(c), every(e), startSlots(s), copied(copy) {}
    bool asked() override { return every > 0 && ++polls % every == 0; }
    std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                  const RangeSpec &range, double) override {
      // An empty `from` (a file read to its end) gives nothing: cutAhead checks the sizes.
      std::optional<std::vector<uint64_t>> cut =
          cutAhead(traces, commId, from, range.end, startSlots, 0, {}, copied);
      if (cut)
        given.push_back({*cut, range.end, false, range.last, range.alongComm});
      return cut;
    }
  } local(traces, *comm, handoverEvery, options.readChunk, options.copyChunks);
  std::vector<RangeResult> shares;
  auto analyzeOne = [&](const RangeSpec &spec) {
    RangeResult share = analyzeRange(traces, options, spec, &local);
    RangeResult decoded; // through the wire format, as under MPI
    auto message = std::make_shared<const std::string>(encodeShare(share));
    if (!decodeShare(*message, decoded, message))
      return false;
    shares.push_back(std::move(decoded));
    return true;
  };
  for (int k = 0; k < count; ++k)
    if (!analyzeOne(planShare(traces, *comm, k, count, balance, options.copyChunks))) {
      why = "a share does not decode";
      return false;
    }
  for (size_t i = 0; i < local.given.size(); ++i) // grows while the halves are analyzed
    if (!analyzeOne(RangeSpec(local.given[i]))) {
      why = "a share does not decode";
      return false;
    }
  sortShares(shares);
  return mergeJoining(traces, options, *comm, std::move(shares), out, why, nullptr);
}

namespace {

// The tags of a split's point-to-point messages (the gather uses its own).
constexpr int kAskTag = 0xcd;  // a process that finished asks another for work (no bytes)
constexpr int kGiveTag = 0xce; // the answer: a range (encodeRange), or no bytes for none

std::string encodeRange(const RangeSpec &range) {
  wire::Writer w;
  w.putVector(range.begin);
  w.putVector(range.end);
  w.put<uint8_t>(range.last);
  w.put(range.alongComm);
  return w.take();
}

// A range handed over is input like a share's message: it must fit the files as seen here.
bool decodeRange(const std::string &bytes, const TraceSet &traces, RangeSpec &range) {
  wire::Reader r(bytes);
  uint8_t last = 0;
  if (!r.getVector(range.begin) || !r.getVector(range.end) || !r.get(last) ||
      !r.get(range.alongComm) || !r.done() || range.begin.size() != traces.files.size() ||
      range.end.size() != traces.files.size())
    return false;
  for (size_t f = 0; f < traces.files.size(); ++f)
    if (range.begin[f] > range.end[f] || range.end[f] > traces.files[f].reader->slotCount())
      return false;
  range.first = false;
  range.last = last != 0;
  return true;
}

// Whom a process that finished asks for work, in order: its neighbours first, a few of them
// (each answer costs the asked process a look between two rounds of its reading).
std::vector<int> victimsOf(int rank, int size) {
  constexpr int kAsked = 4;
  std::vector<int> out;
  for (int d = 1; static_cast<int>(out.size()) < std::min(kAsked, size - 1) && d < size; ++d)
    for (int v : {(rank + d) % size, (rank - d + size) % size})
      if (v != rank && static_cast<int>(out.size()) < std::min(kAsked, size - 1) &&
          std::find(out.begin(), out.end(), v) == out.end())
        out.push_back(v);
  return out;
}

// A process's side of the handovers: while its share runs, it answers the processes that
// finished theirs, handing over part of what it has left, so that both end together
// (RangeControl); once it has no range running, it answers every ask with none.
class Handover final : public RangeControl {
public:
  // `victims`: whom this process asks for work, in order (victimsOf).
  // `startSlots`: what starting a share costs, in slots of the first file (cutAhead).
  // `copied`: the shares copy their records (cutAhead reads the cuts' records so too).
  // `slow`: this process is the one COLLCHECK_SPLIT_SLOW_RANK names, for the tests: at its first
  // look for askers it waits until one asks (up to 10 s; so another process surely finishes
  // first, whenever MPI starts), then it pauses 1 ms at every look.
  Handover(Transport &transport, const TraceSet &traces, uint64_t commId, uint64_t startSlots,
           bool copied, std::vector<int> victims, bool slow)
      : transport_(transport), traces_(traces), commId_(commId), startSlots_(startSlots),
        copied_(copied), slow_(slow), victims_(std::move(victims)),
        next_(victims_.empty() ? -1 : victims_.front()) {}

  const std::vector<int> &victims() const { return victims_; }

  bool asked() override {
    if (slow_)
      slowDown();
    // A look costs a round trip to the MPI thread: a few per 10 ms are plenty. Before MPI has
    // started nobody can ask, and waiting for it here would undo hiding its start.
    auto now = Clock::now();
    if (asker_ < 0 && now >= nextLook_ && transport_.started()) {
      nextLook_ = now + std::chrono::milliseconds(5);
      if (auto message = transport_.poll(kAskTag))
        takeAsk(*message);
    }
    return asker_ >= 0;
  }

  std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                const RangeSpec &range,
                                                double slotsPerSecond) override {
    const int asker = std::exchange(asker_, -1);
    // A share that is about to end itself keeps its last chunks: two processes near their ends
    // would otherwise trade them, each paying a share's start for little. (An empty `from` gives
    // nothing: cutAhead checks the sizes.)
    std::optional<std::vector<uint64_t>> cut =
        askedAhead_ >= 0 ? std::nullopt
                         : cutAhead(traces_, commId_, from, range.end, startSlots_, askerLeft_,
                                    {slotsPerSecond, askerPace_}, copied_);
    transport_.send(asker, kGiveTag,
                    cut ? encodeRange({*cut, range.end, false, range.last, range.alongComm})
                        : std::string());
    given_ += cut.has_value();
    return cut;
  }

  // Answers every ask that waits with none (this process has no range running).
  void refuse() {
    if (asker_ >= 0)
      transport_.send(std::exchange(asker_, -1), kGiveTag, std::string());
    while (auto message = transport_.poll(kAskTag))
      transport_.send(message->first, kGiveTag, std::string());
  }

  // The share running here is about to end: ask the first process it will ask for work now,
  // while it still reads (the one asked answers between two of its rounds, which at thousands of
  // files take tens of milliseconds). The ask says how much this share still reads, so that the
  // one asked keeps that much more than it gives: both then end together, instead of the asker's
  // last chunks coming on top of its half. (The asker reads on until the answer comes, but then
  // starts a share, which costs about as much.) It says how fast this process reads, too: the
  // two processes of one node are not always equally fast.
  void nearEnd(uint64_t left, double slotsPerSecond) override {
    if (slotsPerSecond > 0) // a share that starts near its end has read nothing yet
      pace_ = slotsPerSecond;
    if (askedAhead_ < 0 && next_ >= 0 && transport_.started()) {
      askedAhead_ = next_;
      transport_.send(askedAhead_, kAskTag, encodeAsk(left, pace_));
    }
  }

  // Asks `victim` for work (unless it was asked ahead) and waits for the answer, refusing the
  // others meanwhile; false when it has none to give. A range that does not fit the files, or an
  // answer from another process, makes `damaged` true.
  bool ask(int victim, RangeSpec &range, bool &damaged) {
    // Asks are answered in turn: the one asked ahead is always the one asked next (a share runs
    // only between two answers of the same process), so at most one answer is awaited.
    next_ = victim;
    if (std::exchange(askedAhead_, -1) != victim)
      transport_.send(victim, kAskTag, encodeAsk(0, pace_));
    while (true) {
      if (auto answer = transport_.poll(kGiveTag)) {
        // From another process, an answer nobody awaits: its range would be read by no one, so
        // the shares cannot tile the files (rank 0 then analyzes alone). The victim's answer is
        // still awaited: a message left unreceived would hold its sender at MPI_Finalize.
        if (answer->first != victim) {
          damaged = true;
          continue;
        }
        if (damaged || answer->second.empty())
          return false;
        damaged = !decodeRange(answer->second, traces_, range);
        return !damaged;
      }
      refuse();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Waits until every process has stopped asking, answering the asks meanwhile.
  void finish() {
    transport_.enterBarrier();
    while (!transport_.barrierDone()) {
      refuse();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    refuse(); // every ask was answered before its asker entered the barrier
  }

  int given() const { return given_; }

private:
  static std::string encodeAsk(uint64_t left, double slotsPerSecond) {
    wire::Writer w;
    w.put<uint64_t>(left);
    w.put<double>(slotsPerSecond);
    return w.take();
  }
  // An ask that does not decode counts as one from a process with nothing left, of unknown pace.
  void takeAsk(const std::pair<int, std::string> &message) {
    asker_ = message.first;
    wire::Reader r(message.second);
    if (!r.get(askerLeft_) || !r.get(askerPace_) || !r.done() || !(askerPace_ >= 0)) {
      askerLeft_ = 0;
      askerPace_ = 0;
    }
  }

  void slowDown() {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (std::exchange(waitedForAsker_, true))
      return;
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (asker_ < 0 && Clock::now() < until) {
      if (transport_.started())
        if (auto message = transport_.poll(kAskTag))
          takeAsk(*message);
      if (asker_ < 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  Transport &transport_;
  const TraceSet &traces_;
  uint64_t commId_, startSlots_;
  bool copied_, slow_, waitedForAsker_ = false;
  std::vector<int> victims_;
  int asker_ = -1, given_ = 0;
  uint64_t askerLeft_ = 0; // slots of its first file the asker still reads itself
  double askerPace_ = 0;   // how fast it reads them, in slots per second (0: not known)
  double pace_ = 0;        // how fast this process's last share read (RangeControl::nearEnd)
  int askedAhead_ = -1;    // the process asked before this one's share ended
  int next_;               // the process this one asks next (-1: none)
  Clock::time_point nextLook_{};
};

// What encodeShares writes for `shares`; `sizes`, when given, gets each share's own.
size_t encodedSharesSize(const std::vector<RangeResult> &shares,
                         std::vector<size_t> *sizes = nullptr) {
  size_t total = sizeof(uint64_t);
  for (const RangeResult &share : shares) {
    const size_t one = encodedSize(share);
    total += sizeof(uint64_t) + one;
    if (sizes)
      sizes->push_back(one);
  }
  return total;
}

// A process's shares as one message: their count, then each share as a string (encodeShare). In
// parts, for the transport to send one after the other: the heads are written here and each log
// is sent from where it lies, so that the message is copied only where it lands (a log of a job
// of many communicators is hundreds of megabytes, and a copy of it costs new memory's first touch).
struct SharesMessage {
  std::vector<std::string> heads;
  std::vector<std::string_view> parts; // into heads and the shares' logs
};
SharesMessage encodeShares(const std::vector<RangeResult> &shares) {
  std::vector<size_t> sizes;
  encodedSharesSize(shares, &sizes);
  SharesMessage message;
  wire::Writer count;
  count.put<uint64_t>(shares.size());
  message.heads.push_back(count.take());
  for (size_t i = 0; i < shares.size(); ++i) {
    wire::Writer head;
    head.put<uint64_t>(sizes[i]); // the string's length, as putString writes it
    putShareHead(head, shares[i]);
    message.heads.push_back(head.take());
  }
  // The views once every head has its place (a short string's bytes move with it).
  message.parts.push_back(message.heads[0]);
  for (size_t i = 0; i < shares.size(); ++i) {
    message.parts.push_back(message.heads[i + 1]);
    message.parts.push_back(shares[i].events);
  }
  return message;
}

// The shares' logs stay in `message` (wire::Bytes), read where they arrived.
bool decodeShares(const std::shared_ptr<const std::string> &message,
                  std::vector<RangeResult> &shares) {
  wire::Reader r(*message);
  uint64_t count = 0;
  if (!r.get(count) || count > message->size())
    return false;
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view one;
    RangeResult share;
    if (!r.getView(one) || !decodeShare(one, share, message))
      return false;
    shares.push_back(std::move(share));
  }
  return r.done();
}

} // namespace

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

SplitSettings splitSettingsFromEnvironment() {
  SplitSettings settings;
  settings.balance = balanceFromEnvironment();
  settings.slowRank = indexFromEnvironment("COLLCHECK_SPLIT_SLOW_RANK");
  return settings;
}

void analyzeSplit(const TraceSet &traces, const AnalysisOptions &options, Transport &transport,
                  const SplitSettings &settings, AnalysisResult &out, SplitStats &stats) {
  const int rank = transport.rank(), size = transport.size();
  stats.processes = size;
  auto t0 = Clock::now();
  // No collective comes before the shares: MPI starts on its own thread (transport.cpp) while the
  // shares are read. So every process decides from its own files alone, and rank 0 checks in the
  // merge that the shares tile the files as it sees them.
  const bool readable = !traces.fatal && !traces.files.empty();
  const std::optional<uint64_t> comm =
      readable ? cutCommunicator(traces, options.copyChunks) : std::nullopt;
  const uint64_t commId = comm.value_or(0);
  // Starting a share costs about a round of reading, one chunk per file (the asker reads the
  // pages at its cuts, which the giver has read too, and learns the communicators again). cutAhead
  // counts it: nothing is handed over that would gain less than half a chunk.
  Handover handover(transport, traces, commId, options.readChunk, options.copyChunks,
                    victimsOf(rank, size), settings.slowRank == rank);
  if (rank == 0 && readable && (!comm || size < 2)) {
    stats.fellBack = comm ? "one process" : "no communicator spans every file";
    out = analyze(traces, options);
    stats.shareSeconds = stats.ownSeconds = since(t0);
    if (size > 1)
      handover.finish();
    transport.gather({}); // the others' shares are not needed
    return;
  }
  std::vector<RangeResult> shares(1);
  if (!readable) {
    shares[0].unclean = "process " + std::to_string(rank) + " cannot analyze the traces as one run";
  } else if (!comm) {
    shares[0].unclean =
        "process " + std::to_string(rank) + " found no communicator spanning every file";
  } else {
    shares[0] = analyzeRange(
        traces, options,
        planShare(traces, commId, rank, size, settings.balance, options.copyChunks), &handover);
    stats.ownSeconds = since(t0);
    // Done first: take the rest of a slower process's share, as often as one has some left.
    for (int victim : handover.victims()) {
      RangeSpec range;
      bool damaged = false;
      while (handover.ask(victim, range, damaged)) {
        auto taken = Clock::now();
        shares.push_back(analyzeRange(traces, options, range, &handover));
        stats.takenSeconds += since(taken);
        ++stats.taken;
      }
      if (damaged) {
        RangeResult lost;
        lost.unclean = "process " + std::to_string(rank) + " was handed a range that does not " +
                       "fit its files, or that it did not ask for";
        shares.push_back(std::move(lost));
        break;
      }
    }
  }
  handover.finish();
  stats.waitSeconds = since(t0) - stats.ownSeconds - stats.takenSeconds;
  stats.given = handover.given();
  // Rank 0 merges its own shares as they are: only the others' travel, encoded.
  SharesMessage encoded;
  if (rank != 0)
    encoded = encodeShares(shares);
  stats.shareSeconds = since(t0);
  auto gathering = Clock::now();
  std::vector<std::string> all = transport.gather(encoded.parts);
  stats.gatherSeconds = since(gathering);
  if (rank != 0)
    shares.clear(); // sent: the message's parts were their logs
  stats.transportCpuSeconds = transport.transportCpuSeconds();
  if (rank != 0 || !readable)
    return; // rank 0 has said why it cannot analyze the traces
  auto t1 = Clock::now();
  std::string why;
  bool ok = true;
  stats.bytesGathered = encodedSharesSize(shares); // rank 0's own, counted as if sent
  for (size_t k = 1; k < all.size() && ok; ++k) {
    stats.bytesGathered += all[k].size();
    ok = decodeShares(std::make_shared<const std::string>(std::move(all[k])), shares);
    if (!ok)
      why = "the message of process " + std::to_string(k) + " does not decode";
  }
  if (ok) {
    stats.ranges = static_cast<int>(shares.size());
    sortShares(shares);
    ok = mergeJoining(traces, options, commId, std::move(shares), out, why, &stats.joined);
  }
  if (!ok) {
    stats.fellBack = why;
    out = analyze(traces, options);
  }
  stats.mergeSeconds = since(t1);
}

} // namespace collcheck::analyzer::distributed
