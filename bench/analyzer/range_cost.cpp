// What dividing the work costs by itself: in one process, one thread, the job analyzed whole and
// then as K shares one after the other (the ranges a split analysis over K processes reads), in
// turn for a number of rounds. With nothing beside it (no second process, no MPI), the difference
// is the shares' own extra work: their starts, their cuts and what each end leaves, not the memory
// system shared with another process. Usage:
//   collcheck_bench_range_cost DIR [K=2] [ROUNDS=5] [SHARE]
// With SHARE (0 .. K-1), each round analyzes that share alone and nothing else: run as processes
// of their own side by side, the shares are a split with nothing exchanged (split_bound.sh).
#include "distributed/share_plan.h"
#include "load/trace_set.h"
#include "match/analysis.h"
#include "split_job.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace collcheck::analyzer;

namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [K=2] [ROUNDS=5] [SHARE]\n", argv[0]);
    return 2;
  }
  const int shares = argc > 2 ? std::atoi(argv[2]) : 2;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  const int only = argc > 4 ? std::atoi(argv[4]) : -1;
  if (shares < 1 || rounds < 1 || (argc > 4 && (only < 0 || only >= shares))) {
    std::fprintf(stderr, "range_cost: K and ROUNDS must be positive, SHARE one of 0 .. K-1\n");
    return 2;
  }
  TraceSet traces;
  const std::optional<uint64_t> comm = bench::openSplitJob("range_cost", argv[1], traces);
  if (!comm)
    return 1;
  const AnalysisOptions options = bench::splitProcessOptions(traces);
  std::printf("%zu files, %d shares\n", traces.files.size(), shares);
  // Share k analyzed once, with its plan: its seconds (the analysis alone) and records read.
  auto timeShare = [&](int k, uint64_t &records) {
    const RangeSpec range = distributed::planShare(traces, *comm, k, shares,
                                                   distributed::Balance::Bytes, options.copyChunks);
    auto start = std::chrono::steady_clock::now();
    RangeResult share = analyzeRange(traces, options, range);
    const double seconds = since(start);
    records += share.recordsRead;
    return seconds;
  };
  if (only >= 0) {
    for (int round = 1; round <= rounds; ++round) {
      uint64_t records = 0;
      const double seconds = timeShare(only, records);
      std::printf("round %d: share %d of %d %.3f s (%llu records)\n", round, only, shares, seconds,
                  static_cast<unsigned long long>(records));
    }
    return 0;
  }
  for (int round = 1; round <= rounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    AnalysisResult whole = analyze(traces, options);
    const double wholeSeconds = since(start);
    std::vector<double> each;
    uint64_t records = 0;
    for (int k = 0; k < shares; ++k)
      each.push_back(timeShare(k, records));
    double sum = 0;
    std::string list;
    for (double s : each) {
      sum += s;
      list += (list.empty() ? "" : " + ") + std::to_string(s).substr(0, 5);
    }
    std::printf("round %d: whole %.3f s (%llu records); shares %s = %.3f s (%llu records), "
                "%+.1f %%\n",
                round, wholeSeconds, static_cast<unsigned long long>(whole.recordsRead),
                list.c_str(), sum, static_cast<unsigned long long>(records),
                100.0 * (sum - wholeSeconds) / wholeSeconds);
  }
  return 0;
}
