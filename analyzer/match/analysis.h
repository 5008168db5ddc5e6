// The analysis pipeline: reads every trace file of a job once, in chunks, routes each record to
// its communicator's member stream, and lets each communicator's aligner match positions as soon
// as every member's records are there. Files that run ahead pause (back-pressure), so the records
// held in memory are bounded by ranks x chunk, not by the trace length.
#pragma once

#include "analyzer/checks/rule.h"
#include "analyzer/match/judge.h"
#include "analyzer/match/wire.h"
#include "analyzer/model/analysis_result.h"
#include "analyzer/model/communicator.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace collcheck::analyzer {

class TraceSet;

namespace objective {
struct ReferenceRun;
} // namespace objective

struct AnalysisOptions {
  size_t lookahead = 8;       // calls looked at ahead of a divergence, per rank
  size_t readChunk = 512;     // records read from one file before going to the next
  size_t backlogLimit = 8192; // records of one file waiting in queues before it pauses
  bool participation = true;  // sample the participation picture
  // Partitioned analysis: only communicators whose id hashes to `partitionIndex` modulo
  // `partitionCount` are matched (each part's findings are disjoint; merge them to get the job's).
  uint32_t partitionIndex = 0, partitionCount = 1;
  // Communicators larger than this are refused as damage (0: up to the job's process count).
  // Matching costs each position its communicator's size even where few of its ranks left a
  // trace; the fuzz target bounds it so that its inputs explore the logic, not that scaling.
  int64_t maxCommunicatorSize = 0;
  std::atomic<uint64_t> *recordsRead = nullptr; // progress: slots read, may be null
  // `collcheck analyze --reference`: the run to compare with (rule reference-mismatch), or null.
  const objective::ReferenceRun *reference = nullptr;
};

AnalysisResult analyze(const TraceSet &traces, const AnalysisOptions &options);

// The records read from each file at a time for `files` files: 2,048 while a chunk of every file
// stays within 128 MiB, fewer for more files, never fewer than 512. A thread keeps about a chunk
// and a half of every file mapped (match/chunk_reader.h). Fewer, longer chunks mean fewer rounds
// over the files: on 1,024 ranks x 100,000 collectives 2,048 took 0.75-0.86 s against 0.90-0.97 s
// for 512; on 4,096 x 25,000, 512 took 0.94-0.96 s against 1.4-1.6 s for 128, for 20-30 % less
// memory.
size_t readChunkFor(size_t files);

// One share of a job analyzed in parts (analyzer/parallel): slots [begin[f], end[f]) of every
// file. The share is matched as if every communicator's members were in step at its start; whether
// they were is checked by the merge with what the shares before it report (RangeResult).
struct RangeSpec {
  std::vector<uint64_t> begin, end; // per TraceSet::files entry
  bool first = true, last = true;   // the first share reads no prefix; the last ends the files
  uint64_t alongComm = 0;           // the communicator the cuts follow
};

// What reading a file's slots found, beside its records.
struct SlotCounters {
  uint64_t published = 0, unknownKind = 0, torn = 0, corrupt = 0, holes = 0;
  uint64_t firstProblem = UINT64_MAX;
};
// "world", "split(color=1) of world [3fa2b7c1]", ...: a communicator's name in reports.
std::string commLabel(const Communicator &comm, const Communicator *parent);

// "2 torn record(s) (...), the first at slot 7; ...", or empty when the slots were sound.
std::string describeDamage(const SlotCounters &c);

struct RangeComm {
  Communicator comm;
  CommOrderKey key;
  uint64_t positions = 0, pointToPoint = 0;
  bool active = false;            // calls of this share were routed to it
  bool atRest = true;             // every call routed was matched, no reorder still showing
  bool released = false;          // a member released it in this share
  std::vector<uint64_t> consumed; // per comm rank: calls matched in this share
  std::vector<uint64_t> firstSeq; // per comm rank: first sequence number routed (UINT64_MAX: none)
  std::vector<uint64_t> nextSeq;  // per comm rank: the one expected after the share
  std::vector<format::Record> last; // per comm rank: the last call matched (kind 0xff: none)
};

struct RangeFile {
  uint64_t begin = 0, end = 0; // the slots this share read ([begin, end), as its RangeSpec)
  SlotCounters slots;
  bool finalized = false;
  int endSignal = 0;
  bool hasLastCall = false, hasLastRecord = false;
  format::Record lastCall{}, lastRecord{};
};

struct RangeResult {
  wire::Bytes events; // the share's events, in order (event_log.h)
  std::vector<RangeComm> comms;
  std::vector<RangeFile> files;
  uint64_t recordsRead = 0;
  bool last = true;        // the share read to the files' ends
  bool waitsAtEnd = false; // sends or receives wait for their other side across the end
  std::string unclean;     // why this share cannot be merged exactly; empty when it can
};

// Lets a running share hand the rest of its range to a thread that finished its own
// (parallel/thread_split.h). The share asks between rounds of reading, so a share stops only where
// it has read nothing yet.
class RangeControl {
public:
  virtual ~RangeControl() = default;
  // Cheap, asked often: whether another thread waits for work.
  virtual bool asked() = 0;
  // `from`: per file, the first slot this share has not read yet (empty: it can give nothing,
  // a file is already read to its end); `range`: the share's range now. Returns where the share
  // is to end instead (per file, after `from` and not after the end), having handed the slots
  // from there to the end to the asker; nullopt: the share goes on to its end.
  virtual std::optional<std::vector<uint64_t>> giveAway(const std::vector<uint64_t> &from,
                                                        const RangeSpec &range) = 0;
};

// `control`, when given, may shorten the range while it is read: the result then covers the
// range as shortened (RangeFile::end, RangeResult::last).
RangeResult analyzeRange(const TraceSet &traces, const AnalysisOptions &options,
                         const RangeSpec &range, RangeControl *control = nullptr);

} // namespace collcheck::analyzer
