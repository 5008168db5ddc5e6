// `collcheck analyze --reference REF DIR`: compares, window by window, the reduced gradient values
// of a distributed run (DIR) with those of a single-process run over the same data (REF), both
// traced with COLLCHECK_CAPTURE_RESULTS=K, and reports the first window that differs beyond a
// relative tolerance (rule reference-mismatch). The compared value of a gradient reduction is its
// captured output times the reducer scale its rank declared, so a SUM-then-divide reducer compares
// as the mean it becomes. Count reductions are left out on both sides.
#pragma once

#include "analyzer/checks/rule.h"
#include "analyzer/load/trace_set.h"

#include <memory>
#include <string>

namespace collcheck::analyzer::objective {

inline constexpr double kDefaultReferenceTolerance = 1e-6;

// The reference run the rule compares with, opened by the caller for the whole analysis.
struct ReferenceRun {
  const TraceSet *traces = nullptr;
  std::string name; // as the user gave it, for the messages
  double tolerance = kDefaultReferenceTolerance;
};

// The rule reference-mismatch: at the job's end, the first window that differs, as a finding; when
// nothing could be compared (no captured results in one of the runs), the job is uncheckable
// (RuleContext::uncheckable), never "no findings".
std::unique_ptr<TraceRule> makeReferenceMismatchRule(const ReferenceRun &reference);

} // namespace collcheck::analyzer::objective
