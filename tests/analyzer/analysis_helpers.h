// Runs the analyzer library on a folder and picks findings by rule.
#pragma once

#include "load/trace_set.h"
#include "match/analysis.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace collcheck::testing {

// The participation rules these tests are about; the objective rules (analyzer/objective) have
// their own tests and may add notes about windows they cannot verify.
inline bool isParticipationRule(std::string_view id) {
  for (std::string_view rule :
       {"missing-participant", "kind-mismatch", "count-mismatch", "datatype-mismatch",
        "reduce-op-mismatch", "premulsum-scalar-mismatch", "root-mismatch", "collective-reorder",
        "send-recv-mismatch", "hang", "incomplete-trace"})
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

inline Analyzed analyzeDir(const std::string &dir, analyzer::AnalysisOptions options = {}) {
  Analyzed a{analyzer::TraceSet::open({dir}, 2), {}, {}};
  a.result = analyzer::analyze(a.traces, options);
  for (const auto &f : a.result.findings)
    if (isParticipationRule(f.ruleId))
      a.findings.push_back(f);
  return a;
}

} // namespace collcheck::testing
