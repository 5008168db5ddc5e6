// The analysis pipeline: reads every trace file of a job once, in chunks, routes each record to
// its communicator's member stream, and lets each communicator's aligner match positions as soon
// as every member's records are there. Files that run ahead pause (back-pressure), so the records
// held in memory are bounded by ranks x chunk, not by the trace length.
#pragma once

#include "../model/communicator.h"
#include "../model/finding.h"
#include "../model/participation.h"
#include "../rules/rule.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace collcheck::analyzer {

class TraceSet;

struct AnalysisOptions {
  size_t lookahead = 8;       // calls looked at ahead of a divergence, per rank
  size_t readChunk = 512;     // records read from one file before going to the next
  size_t backlogLimit = 8192; // records of one file waiting in queues before it pauses
  bool participation = true;  // sample the participation picture
  bool readAhead = true;      // read the next chunks on a helper thread (needs a second core)
  // Partitioned analysis: only communicators whose id hashes to `partitionIndex` modulo
  // `partitionCount` are matched (each part's findings are disjoint; merge them to get the job's).
  uint32_t partitionIndex = 0, partitionCount = 1;
  // Communicators larger than this are refused as damage (0: up to the job's process count).
  // Matching costs each position its communicator's size even where few of its ranks left a
  // trace; the fuzz target bounds it so that its inputs explore the logic, not that scaling.
  int64_t maxCommunicatorSize = 0;
  std::atomic<uint64_t> *recordsRead = nullptr; // progress: slots read, may be null
};

struct CommSummary {
  Communicator comm;
  uint64_t positions = 0;            // positions matched
  std::vector<uint64_t> callsIssued; // per comm rank
  uint64_t pointToPoint = 0;         // send/recv pairs matched
};

struct AnalysisResult {
  std::vector<Finding> findings;
  std::vector<CommSummary> communicators;
  std::vector<CommPicture> pictures;
  uint64_t recordsRead = 0;             // published records of known kinds
  std::vector<uint64_t> recordsPerFile; // the same, per TraceSet::files entry
  std::vector<InputProblem> problems;   // found while reading: damaged slots, sequence gaps, ...
  uint64_t positions = 0;
};

AnalysisResult analyze(const TraceSet &traces, const AnalysisOptions &options);

} // namespace collcheck::analyzer
