// A split analysis: `mpirun -np K collcheck analyze DIR`. Process k reads the k-th share of
// every file (share_plan.h), matches it with fresh aligners and logs its events. A process that
// finishes first asks a slower one for work: that one stops halfway through what it has left, at
// a cut like the planned ones, and hands the rest over (so a process may send several ranges).
// Rank 0 gathers the logs and counts, puts the ranges in order, checks that every communicator's
// members were in step at every cut (and nothing the shares could not see crosses one), and
// replays the logs into the one judge of the job: the report is the one a single process writes.
// When a check fails, rank 0 analyzes the job alone and says why on --timings; the report is the
// same, only slower.
#pragma once

#include "../load/trace_set.h"
#include "../match/analysis.h"
#include "share_plan.h"
#include "transport.h"

#include <memory>
#include <string>
#include <string_view>

namespace collcheck::analyzer::distributed {

struct SplitStats {
  int processes = 1;
  uint64_t bytesGathered = 0; // what rank 0 received, and its own shares as they would be
                              // encoded (they are merged as they are, not sent)
  double shareSeconds = 0;    // this process: planning and matching its share
  double mergeSeconds = 0;    // rank 0: checking and replaying the shares
  int joined = 0;             // cuts rank 0 read across again (two shares as one)
  int ranges = 0;             // rank 0: the ranges merged (the processes' shares and the rest
                              // of a share handed from one process to another)
  int taken = 0, given = 0;   // this process: ranges it took over from others, or handed over
  std::string fellBack;       // why rank 0 analyzed the job alone; empty when it merged

  // This process's share, phase by phase (shareSeconds holds them all): its planned share (its
  // cuts, the reading and matching), the ranges it took over, and asking for more and waiting
  // for the others to stop asking; then the gather (rank 0: until every share has arrived).
  double ownSeconds = 0, takenSeconds = 0, waitSeconds = 0, gatherSeconds = 0;
  double transportCpuSeconds = -1; // the CPU the MPI thread used until after the gather
};

// What the split takes from the environment (the tests' settings). Read before the transport
// starts: MPI_Init, on a thread of its own beside the reading, sets variables, and glibc's getenv
// is not safe against a setenv on another thread (it read a freed array, under AddressSanitizer).
struct SplitSettings {
  Balance balance = Balance::Bytes; // COLLCHECK_SPLIT_BALANCE
  int slowRank = -1;                // COLLCHECK_SPLIT_SLOW_RANK: this process, slowed (tests)
};
SplitSettings splitSettingsFromEnvironment();

// Collective over `transport`. On rank 0 `out` is the job's result; elsewhere it is empty.
void analyzeSplit(const TraceSet &traces, const AnalysisOptions &options, Transport &transport,
                  const SplitSettings &settings, AnalysisResult &out, SplitStats &stats);

// The merge alone: false with `why` when the shares cannot be merged exactly; `badCut`, when
// given, is then the cut that does not join (c: between shares c and c+1), or SIZE_MAX when the
// reason is not a cut's.
bool mergeShares(const TraceSet &traces, const AnalysisOptions &options,
                 const std::vector<RangeResult> &shares, AnalysisResult &out, std::string &why,
                 size_t *badCut = nullptr);

// Rank 0's half: merges the shares of a split along `commId`, in the order of their ranges
// (sortShares); where a cut does not join (a divergence within the lookahead of it, a send
// waiting across it, ranks out of step), it reads the two shares beside it again as one, here,
// and tries again. False with `why` when no joining helps (then rank 0 analyzes the job alone).
// `joined`: the cuts read across.
bool mergeJoining(const TraceSet &traces, const AnalysisOptions &options, uint64_t commId,
                  std::vector<RangeResult> shares, AnalysisResult &out, std::string &why,
                  int *joined);

// Puts shares in the order of the slots they read (a process may send several: its own share and
// what it took over from others); the merge checks that they then tile the files.
void sortShares(std::vector<RangeResult> &shares);

// What a share sends to rank 0, and back. encodedSize: the bytes encodeShare writes, counted
// without writing them (a process's message carries these counts as its length prefixes).
// decodeShare copies the share's log out of `bytes`, unless `bytes` lies within `message`: the
// log then stays there, and keeps the message alive.
std::string encodeShare(const RangeResult &share);
size_t encodedSize(const RangeResult &share);
bool decodeShare(std::string_view bytes, RangeResult &share,
                 std::shared_ptr<const std::string> message = nullptr);

// The job in `count` shares, each analyzed here in turn and merged (tests, and the model of the
// split in docs/performance.md); false with `why` as mergeShares. `handoverEvery` > 0: every
// share hands the second half of what it has left over at every handoverEvery-th look between
// its rounds, as to a process that finished early (the halves are analyzed after the shares).
bool analyzeInShares(const TraceSet &traces, const AnalysisOptions &options, int count,
                     AnalysisResult &out, std::string &why, Balance balance = Balance::Bytes,
                     uint64_t handoverEvery = 0);

// The process or thread a test's variable names (COLLCHECK_SPLIT_SLOW_RANK,
// COLLCHECK_THREAD_SPLIT_SLOW): -1 when it is unset or not a number from 0.
int indexFromEnvironment(const char *name);

} // namespace collcheck::analyzer::distributed
