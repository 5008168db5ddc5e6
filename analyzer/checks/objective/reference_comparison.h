// `collcheck analyze --reference REF DIR`: compares, window by window, the reduced gradient values
// of a distributed run (DIR) with those of a single-process run over the same data (REF), both
// traced with COLLCHECK_CAPTURE_RESULTS=K, and reports the first window that differs beyond a
// relative tolerance (rule reference-mismatch). The compared value of a gradient reduction is its
// captured output times the reducer scale its rank declared, so a SUM-then-divide reducer compares
// as the mean it becomes. Count reductions are left out on both sides.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/model/analysis_result.h"
#include "analyzer/model/finding.h"

#include <string>
#include <vector>

namespace collcheck::analyzer::objective {

inline constexpr double kDefaultReferenceTolerance = 1e-6;

// Findings of the comparison (none when every window agrees). False with `error` set when nothing
// could be compared (no captured results in one of the runs).
bool compareWithReference(const TraceSet &run, const AnalysisResult &runResult,
                          const TraceSet &reference, const std::string &referenceName,
                          double tolerance, std::vector<Finding> &findings, std::string &error);

} // namespace collcheck::analyzer::objective
