// unverified-reduction: a gradient reduction whose weighting the traces cannot decide, and why
// (rules/pages/unverified-reduction.md).
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

class UnverifiedReduction final : public TraceRule {
public:
  std::string_view id() const override { return "unverified-reduction"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    if (c.outcome != Outcome::Unverified)
      return;
    Finding f = findingAt(ctx, id(), *c.comm, *c.reduction, *c.window);
    f.severity = Severity::Note;
    f.message = describeGradient(c) + " could not be verified: " + c.unverifiedReason;
    f.notes.push_back("docs/annotations.md: declare each window's valid count, normalization and "
                      "reducer scale, or all-reduce the counts before the gradient");
    ctx.findings.add(std::move(f), c.unverifiedReason);
  }
};

} // namespace

std::unique_ptr<TraceRule> makeUnverifiedReductionRule() {
  return std::make_unique<UnverifiedReduction>();
}

} // namespace collcheck::analyzer::objective
