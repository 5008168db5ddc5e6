// The objective rules: each judges the weighing of the job's reductions (weighing.h) through the
// hooks every rule has (onGradientReduction, onCountReduction) and writes findings like the other
// rules. One rule, one file; the shared algebra lives in weighing.cpp and its explanation in the
// rule pages.
#pragma once

#include "analyzer/checks/objective/weighing.h"

#include <memory>
#include <string_view>
#include <vector>

namespace collcheck::analyzer::objective {

std::unique_ptr<TraceRule> makeUncompensatedMeanRule();
std::unique_ptr<TraceRule> makeDoubleNormalizationRule();
std::unique_ptr<TraceRule> makePartialWindowRule();
std::unique_ptr<TraceRule> makeZeroCountSkipRule();
std::unique_ptr<TraceRule> makeZeroCountDivisionRule();
std::unique_ptr<TraceRule> makeCountOnActiveRanksRule();
std::unique_ptr<TraceRule> makeUnverifiedReductionRule();

// Shared wording of the findings.
// "the gradient all-reduce" / "the 12 gradient reduce-scatters" of a check.
std::string describeGradient(const GradientCheck &check);
// "1/2 (local mean)", "1/8 (divided by the global count)", "0.25 (declared multiplier)".
std::string describeNormalization(const RankTerm &term);
// "N = 8 valid items on P = 2 ranks (declared counts)".
std::string describeCounts(const GradientCheck &check);
// "1/4 (rank 0) and 1/12 (rank 1)", or the range over many ranks, of the ranks with items.
std::string describeWeights(const GradientCheck &check, bool assumeLocalMean);
// A finding of `ruleId` at the reduction's position; inferred windows are named so in a note.
Finding findingAt(RuleContext &ctx, std::string_view ruleId, const Communicator &comm,
                  const Reduction &at, const WindowReductions &window);

} // namespace collcheck::analyzer::objective
