#include "analyzer/match/analysis.h"

#include "analyzer/load/trace_set.h"
#include "analyzer/match/aligner.h"
#include "analyzer/match/chunk_reader.h"
#include "analyzer/match/event_log.h"
#include "analyzer/match/participation_recorder.h"
#include "analyzer/match/point_to_point.h"
#include "analyzer/model/signature.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <unordered_map>

namespace collcheck::analyzer {

std::string hexCommId(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

std::string shortCommId(uint64_t id) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08" PRIx64, id >> 32);
  return buf;
}

std::string commLabel(const Communicator &comm, const Communicator *parent) {
  using format::CommOrigin;
  std::string parentLabel;
  if (parent)
    parentLabel = parent->label;
  else if (comm.parentId)
    parentLabel = "comm " + shortCommId(comm.parentId);
  std::string tag = " [" + shortCommId(comm.id) + "]";
  std::string color = comm.color >= 0 ? "(color=" + std::to_string(comm.color) + ")" : "";
  switch (comm.origin) {
  case CommOrigin::World:
    return "world";
  case CommOrigin::Self:
    return "self" + tag;
  case CommOrigin::NcclInitRank:
  case CommOrigin::NcclInitAll:
    return "nccl" + tag;
  default:
    break;
  }
  std::string origin(format::commOriginName(comm.origin));
  return origin + color + (parentLabel.empty() ? "" : " of " + parentLabel) + tag;
}

std::string describeDamage(const SlotCounters &c) {
  std::string out;
  auto add = [&](const std::string &text) { out += (out.empty() ? "" : "; ") + text; };
  if (c.torn)
    add(std::to_string(c.torn) + " torn record(s) (written, never published)");
  if (c.corrupt)
    add(std::to_string(c.corrupt) + " corrupt record(s) (their check does not match)");
  if (c.torn || c.corrupt)
    out += ", the first at slot " + std::to_string(c.firstProblem);
  if (c.holes)
    add(std::to_string(c.holes) + " record slot(s) reserved but never written");
  if (c.unknownKind)
    add(std::to_string(c.unknownKind) + " record(s) of a kind this version does not know");
  return out;
}

namespace {

constexpr uint64_t kMaxHoles = 4096; // a longer gap cuts the stream instead of padding it

class Analysis final : public JobView, public StreamStatus, public EventSink {
public:
  Analysis(const TraceSet &traces, const AnalysisOptions &options, const RangeSpec *range,
           RangeControl *control = nullptr)
      : traces_(traces), options_(options), ownRange_(range ? *range : RangeSpec{}),
        range_(range ? &ownRange_ : nullptr), control_(control) {
    if (range_) {
      events_ = &log_;
    } else {
      judge_.emplace(*this, options.participation, options.reference);
      events_ = &*judge_;
    }
    files_.resize(traces.files.size());
    processes_.resize(traces.files.size());
    for (size_t f = 0; f < traces.files.size(); ++f) {
      const format::Reader &reader = *traces.files[f].reader;
      FileState &fs = files_[f];
      fs.next = beginOf(static_cast<int>(f));
      fs.done = fs.next >= endOf(static_cast<int>(f));
      ProcessState &p = processes_[f];
      p.finished = traces.files[f].finished;
      // Torn and corrupt slots are found while reading; the file is cut once its end is reached.
      p.cut = reader.summary().partialTail || reader.header().droppedRecords;
    }
    backlogLimit_ = options.backlogLimit;
    // A share's cuts follow one communicator: knowing it and all its members before the first
    // chunk lets the first positions be matched in place, as everywhere else. One file's creation
    // (the world's) or member list usually names them all; the other files' first pages are read
    // only for members still unknown (those of the rest are learnt when their calls come).
    if (range_ && !range_->first && range_->alongComm)
      for (size_t f = 0, known = 0;
           f < traces.files.size() && !membersKnown(range_->alongComm, known); ++f)
        learnFromPrefix(static_cast<int>(f), range_->alongComm);
    std::vector<const format::Reader *> readers;
    for (const TraceFile &file : traces.files)
      readers.push_back(file.reader.get());
    if (!readers.empty())
      reader_ = std::make_unique<ChunkReader>(std::move(readers), options.readChunk);
  }

  AnalysisResult run();
  RangeResult runRange();
  void matchAll();
  void checkMembersKnown();

  // JobView
  const TraceSet &traces() const override { return traces_; }
  const ProcessState &process(int file) const override {
    return processes_[static_cast<size_t>(file)];
  }
  const Communicator *communicator(uint64_t id) const override {
    auto it = byId_.find(id);
    return it == byId_.end() ? nullptr : &it->second->comm;
  }
  double wallTimeNs(int file, const format::Record &r) const override {
    const format::FileHeader &h = traces_.files[static_cast<size_t>(file)].reader->header();
    return static_cast<double>(h.createdRealtimeNs) + format::nanosSinceCreate(h, r.tscStart);
  }

  // StreamStatus
  // A share's end is not its files' end: the aligners wait there instead of concluding.
  bool fileDone(int file) const override {
    return files_[static_cast<size_t>(file)].done && (!range_ || range_->last);
  }
  void attach(MemberStream &m, int file) {
    m.file = file;
    m.backlog = &files_[static_cast<size_t>(file)].backlog;
  }

  // EventSink: the aligners' events go to the judge, or to the share's log.
  void collective(const CollectiveEvent &e) override { events_->collective(e); }
  void reorder(const ReorderEvent &e) override { events_->reorder(e); }
  void extra(const ExtraEvent &e) override { events_->extra(e); }
  void communicatorEnd(const CommunicatorEnd &e) override {
    // A share's end of a communicator is the merge's to make, with every share's counts.
    if (!range_)
      events_->communicatorEnd(e);
  }

private:
  struct CommState {
    Communicator comm;
    CommAligner aligner;
    PointToPointMatcher pointToPoint;
    bool inPartition = true;
    CommOrderKey key;
    // A share: whether calls of this share reached it, whether a member released it, and
    // per comm rank the first sequence number routed here.
    bool active = false, released = false;
    std::vector<uint64_t> firstSeq;
    explicit CommState(size_t lookahead) : aligner(comm, lookahead) {}
  };
  struct FileState {
    uint64_t next = 0; // next slot to read
    // What the slots read so far are (the merge is the only pass that looks at them).
    SlotCounters slots;
    uint64_t emptyRun = 0;   // empty slots since the last non-empty one: holes, or the file's tail
    uint64_t prefixNext = 0; // a share: the prefix before it is read up to here
    uint64_t backlog = 0;    // records queued and not yet matched
    bool done = false;
    uint64_t cachedCommId = 0;
    CommState *cachedComm = nullptr;
    // The stream the last collective went to: the next record of a file is almost always the next
    // call of the same stream, and then routing is one comparison and a push.
    MemberStream *cachedStream = nullptr;
    uint64_t cachedStreamComm = 0;
    int32_t cachedStreamRank = -1;
    bool hasLastRecord = false;
    format::Record lastRecord{};
    // The rest of a chunk whose lead-in was matched alone (fetch): read, classified, not matched.
    uint64_t heldEnd = 0; // 0: none
    const format::Record *heldRecords = nullptr;
    const format::SlotState *heldStates = nullptr;
  };

  CommState &commState(uint64_t id);
  void learnCommunicator(int file, const format::Record &r);
  void learnMembers(const format::Record &r);
  void setMemberWorldRank(CommState &c, size_t commRank, int32_t worldRank);
  void label(CommState &c);
  struct Chunk {
    uint64_t end = 0;                          // slots [FileState::next, end)
    const format::Record *records = nullptr;   // read, or null: read them where mapped
    const format::SlotState *states = nullptr; // their classification, with `records`
    ChunkRun run;
    size_t matched = 0; // leading records already matched in place
  };
  void readChunk(int file);
  Chunk fetch(int file);
  void processChunk(int file, const Chunk &c);
  bool matchRoundInPlace();
  std::vector<Chunk> roundChunks_;
  std::vector<const format::Record *> runs_;
  // A record that does not continue its file's cached stream (processChunk tests that first).
  void route(int file, const format::Record &r);
  // No communicator has more members than the job has processes: a larger size or rank is damage
  // (and would make every position's per-member work as large as that claim).
  int64_t jobProcesses() const {
    return traces_.worldSize > 0 ? std::max<int64_t>(traces_.worldSize, traces_.files.size())
                                 : format::kMaxWorldSize;
  }
  int64_t maxCommSize() const {
    return options_.maxCommunicatorSize > 0 ? std::min(options_.maxCommunicatorSize, jobProcesses())
                                            : jobProcesses();
  }
  std::string maxCommSizeReason() const {
    if (maxCommSize() < jobProcesses())
      return "the analysis was limited to " + std::to_string(maxCommSize()) + " ranks";
    return traces_.worldSize > 0 ? "the job has " + std::to_string(maxCommSize()) + " processes"
                                 : "the limit is " + std::to_string(format::kMaxWorldSize);
  }
  // A damaged file can hold a problem in every record: the first few of each file are named,
  // the rest counted (memory and report stay bounded by the number of files, not of records).
  static constexpr size_t kProblemsNamedPerFile = 16;
  void problem(const std::string &file, const std::string &reason) {
    markUnclean("a problem in the records: " + reason);
    if (++problemsPerFile_[file] <= kProblemsNamedPerFile)
      streamProblems_.push_back({file, reason, false});
  }
  void countUnnamedProblems() {
    for (const auto &[file, count] : problemsPerFile_)
      if (count > kProblemsNamedPerFile)
        streamProblems_.push_back({file,
                                   std::to_string(count - kProblemsNamedPerFile) +
                                       " further problem(s) of the kinds above (the first " +
                                       std::to_string(kProblemsNamedPerFile) + " are named)",
                                   false});
  }
  std::map<std::string, uint64_t> problemsPerFile_;
  bool allFilesDone() const {
    return std::all_of(files_.begin(), files_.end(), [](const FileState &f) { return f.done; });
  }
  void settleUnknowns();
  void conflict(CommState &c, size_t commRank, int file);
  std::set<std::tuple<uint64_t, size_t, int>> conflicts_;
  void reportDamage(int file);

  const TraceSet &traces_;
  AnalysisOptions options_;
  RangeSpec ownRange_; // a share's range, which its control may shorten
  RangeSpec *range_;   // null: the whole files
  RangeControl *control_;
  void offerRest();
  std::optional<Judge> judge_;
  EventLog log_;
  JobEvents *events_ = nullptr;
  uint64_t currentSlot_ = 0; // the slot and file being routed: the communicators' order key
  int currentFile_ = 0;
  uint64_t beginOf(int file) const { return range_ ? range_->begin[static_cast<size_t>(file)] : 0; }
  uint64_t endOf(int file) const {
    return range_ ? range_->end[static_cast<size_t>(file)]
                  : traces_.files[static_cast<size_t>(file)].reader->slotCount();
  }
  // Split analysis: why this share cannot be merged exactly (the first reason found).
  std::string unclean_;
  bool waitsAtEnd_ = false;
  void markUnclean(const std::string &why) {
    if (unclean_.empty())
      unclean_ = why;
  }
  void learnFromPrefix(int file, uint64_t commId);
  CommState *membersComm_ = nullptr; // the communicator of the last member list record
  // Whether communicator `id` is known with every member attached to its file. `known`: members
  // before it were found attached by an earlier call (an attachment is never undone), so that
  // asking after every file costs the members once, not once per file.
  bool membersKnown(uint64_t id, size_t &known) const {
    auto it = byId_.find(id);
    if (it == byId_.end() || it->second->comm.size < 0)
      return false;
    const CommAligner &a = it->second->aligner;
    while (known < a.memberCount() && a.member(known).file >= 0)
      ++known;
    return known == a.memberCount();
  }
  // Split analysis: records that `seq` is the first call of `commRank` in the share (true) unless
  // an earlier one was.
  bool noteFirstSeq(CommState &c, size_t commRank, uint64_t seq) {
    c.active = true;
    if (c.firstSeq.size() <= commRank)
      c.firstSeq.resize(std::max(c.aligner.memberCount(), commRank + 1), UINT64_MAX);
    if (c.firstSeq[commRank] != UINT64_MAX)
      return false;
    c.firstSeq[commRank] = seq;
    return true;
  }
  bool startsHere(const CommState &c, size_t commRank) const {
    return range_ && !range_->first &&
           (commRank >= c.firstSeq.size() || c.firstSeq[commRank] == UINT64_MAX);
  }
  void pointToPointEvent(const PointToPointEvent &e) { events_->pointToPoint(e); }
  std::vector<uint32_t> commOrder(std::unordered_map<uint64_t, uint32_t> &rankOf);
  std::vector<FileState> files_;
  std::vector<ProcessState> processes_;
  std::vector<std::unique_ptr<CommState>> comms_;
  std::unordered_map<uint64_t, CommState *> byId_;
  std::vector<InputProblem> streamProblems_;
  size_t backlogLimit_;
  uint64_t recordsRead_ = 0;
  std::unique_ptr<ChunkReader> reader_;

public:
  const std::vector<InputProblem> &streamProblems() const override { return streamProblems_; }
};

Analysis::CommState &Analysis::commState(uint64_t id) {
  if (auto it = byId_.find(id); it != byId_.end())
    return *it->second;
  auto state = std::make_unique<CommState>(options_.lookahead);
  state->comm.id = id;
  state->comm.index = static_cast<uint32_t>(comms_.size());
  state->comm.label = "comm " + shortCommId(id);
  state->key = {currentSlot_, currentFile_};
  if (options_.partitionCount > 1)
    state->inPartition =
        (id * 0x9e3779b97f4a7c15ull >> 32) % options_.partitionCount == options_.partitionIndex;
  CommState *raw = state.get();
  comms_.push_back(std::move(state));
  byId_.emplace(id, raw);
  return *raw;
}

void Analysis::label(CommState &c) {
  c.comm.label = commLabel(c.comm, communicator(c.comm.parentId));
}

void Analysis::setMemberWorldRank(CommState &c, size_t commRank, int32_t worldRank) {
  if (commRank >= c.comm.worldRankOf.size() || worldRank < 0)
    return;
  if (worldRank >= traces_.worldSize) {
    problem("", "the member list of " + c.comm.label + " names world rank " +
                    std::to_string(worldRank) + " of a " + std::to_string(traces_.worldSize) +
                    "-rank job; the entry is ignored");
    return;
  }
  c.comm.worldRankOf[commRank] = worldRank;
  MemberStream &m = c.aligner.member(commRank);
  if (m.file >= 0)
    return;
  int file = traces_.fileOfWorldRank(worldRank);
  if (file < 0) {
    m.noTrace = true; // the member's trace file is missing
  } else {
    attach(m, file);
    c.comm.fileOf[commRank] = file;
  }
}

void Analysis::learnCommunicator(int file, const format::Record &r) {
  CommState &c = commState(r.commId);
  c.key = std::min(c.key, CommOrderKey{currentSlot_, file});
  auto size = static_cast<int64_t>(r.count);
  if (c.comm.size < 0) {
    if (size <= 0 || size > maxCommSize()) {
      problem(traces_.files[static_cast<size_t>(file)].path,
              "communicator " + hexCommId(r.commId) + " created with an impossible size " +
                  std::to_string(r.count) + " (" + maxCommSizeReason() + ")");
      return;
    }
    c.comm.size = static_cast<int32_t>(size);
    c.comm.origin = r.op < static_cast<uint8_t>(format::CommOrigin::Count)
                        ? static_cast<format::CommOrigin>(r.op)
                        : format::CommOrigin::Unknown;
    c.comm.parentId = r.aux;
    c.comm.color = r.peer;
    c.comm.nccl = (r.flags & format::kFlagNccl) != 0;
    size_t known = c.aligner.memberCount();
    c.aligner.resize(static_cast<size_t>(size));
    for (FileState &f : files_) // the member streams may have moved
      f.cachedStream = nullptr;
    c.comm.worldRankOf.resize(static_cast<size_t>(size), -1);
    c.comm.fileOf.resize(static_cast<size_t>(size), -1);
    if (known > static_cast<size_t>(size))
      problem(traces_.files[static_cast<size_t>(file)].path,
              "calls on communicator " + hexCommId(r.commId) + " name ranks beyond its size");
    label(c);
    if (c.comm.origin == format::CommOrigin::World)
      for (int32_t w = 0; w < c.comm.size; ++w)
        setMemberWorldRank(c, static_cast<size_t>(w), w);
  } else if (c.comm.size != size) {
    problem(traces_.files[static_cast<size_t>(file)].path,
            "communicator " + c.comm.label + " has size " + std::to_string(c.comm.size) +
                " in other traces but " + std::to_string(r.count) + " here");
  }
  if (r.commRank < 0 || r.commRank >= c.comm.size) {
    problem(traces_.files[static_cast<size_t>(file)].path,
            "rank " + std::to_string(r.commRank) + " out of range for " + c.comm.label);
    return;
  }
  auto commRank = static_cast<size_t>(r.commRank);
  MemberStream &m = c.aligner.member(commRank);
  if (m.file >= 0 && m.file != file) {
    conflict(c, commRank, file);
    return;
  }
  attach(m, file);
  m.noTrace = false;
  c.comm.fileOf[commRank] = file;
  if (traces_.files[static_cast<size_t>(file)].worldRank >= 0)
    c.comm.worldRankOf[commRank] = traces_.files[static_cast<size_t>(file)].worldRank;
}

void Analysis::conflict(CommState &c, size_t commRank, int file) {
  if (!conflicts_.emplace(c.comm.id, commRank, file).second)
    return;
  int holder = c.aligner.member(commRank).file;
  problem(traces_.files[static_cast<size_t>(file)].path,
          "claims rank " + std::to_string(commRank) + " of " + c.comm.label + ", which " +
              traces_.files[static_cast<size_t>(holder)].path +
              " holds; its records for that rank are ignored");
}

void Analysis::learnMembers(const format::Record &r) {
  // A list comes as consecutive records of one communicator in every file: look it up once.
  if (!membersComm_ || membersComm_->comm.id != r.commId)
    membersComm_ = &commState(r.commId);
  CommState &c = *membersComm_;
  // An NCCL communicator's list holds only the writer's own world rank, not at its member index:
  // its members are learnt from each file's comm_create (comm rank) and header (world rank).
  if (c.comm.size < 0 || c.comm.nccl || (r.flags & format::kFlagNccl))
    return;
  uint64_t first = r.seq();
  // Every member's file repeats the whole list: after the first file, a record names members
  // already known, and comparing it is all there is to do (applying it again costs each member a
  // look at its stream; over a job that is ranks x ranks). A record of nine members known as
  // listed compares as one block: the list holds them as worldRankOf does.
  const std::vector<int32_t> &listed = c.comm.worldRankOf;
  if (first < listed.size() && listed.size() - first >= format::kMembersPerRecord &&
      std::memcmp(reinterpret_cast<const char *>(&r) + format::kMembersOffset, &listed[first],
                  format::kMembersPerRecord * sizeof(int32_t)) == 0)
    return;
  bool known = true;
  for (int i = 0; i < format::kMembersPerRecord && known; ++i) {
    int32_t world = format::memberAt(r, i);
    uint64_t index = first + static_cast<uint64_t>(i);
    known = world < 0 || index >= static_cast<uint64_t>(c.comm.size) ||
            (index < c.comm.worldRankOf.size() && c.comm.worldRankOf[index] == world);
  }
  if (known)
    return;
  for (int i = 0; i < format::kMembersPerRecord; ++i) {
    int32_t world = format::memberAt(r, i);
    uint64_t index = first + static_cast<uint64_t>(i);
    if (world < 0 || index >= static_cast<uint64_t>(c.comm.size))
      continue;
    setMemberWorldRank(c, static_cast<size_t>(index), world);
  }
}

void Analysis::route(int file, const format::Record &r) {
  // Calls are sequenced on a communicator; everything else is said once, by one process.
  if (!format::isCallKind(r.kind)) {
    switch (static_cast<Kind>(r.kind)) {
    case Kind::CommCreate:
      learnCommunicator(file, r);
      break;
    case Kind::CommMembers:
      learnMembers(r);
      break;
    case Kind::CommRelease: {
      CommState &c = commState(r.commId);
      if (r.commRank >= 0 && static_cast<size_t>(r.commRank) < c.aligner.memberCount())
        c.aligner.member(static_cast<size_t>(r.commRank)).released = true;
      c.released = true;
      break;
    }
    case Kind::Finalize:
      processes_[static_cast<size_t>(file)].finalized = true; // the merge checks later shares
      break;
    case Kind::ProcessSignal:
      processes_[static_cast<size_t>(file)].endSignal = static_cast<int>(r.count);
      break;
    default:
      events_->meta({file, r});
      break;
    }
    return;
  }
  // A call the tracer recorded without a communicator (MPI_COMM_NULL, or a handle that is none)
  // has no position anywhere: the rules see it as it was written (invalid-communicator), once,
  // in the first partition of a split analysis.
  if (r.commId == 0 && r.commRank < 0) {
    if (options_.partitionCount <= 1 || options_.partitionIndex == 0)
      events_->meta({file, r});
    return;
  }
  FileState &fs = files_[static_cast<size_t>(file)];
  CommState *c = fs.cachedComm;
  if (!c || fs.cachedCommId != r.commId) {
    c = &commState(r.commId);
    fs.cachedComm = c;
    fs.cachedCommId = r.commId;
  }
  if (!c->inPartition)
    return;
  // A call that holds its own values (a one-element count reduction) is also a value record.
  if (format::holdsValues(r)) [[unlikely]]
    events_->meta({file, r});
  if (range_ && !range_->first &&
      (c->comm.size < 0 || r.commRank < 0 ||
       static_cast<size_t>(r.commRank) >= c->aligner.memberCount() ||
       c->aligner.member(static_cast<size_t>(r.commRank)).file < 0))
    learnFromPrefix(file, r.commId); // its creation lies before this share
  if (r.commRank < 0 || (c->comm.size >= 0 && r.commRank >= c->comm.size) ||
      r.commRank >= maxCommSize()) {
    problem(traces_.files[static_cast<size_t>(file)].path,
            "a call names rank " + std::to_string(r.commRank) + " of " + c->comm.label +
                ", outside the communicator");
    return;
  }
  auto commRank = static_cast<size_t>(r.commRank);
  if (commRank >= c->aligner.memberCount()) {
    // Calls on a communicator whose creation this trace does not hold: membership is inferred.
    c->aligner.resize(commRank + 1);
    c->comm.worldRankOf.resize(commRank + 1, -1);
    c->comm.fileOf.resize(commRank + 1, -1);
  }
  MemberStream &m = c->aligner.member(commRank);
  if (m.file < 0) {
    attach(m, file);
    c->comm.fileOf[commRank] = file;
    if (traces_.files[static_cast<size_t>(file)].worldRank >= 0)
      c->comm.worldRankOf[commRank] = traces_.files[static_cast<size_t>(file)].worldRank;
  } else if (m.file != file) {
    conflict(*c, commRank, file); // one comm rank lives in one process: keep the first claim
    return;
  }
  if (m.noTrace)
    return;
  uint64_t seq = r.seq();
  if (range_ && noteFirstSeq(*c, commRank, seq) && !range_->first)
    m.nextSeq = seq; // the share starts where the member is; the merge checks it against the last
  if (seq != m.nextSeq) {
    if (seq < m.nextSeq) {
      problem(traces_.files[static_cast<size_t>(file)].path,
              "sequence number " + std::to_string(seq) + " on " + c->comm.label +
                  " repeats or goes back (expected " + std::to_string(m.nextSeq) +
                  "); the record is ignored");
      return;
    }
    uint64_t gap = seq - m.nextSeq;
    if (gap > kMaxHoles) {
      problem(traces_.files[static_cast<size_t>(file)].path,
              std::to_string(gap) + " calls on " + c->comm.label +
                  " are missing from this trace (sequence " + std::to_string(m.nextSeq) + " to " +
                  std::to_string(seq - 1) + "); later calls of this rank are unchecked");
      m.noTrace = true;
      fs.cachedStream = nullptr;
      return;
    }
    format::Record hole{};
    hole.kind = kHoleKind;
    hole.commId = r.commId;
    hole.commRank = r.commRank;
    for (uint64_t s = m.nextSeq; s < seq; ++s) {
      hole.setSeqThread(s, 0);
      m.queue.push(hole);
      ++fs.backlog;
    }
  }
  m.nextSeq = seq + 1;
  if (isPointToPoint(kindOf(r))) {
    c->pointToPoint.add(c->comm, r, [&](const PointToPointEvent &e) { pointToPointEvent(e); });
    return;
  }
  m.queue.push(r);
  ++fs.backlog;
  if (c->comm.size >= 0) {
    fs.cachedStream = &m;
    fs.cachedStreamComm = r.commId;
    fs.cachedStreamRank = r.commRank;
  }
}

void Analysis::readChunk(int file) {
  currentFile_ = file;
  Chunk c = fetch(file);
  processChunk(file, c);
}

Analysis::Chunk Analysis::fetch(int file) {
  FileState &fs = files_[static_cast<size_t>(file)];
  Chunk c;
  if (fs.heldEnd > fs.next) {
    c.end = fs.heldEnd;
    c.records = fs.heldRecords;
    c.states = fs.heldStates;
    c.run = leadingRun(c.records, c.states, c.end - fs.next);
    fs.heldEnd = 0;
    return c;
  }
  const bool rangeStart = fs.next == beginOf(file);
  c.end = std::min<uint64_t>(fs.next + options_.readChunk, endOf(file));
  if (reader_ && c.end > fs.next)
    c.records = reader_->read(file, fs.next, c.end - fs.next, c.states, &c.run);
  // A file's first chunk opens with its creation records and member lists, then its calls:
  // matched alone, that lead-in lets the next round start every file at its calls and match them
  // in place, where the whole chunk would go through the queues (the share from the files' starts
  // of a 4,096 x 25,000 job took 0.07 s longer for that).
  if (rangeStart && c.records && c.states && c.run.length == 0)
    for (uint64_t i = 1; fs.next + i < c.end; ++i)
      if (c.states[i] == format::SlotState::Published &&
          format::isCollectiveKind(c.records[i].kind)) {
        fs.heldEnd = c.end;
        fs.heldRecords = c.records + i;
        fs.heldStates = c.states + i;
        c.end = fs.next + i;
        break;
      }
  return c;
}

// In lockstep jobs every file's next chunk is its world-rank's next calls on one communicator:
// then the positions are matched straight from the chunks read, and nothing is queued.
bool Analysis::matchRoundInPlace() {
  if (!reader_ || files_.empty())
    return false;
  for (const FileState &fs : files_)
    if (fs.done || fs.backlog >= backlogLimit_)
      return false;
  std::vector<Chunk> &chunks = roundChunks_;
  const size_t n = files_.size();
  chunks.resize(n);
  // The round's communicator comes from the first file's chunk, and with it the file of its rank
  // 0. Every other chunk is compared with that one as soon as it is fetched, while its records are
  // still in the cache: each record then comes from memory once, not again for the comparison.
  chunks[0] = fetch(0);
  CommState *c = nullptr;
  if (chunks[0].records && chunks[0].run.length > 0) {
    auto it = byId_.find(chunks[0].run.commId);
    c = it == byId_.end() ? nullptr : it->second;
    if (c && !(c->inPartition && c->aligner.memberCount() == n && c->aligner.canMatchInPlace()))
      c = nullptr;
  }
  const int referenceFile = c ? c->aligner.member(0).file : -1;
  if (referenceFile > 0 && static_cast<size_t>(referenceFile) < n)
    chunks[static_cast<size_t>(referenceFile)] = fetch(referenceFile);
  const Chunk *reference = referenceFile >= 0 && static_cast<size_t>(referenceFile) < n
                               ? &chunks[static_cast<size_t>(referenceFile)]
                               : nullptr;
  size_t agreeing = reference && reference->records ? reference->run.length : 0;
  for (size_t f = 1; f < n; ++f) {
    if (static_cast<int>(f) == referenceFile)
      continue;
    chunks[f] = fetch(static_cast<int>(f));
    if (agreeing > 0 && chunks[f].records)
      agreeing = CommAligner::agreeingPrefix(reference->records, chunks[f].records,
                                             std::min<size_t>(agreeing, chunks[f].run.length));
  }
  size_t length = agreeing;
  bool inPlace = c != nullptr;
  for (size_t f = 0; f < n && inPlace; ++f) {
    const Chunk &k = chunks[f];
    inPlace = k.records && k.run.length > 0 && k.run.commId == c->comm.id && k.run.commRank >= 0 &&
              static_cast<size_t>(k.run.commRank) < c->aligner.memberCount();
    if (!inPlace)
      break;
    const MemberStream &m = c->aligner.member(static_cast<size_t>(k.run.commRank));
    // A share's first calls of a member are taken where they are (the merge checks where that is).
    inPlace = m.file == static_cast<int>(f) &&
              (m.nextSeq == k.run.firstSeq || startsHere(*c, static_cast<size_t>(k.run.commRank)));
    length = std::min<size_t>(length, k.run.length);
  }
  if (inPlace) {
    // One file per member, each holding that member's next calls: match them where they lie.
    runs_.resize(files_.size());
    for (size_t f = 0; f < files_.size(); ++f)
      runs_[static_cast<size_t>(chunks[f].run.commRank)] = chunks[f].records;
    c->aligner.matchInPlace(runs_, length, *this);
    for (size_t f = 0; f < files_.size(); ++f)
      chunks[f].matched = length;
  }
  for (size_t f = 0; f < files_.size(); ++f) {
    currentFile_ = static_cast<int>(f);
    processChunk(static_cast<int>(f), chunks[f]);
  }
  return true;
}

void Analysis::processChunk(int file, const Chunk &c) {
  FileState &fs = files_[static_cast<size_t>(file)];
  const format::Reader &reader = *traces_.files[static_cast<size_t>(file)].reader;
  uint64_t end = c.end;
  uint64_t read = 0, slotsBefore = fs.next;
  const format::SlotState *states = c.states; // classified by the chunk reader, when it read them
  const format::Record *chunk = c.records;
  if (c.matched > 0) {
    // The first `matched` records were matched in place: account for them as routed.
    CommState &comm = *byId_.at(c.run.commId);
    if (range_)
      noteFirstSeq(comm, static_cast<size_t>(c.run.commRank), c.run.firstSeq);
    MemberStream &m = comm.aligner.member(static_cast<size_t>(c.run.commRank));
    m.nextSeq = c.run.firstSeq + c.matched;
    fs.slots.published += c.matched;
    read += c.matched;
    fs.slots.holes += fs.emptyRun;
    fs.emptyRun = 0;
    fs.cachedStream = &m;
    fs.cachedStreamComm = c.run.commId;
    fs.cachedStreamRank = c.run.commRank;
  }
  const format::Record *lastRecord = nullptr, *lastCall = nullptr;
  if (c.matched > 0)
    lastRecord = lastCall = &chunk[c.matched - 1];
  for (uint64_t i = fs.next + c.matched; i < end; ++i) {
    const format::Record &r = chunk ? chunk[i - fs.next] : reader.slot(i);
    format::SlotState state = states ? states[i - fs.next] : format::classify(r);
    if (state == format::SlotState::Empty) {
      ++fs.emptyRun;
      continue;
    }
    fs.slots.holes += fs.emptyRun; // empty slots followed by a record were reserved, never written
    fs.emptyRun = 0;
    if (state != format::SlotState::Published) {
      ++(state == format::SlotState::Torn ? fs.slots.torn : fs.slots.corrupt);
      fs.slots.firstProblem = std::min(fs.slots.firstProblem, i);
      continue;
    }
    if (!format::isKnownKind(r.kind)) {
      ++fs.slots.unknownKind; // a newer tracer's record: skipped, not misread
      continue;
    }
    ++fs.slots.published;
    currentSlot_ = i;
    // The next record of a file is almost always the next call of the stream the last one went
    // to: then routing is a few comparisons and a push, without a call.
    if (MemberStream *s = fs.cachedStream;
        s && format::isCollectiveKind(r.kind) && r.commId == fs.cachedStreamComm &&
        r.commRank == fs.cachedStreamRank && r.seq() == s->nextSeq &&
        !format::holdsValues(r)) { // a call holding values is routed (a value record)
      s->nextSeq = r.seq() + 1;
      s->queue.push(r);
      ++fs.backlog;
    } else {
      route(file, r);
    }
    lastRecord = &r;
    if (format::isCallKind(r.kind))
      lastCall = &r;
    ++read;
  }
  if (lastRecord) {
    fs.lastRecord = *lastRecord;
    fs.hasLastRecord = true;
  }
  if (lastCall) {
    ProcessState &process = processes_[static_cast<size_t>(file)];
    process.lastCall = *lastCall;
    process.hasLastCall = true;
    process.lastCallCommId = lastCall->commId;
  }
  fs.next = end;
  recordsRead_ += read;
  if (options_.recordsRead)
    options_.recordsRead->fetch_add(end - slotsBefore, std::memory_order_relaxed);
  if (fs.next == endOf(file)) {
    fs.done = true;
    ProcessState &p = processes_[static_cast<size_t>(file)];
    p.cut = p.cut || fs.slots.torn || fs.slots.corrupt;
    if (fs.hasLastRecord)
      p.endTimeNs = format::nanosSinceCreate(reader.header(), fs.lastRecord.tscStart) +
                    format::durationNanos(reader.header(), fs.lastRecord);
  }
}

void Analysis::reportDamage(int file) {
  std::string out = describeDamage(files_[static_cast<size_t>(file)].slots);
  if (!out.empty())
    problem(traces_.files[static_cast<size_t>(file)].path, out);
}

void Analysis::settleUnknowns() {
  // Every file is read: a member no file claimed has no trace, a communicator never created in
  // any trace takes the ranks its calls named.
  for (auto &c : comms_) {
    if (c->comm.size < 0) {
      c->comm.size = static_cast<int32_t>(c->aligner.memberCount());
      problem("", "no trace records the creation of communicator " + hexCommId(c->comm.id) +
                      "; its membership is inferred from its calls");
    }
    for (size_t r = 0; r < c->aligner.memberCount(); ++r) {
      MemberStream &m = c->aligner.member(r);
      if (m.file < 0)
        m.noTrace = true;
    }
  }
}

void Analysis::learnFromPrefix(int file, uint64_t commId) {
  FileState &fs = files_[static_cast<size_t>(file)];
  const format::Reader &slots = *traces_.files[static_cast<size_t>(file)].reader;
  uint64_t begin = beginOf(file);
  if (fs.prefixNext >= begin)
    return;
  // Creations are written at the start of a job, member lists right after them: read on until
  // the creation of `commId` and a little past it, and keep the place for the next lookup.
  constexpr uint64_t kPast = 64;
  uint64_t savedSlot = currentSlot_;
  int savedFile = currentFile_;
  currentFile_ = file;
  uint64_t stop = UINT64_MAX;
  for (uint64_t i = fs.prefixNext; i < begin && i < stop; ++i) {
    fs.prefixNext = i + 1;
    const format::Record &r = slots.slot(i);
    if (format::classify(r) != format::SlotState::Published)
      continue;
    currentSlot_ = i;
    if (r.kind == static_cast<uint8_t>(Kind::CommCreate)) {
      learnCommunicator(file, r);
      if (r.commId == commId)
        stop = i + 1 + kPast;
    } else if (r.kind == static_cast<uint8_t>(Kind::CommMembers)) {
      learnMembers(r);
    }
  }
  currentSlot_ = savedSlot;
  currentFile_ = savedFile;
}

std::vector<uint32_t> Analysis::commOrder(std::unordered_map<uint64_t, uint32_t> &rankOf) {
  std::vector<uint32_t> order(comms_.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return comms_[a]->key < comms_[b]->key; });
  for (size_t i = 0; i < order.size(); ++i) {
    comms_[order[i]]->comm.index = static_cast<uint32_t>(i);
    rankOf[comms_[order[i]]->comm.id] = static_cast<uint32_t>(i);
  }
  return order;
}

void Analysis::matchAll() {
  bool settled = false;
  // Whether the files end with this share (a share that gave its rest away no longer does).
  auto ends = [&] { return !range_ || range_->last; };
  while (true) {
    if (control_ && !settled && control_->asked())
      offerRest();
    bool matchedRound = matchRoundInPlace(), read = matchedRound;
    for (size_t f = 0; f < files_.size() && !matchedRound; ++f) {
      if (!files_[f].done && files_[f].backlog < backlogLimit_) {
        readChunk(static_cast<int>(f));
        read = true;
      }
    }
    bool allDone = allFilesDone();
    if (allDone && !settled) {
      if (range_)
        checkMembersKnown();
      if (ends())
        settleUnknowns();
      settled = true;
    }
    bool progressed = false, allAligned = true;
    for (size_t i = 0; i < comms_.size(); ++i) { // comms_ may grow while aligning: index loop
      CommState &c = *comms_[i];
      if (!c.inPartition || c.aligner.done())
        continue;
      CommAligner::Result result = c.aligner.run(*this, *this);
      progressed = progressed || result != CommAligner::Result::Wait;
      allAligned = allAligned && result == CommAligner::Result::Done;
    }
    if (allDone && allAligned)
      break;
    if (!read && !progressed) {
      if (allDone)
        break;            // a share's end: what waits there is checked against the next share
      backlogLimit_ *= 2; // every reader paused and no aligner can go on: let them run ahead
    }
  }
  if (!ends()) {
    for (auto &c : comms_)
      waitsAtEnd_ = waitsAtEnd_ || c->pointToPoint.waiting();
    return;
  }
  for (auto &c : comms_) {
    if (!c->inPartition)
      continue;
    c->pointToPoint.finish(
        c->comm,
        [&](int32_t peer) {
          if (peer < 0 || static_cast<size_t>(peer) >= c->aligner.memberCount())
            return Presence::NoTrace;
          const MemberStream &m = c->aligner.member(static_cast<size_t>(peer));
          if (m.noTrace || m.file < 0 || processes_[static_cast<size_t>(m.file)].cut)
            return Presence::NoTrace;
          const ProcessState &p = processes_[static_cast<size_t>(m.file)];
          return p.finished || p.finalized || m.released ? Presence::Exited : Presence::NotReached;
        },
        [&](const PointToPointEvent &e) { pointToPointEvent(e); });
  }
}

void Analysis::offerRest() {
  // Nothing is given once a file is read to its end: the aligners may already have concluded
  // from a last share's end there.
  std::vector<uint64_t> from;
  bool open = true;
  for (const FileState &fs : files_)
    open = open && !fs.done;
  if (open)
    for (const FileState &fs : files_)
      from.push_back(std::max(fs.next, fs.heldEnd)); // read, or held
  std::optional<std::vector<uint64_t>> end = control_->giveAway(from, *range_);
  if (!end)
    return;
  bool fits = open && end->size() == files_.size();
  for (size_t f = 0; f < files_.size() && fits; ++f)
    fits = (*end)[f] > from[f] && (*end)[f] <= range_->end[f];
  if (!fits) {
    // The rest is another thread's now, whatever this share reads: it must not be merged.
    markUnclean("the share handed over a range it could not stop before");
    return;
  }
  range_->end = std::move(*end);
  range_->last = false;
}

// A share's member that no record of the share names is unknown here, yet known to a single
// process (from a creation before the share): such a share is not merged.
void Analysis::checkMembersKnown() {
  for (auto &c : comms_) {
    if (!c->active)
      continue;
    if (c->comm.size < 0) {
      markUnclean("no creation of " + hexCommId(c->comm.id) + " was found before its calls");
      continue;
    }
    for (size_t r = 0; r < c->aligner.memberCount(); ++r) {
      const MemberStream &m = c->aligner.member(r);
      if (m.file < 0 && !m.noTrace)
        markUnclean("rank " + std::to_string(r) + " of " + c->comm.label +
                    " has no record in the share");
    }
  }
}

AnalysisResult Analysis::run() {
  matchAll();
  // Damage is named per file, in file order, once every file is read.
  for (size_t f = 0; f < files_.size(); ++f)
    reportDamage(static_cast<int>(f));
  countUnnamedProblems();
  judge_->jobEnd();

  AnalysisResult result;
  result.recordsRead = recordsRead_;
  std::unordered_map<uint64_t, uint32_t> rankOf;
  for (uint32_t i : commOrder(rankOf)) {
    CommState *c = comms_[i].get();
    if (!c->inPartition)
      continue;
    CommSummary summary;
    summary.comm = c->comm;
    summary.positions = c->aligner.positions();
    summary.pointToPoint = c->pointToPoint.matched();
    for (size_t r = 0; r < c->aligner.memberCount(); ++r)
      summary.callsIssued.push_back(c->aligner.member(r).consumed);
    result.positions += summary.positions;
    result.communicators.push_back(std::move(summary));
  }
  for (const FileState &fs : files_)
    result.recordsPerFile.push_back(fs.slots.published);
  result.problems = streamProblems_;
  result.findings = judge_->takeFindings(rankOf);
  result.pictures = judge_->takePictures(rankOf);
  result.uncheckable = judge_->takeUncheckable();
  return result;
}

RangeResult Analysis::runRange() {
  matchAll();
  RangeResult result;
  for (size_t f = 0; f < files_.size(); ++f) {
    const FileState &fs = files_[f];
    const ProcessState &p = processes_[f];
    if (!range_->last && (fs.slots.torn || fs.slots.corrupt))
      markUnclean("damaged records before the last share"); // later shares would not know
    RangeFile out;
    out.begin = range_->begin[f];
    out.end = range_->end[f];
    out.slots = fs.slots;
    out.finalized = p.finalized;
    out.endSignal = p.endSignal;
    out.hasLastCall = p.hasLastCall;
    out.lastCall = p.lastCall;
    out.hasLastRecord = fs.hasLastRecord;
    out.lastRecord = fs.lastRecord;
    result.files.push_back(out);
  }
  for (auto &c : comms_) {
    RangeComm out;
    out.comm = c->comm;
    out.key = c->key;
    out.positions = c->aligner.positions();
    out.pointToPoint = c->pointToPoint.matched();
    out.active = c->active;
    out.released = c->released;
    out.atRest = c->aligner.atRest();
    size_t members = c->aligner.memberCount();
    out.firstSeq = c->firstSeq;
    out.firstSeq.resize(members, UINT64_MAX);
    format::Record none{};
    none.kind = kHoleKind;
    for (size_t r = 0; r < members; ++r) {
      const MemberStream &m = c->aligner.member(r);
      out.consumed.push_back(m.consumed);
      out.nextSeq.push_back(m.nextSeq);
      const format::Record *last = c->aligner.lastMatched(r);
      out.last.push_back(last ? *last : none);
    }
    result.comms.push_back(std::move(out));
  }
  result.recordsRead = recordsRead_;
  result.last = range_->last;
  result.waitsAtEnd = waitsAtEnd_;
  result.events = log_.take();
  result.unclean = unclean_;
  return result;
}

} // namespace

size_t readChunkFor(size_t files) {
  constexpr size_t kBudget = size_t{128} << 20, kMost = 2048, kLeast = 512;
  const size_t fit = kBudget / (std::max<size_t>(files, 1) * format::kRecordSize);
  return std::clamp(fit, kLeast, kMost);
}

AnalysisResult analyze(const TraceSet &traces, const AnalysisOptions &options) {
  Analysis analysis(traces, options, nullptr);
  return analysis.run();
}

RangeResult analyzeRange(const TraceSet &traces, const AnalysisOptions &options,
                         const RangeSpec &range, RangeControl *control) {
  Analysis analysis(traces, options, &range, control);
  return analysis.runRange();
}

} // namespace collcheck::analyzer
