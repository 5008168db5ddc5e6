// double-normalization: divided by the global count N, then averaged over P ranks again
// (rules/pages/double-normalization.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

class DoubleNormalization final : public TraceRule {
public:
  std::string_view id() const override { return "double-normalization"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    if (c.partial.countReduction || c.outcome != Outcome::DoubleNormalization)
      return;
    const double intended = 1.0 / c.globalCount;
    Finding f = findingAt(ctx, id(), *c.comm, *c.reduction, *c.window);
    f.severity = Severity::Error;
    f.message = describeGradient(c) + " averages losses already divided by the global count N = " +
                formatValue(c.globalCount) + " over P = " + std::to_string(c.ranks) +
                " ranks again: every item weighs " + formatWeight(intended / c.ranks) +
                " instead of 1/N = " + formatWeight(intended);
    std::vector<int32_t> ranks;
    const RankTerm *first = nullptr;
    for (const RankTerm &t : c.terms)
      if (t.issued && t.hasItems()) {
        ranks.push_back(t.worldRank);
        first = first ? first : &t;
      }
    f.groups.push_back({"weight", ranks,
                        describeNormalization(*first) + " x " + formatWeight(first->reducerFactor) +
                            " (reducer) = " + formatWeight(first->weight()) + " per item"});
    f.notes.push_back(describeCounts(c) + "; reducer: " + c.describeReducer());
    f.notes.push_back("fix: reduce with SUM, or multiply each contribution by P = " +
                      std::to_string(c.ranks) + " before the averaging reducer");
    ctx.findings.add(std::move(f),
                     std::to_string(c.reduction->reference.op) + '|' + std::to_string(c.ranks));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeDoubleNormalizationRule() {
  return std::make_unique<DoubleNormalization>();
}

} // namespace collcheck::analyzer::objective
