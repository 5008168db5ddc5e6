// What the analysis of one job found: its findings, the communicators it matched and what reading
// the traces met on the way. Produced by the matcher (analyzer/match/analysis.h), read by the
// reporters, the reference comparison and the merge of a job analyzed in parts.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/model/communicator.h"
#include "analyzer/model/finding.h"
#include "analyzer/model/participation.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collcheck::analyzer {

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
  // Why the job could not be judged as asked (RuleContext::uncheckable): exit status 2.
  std::vector<std::string> uncheckable;
  uint64_t positions = 0;
};

} // namespace collcheck::analyzer
