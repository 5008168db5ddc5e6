// Runs the analyzer library on a folder and picks findings by rule.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"
#include "analyzer/parallel/merge.h"
#include "analyzer/report/report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace collcheck::testing {

// The participation rules these tests are about; the objective rules (analyzer/checks/objective)
// have their own tests and may add notes about windows they cannot verify.
inline bool isParticipationRule(std::string_view id) {
  for (std::string_view rule :
       {"missing-participant", "kind-mismatch", "count-mismatch", "datatype-mismatch",
        "reduce-op-mismatch", "premulsum-scalar-mismatch", "root-mismatch", "collective-reorder",
        "send-recv-mismatch", "hang", "incomplete-trace", "invalid-communicator", "negative-count",
        "invalid-root", "invalid-datatype"})
    if (rule == id)
      return true;
  return false;
}

struct Analyzed {
  analyzer::TraceSet traces;
  analyzer::AnalysisResult result;
  std::vector<analyzer::Finding> findings; // of the participation rules
  std::vector<analyzer::Finding> of(std::string_view rule) const {
    std::vector<analyzer::Finding> out;
    for (const auto &f : result.findings)
      if (f.ruleId == rule)
        out.push_back(f);
    return out;
  }
  std::string describe() const {
    std::string out;
    for (const auto &f : result.findings)
      out += "  [" + f.ruleId + "] " + f.message + " (x" + std::to_string(f.repeats) + ")\n";
    return out.empty() ? "  (no findings)\n" : out;
  }
};

inline std::string jsonReport(const analyzer::TraceSet &traces,
                              const analyzer::AnalysisResult &result) {
  std::ostringstream out;
  analyzer::writeJson(out, {traces, result, {"traces"}});
  return out.str();
}

// The job split in `count` shares (as `mpirun -np count collcheck analyze` splits it) must give
// the single process's report byte for byte, or decline the merge (then rank 0 analyzes alone).
// Returns whether the shares were merged.
inline bool expectSameWhenSplit(const analyzer::TraceSet &traces,
                                const analyzer::AnalysisOptions &options,
                                const analyzer::AnalysisResult &single, int count) {
  analyzer::AnalysisResult split;
  std::string why;
  // Cut among the records: a test job's files are mostly their preallocated ends.
  if (!analyzer::parallel::analyzeInShares(traces, options, count, split, why,
                                           analyzer::parallel::Balance::Records))
    return false;
  EXPECT_EQ(jsonReport(traces, single), jsonReport(traces, split)) << "in " << count << " shares";
  return true;
}

// The same, with the rest of every share handed over again and again mid-way (as to processes
// that finished theirs early): small chunks, so that a share stops between rounds it has read.
inline bool expectSameWithHandovers(const analyzer::TraceSet &traces,
                                    const analyzer::AnalysisOptions &options,
                                    const analyzer::AnalysisResult &single, int count) {
  analyzer::AnalysisOptions small = options;
  small.readChunk = 16;
  analyzer::AnalysisResult split;
  std::string why;
  if (!analyzer::parallel::analyzeInShares(traces, small, count, split, why,
                                           analyzer::parallel::Balance::Records, 3))
    return false;
  EXPECT_EQ(jsonReport(traces, single), jsonReport(traces, split))
      << "in " << count << " shares, with handovers";
  return true;
}

// Every folder the matcher tests analyze is also analyzed in 2, 3 and 4 shares.
inline Analyzed analyzeDir(const std::string &dir, analyzer::AnalysisOptions options = {}) {
  Analyzed a{analyzer::TraceSet::open({dir}, 2), {}, {}};
  a.result = analyzer::analyze(a.traces, options);
  if (options.partitionCount == 1 && !a.traces.fatal && !a.traces.files.empty()) {
    for (int count : {2, 3, 4})
      expectSameWhenSplit(a.traces, options, a.result, count);
    expectSameWithHandovers(a.traces, options, a.result, 2);
  }
  for (const auto &f : a.result.findings)
    if (isParticipationRule(f.ruleId))
      a.findings.push_back(f);
  return a;
}

} // namespace collcheck::testing
