// What rank 0 of a split analysis does with the shares, and what each part costs it: in one
// process, the job's K planned shares are analyzed one after the other (not timed), then every
// round encodes them (into one buffer each: the other processes send a share's head and log as
// parts, without this copy), decodes them (their logs read in place, as rank 0 reads them where
// they arrived) and merges them (mergeShares: the checks at the cuts and the replay into the one
// judge), each timed apart.
// These are the constants of the model in docs/performance.md (*Model*). Usage:
//   collcheck_bench_merge_cost DIR [K,K,...=2,8,32] [ROUNDS=5]
// Prints per K the bytes the shares encode to, and the best and median of the rounds for each
// part; the merged report is checked against the job analyzed whole (a merge that differs, or
// that fails, is an error: its time would measure something else).
#include "distributed/share_plan.h"
#include "distributed/split_analysis.h"
#include "load/trace_set.h"
#include "match/analysis.h"
#include "report/report.h"
#include "split_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace collcheck::analyzer;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Spread {
  double best = 0, median = 0;
};

// The report in JSON: what a merge must reproduce byte for byte.
std::string jsonReport(const TraceSet &traces, const AnalysisResult &result) {
  std::ostringstream out;
  writeJson(out, ReportInput{traces, result, {}});
  return out.str();
}

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2]};
}

std::vector<int> parseCounts(const char *text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    out.push_back(std::atoi(item.c_str()));
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [K,K,...=2,8,32] [ROUNDS=5]\n", argv[0]);
    return 2;
  }
  const std::vector<int> counts = parseCounts(argc > 2 ? argv[2] : "2,8,32");
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  if (counts.empty() || rounds < 1 ||
      std::any_of(counts.begin(), counts.end(), [](int k) { return k < 1; })) {
    std::fprintf(stderr, "merge_cost: every K and ROUNDS must be positive\n");
    return 2;
  }
  TraceSet traces;
  const std::optional<uint64_t> comm = bench::openSplitJob("merge_cost", argv[1], traces);
  if (!comm)
    return 1;
  const AnalysisOptions options = bench::splitProcessOptions(traces);
  const AnalysisResult whole = analyze(traces, options);
  const std::string expected = jsonReport(traces, whole);
  std::printf("%zu files, %llu positions\n", traces.files.size(),
              static_cast<unsigned long long>(whole.positions));
  for (int k : counts) {
    std::vector<RangeResult> shares;
    for (int i = 0; i < k; ++i)
      shares.push_back(
          analyzeRange(traces, options,
                       distributed::planShare(traces, *comm, i, k, distributed::Balance::Bytes,
                                              options.copyChunks)));
    std::vector<double> encodeSeconds, decodeSeconds, mergeSeconds;
    uint64_t bytes = 0;
    for (int round = 0; round < rounds; ++round) {
      auto start = Clock::now();
      std::vector<std::shared_ptr<const std::string>> encoded;
      for (const RangeResult &share : shares)
        encoded.push_back(std::make_shared<const std::string>(distributed::encodeShare(share)));
      encodeSeconds.push_back(since(start));
      bytes = 0;
      for (const auto &e : encoded)
        bytes += e->size();
      start = Clock::now();
      std::vector<RangeResult> decoded(encoded.size());
      for (size_t i = 0; i < encoded.size(); ++i)
        if (!distributed::decodeShare(*encoded[i], decoded[i], encoded[i])) {
          std::fprintf(stderr, "merge_cost: share %zu of %d does not decode\n", i, k);
          return 1;
        }
      decodeSeconds.push_back(since(start));
      start = Clock::now();
      AnalysisResult merged;
      std::string why;
      if (!distributed::mergeShares(traces, options, decoded, merged, why)) {
        std::fprintf(stderr, "merge_cost: the %d shares do not merge: %s\n", k, why.c_str());
        return 1;
      }
      mergeSeconds.push_back(since(start));
      if (jsonReport(traces, merged) != expected) {
        std::fprintf(stderr, "merge_cost: the %d shares merge to another report\n", k);
        return 1;
      }
    }
    const Spread enc = spread(encodeSeconds), dec = spread(decodeSeconds),
                 mer = spread(mergeSeconds);
    std::printf("K %d: %.2f MB encoded (%.3f MB per share); encode %.2f ms (median %.2f), decode "
                "%.2f ms (median %.2f: %.2f GB/s), merge %.2f ms (median %.2f)\n",
                k, bytes / 1e6, bytes / 1e6 / k, enc.best * 1e3, enc.median * 1e3, dec.best * 1e3,
                dec.median * 1e3, bytes / std::max(dec.median, 1e-9) / 1e9, mer.best * 1e3,
                mer.median * 1e3);
  }
  return 0;
}
