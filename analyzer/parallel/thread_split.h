// The analysis split among the threads of the process: the job's planned shares (share_plan.h),
// one per thread, read side by side from the files' mappings; a thread that finishes its share
// takes over the second half of what another one has left; then the shares are merged (merge.h).
// The report is the one a single thread writes.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"
#include "analyzer/parallel/share_plan.h"

#include <string>

namespace collcheck::analyzer::parallel {

struct ThreadSplitStats {
  int threads = 0;
  int ranges = 0;          // the ranges merged: the planned shares and those handed over
  int joined = 0;          // cuts read across again in the merge
  double shareSeconds = 0; // until the last thread finished reading
  double mergeSeconds = 0; // the merge, after it
};

// Below this many slots in all the files, a job is read by one thread: splitting it would gain
// less than the threads and the merge cost.
constexpr uint64_t kThreadSplitMinSlots = uint64_t{1} << 22;

// False with `why` when the job cannot be split (no communicator spans every file) or its shares
// do not merge exactly; the caller then analyzes it whole. `threads` >= 2.
// COLLCHECK_THREAD_SPLIT_SLOW=T makes thread T pause 1 ms at every look between its rounds, for
// the tests: the others then finish first and take over parts of its share.
bool analyzeInThreads(const TraceSet &traces, const AnalysisOptions &options, unsigned threads,
                      AnalysisResult &out, std::string &why, ThreadSplitStats &stats,
                      Balance balance = Balance::Bytes);

} // namespace collcheck::analyzer::parallel
