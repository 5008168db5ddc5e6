// The objective rules: each judges the weighing of the job's reductions (weighing.h) and writes
// findings through the analyzer's RuleContext, like the trace rules. One rule, one file pair; the
// shared algebra lives in weighing.cpp and its explanation in the rule pages.
#pragma once

#include "analyzer/checks/objective/weighing.h"

#include <memory>
#include <string_view>
#include <vector>

namespace collcheck::analyzer::objective {

class ObjectiveRule {
public:
  virtual ~ObjectiveRule() = default;
  virtual std::string_view id() const = 0;
  virtual void onGradientReduction(const GradientCheck &, RuleContext &) {}
  virtual void onCountReduction(const CountCheck &, RuleContext &) {}
};

std::unique_ptr<ObjectiveRule> makeUncompensatedMeanRule();
std::unique_ptr<ObjectiveRule> makeDoubleNormalizationRule();
std::unique_ptr<ObjectiveRule> makePartialWindowRule();
std::unique_ptr<ObjectiveRule> makeZeroCountSkipRule();
std::unique_ptr<ObjectiveRule> makeZeroCountDivisionRule();
std::unique_ptr<ObjectiveRule> makeCountOnActiveRanksRule();
std::unique_ptr<ObjectiveRule> makeUnverifiedReductionRule();

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

namespace collcheck::analyzer {
// The trace rule that gathers the job's windows and runs the objective rules at its end.
std::unique_ptr<TraceRule> makeObjectiveChecks();
} // namespace collcheck::analyzer
