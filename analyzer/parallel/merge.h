// The merge of a job analyzed in shares (thread_split.h): each share is a range of every file's
// slots, matched with fresh aligners, its events logged (match/event_log.h). The merge puts the
// ranges in order, checks that every communicator's members were in step at every cut (and that
// nothing the shares could not see crosses one), and replays the logs into the one judge of the
// job: the report is the one a single thread writes. Where a check fails, the job is analyzed
// whole; the report is the same, only slower.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"
#include "analyzer/parallel/share_plan.h"

#include <string>

namespace collcheck::analyzer::parallel {

// The merge alone: false with `why` when the shares cannot be merged exactly; `badCut`, when
// given, is then the cut that does not join (c: between shares c and c+1), or SIZE_MAX when the
// reason is not a cut's.
bool mergeShares(const TraceSet &traces, const AnalysisOptions &options,
                 const std::vector<RangeResult> &shares, AnalysisResult &out, std::string &why,
                 size_t *badCut = nullptr);

// Merges the shares cut along `commId`, in the order of their ranges (sortShares); where a cut
// does not join (a divergence within the lookahead of it, a send waiting across it, ranks out of
// step), it reads the two shares beside it again as one and tries again. False with `why` when no
// joining helps. `joined`: the cuts read across.
bool mergeJoining(const TraceSet &traces, const AnalysisOptions &options, uint64_t commId,
                  std::vector<RangeResult> shares, AnalysisResult &out, std::string &why,
                  int *joined);

// Puts shares in the order of the slots they read (a thread may read several: its own share and
// what it took over from others); the merge checks that they then tile the files.
void sortShares(std::vector<RangeResult> &shares);

// The job in `count` shares, each analyzed here in turn and merged (the tests); false with `why`
// as mergeShares. `handoverEvery` > 0: every share hands the second half of what it has left
// over at every handoverEvery-th look between its rounds, as to a thread that finished early
// (the halves are analyzed after the shares).
bool analyzeInShares(const TraceSet &traces, const AnalysisOptions &options, int count,
                     AnalysisResult &out, std::string &why, Balance balance = Balance::Bytes,
                     uint64_t handoverEvery = 0);

// The thread a test's variable names (COLLCHECK_THREAD_SPLIT_SLOW): -1 when it is unset or not a
// number from 0.
int indexFromEnvironment(const char *name);

} // namespace collcheck::analyzer::parallel
