// zero-count-division: a loss divided by a count of zero, a rank's own (a local mean over no
// item) or the global one (a window without any item) (rules/pages/zero-count-division.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

#include <cmath>

namespace collcheck::analyzer::objective {
namespace {

class ZeroCountDivision final : public TraceRule {
public:
  std::string_view id() const override { return "zero-count-division"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    if (c.countSource == CountSource::None)
      return;
    std::vector<int32_t> dividing;
    bool localMeans = false;
    for (const RankTerm &t : c.terms) {
      if (!t.issued || !t.normalizationKnown || t.count != 0)
        continue;
      bool byOwnCount = t.normalization == format::LossNormalization::LocalMean;
      bool byGlobalCount = t.normalization == format::LossNormalization::GlobalMean &&
                           !std::isfinite(t.normalizationFactor);
      if (byOwnCount || byGlobalCount)
        dividing.push_back(t.worldRank);
      localMeans = localMeans || byOwnCount;
    }
    // Finite reduced values prove the division was guarded (an explicit zero instead of 0/0).
    if (dividing.empty() || (c.resultsCaptured && !c.nonFiniteResult))
      return;
    Finding f = findingAt(ctx, id(), *c.comm, *c.reduction, *c.window);
    f.severity = c.nonFiniteResult ? Severity::Error : Severity::Warning;
    const std::string window = "window " + std::to_string(c.window->window);
    std::string evidence = c.nonFiniteResult
                               ? ": the reduced values are NaN on every rank"
                               : " (0/0 unless guarded; the reduced values were not captured)";
    if (c.globalCount == 0)
      f.message = window + " has no valid item on any rank (N = 0) and " + describeGradient(c) +
                  " still ran on losses divided by " +
                  (localMeans ? "their own count of 0" : "N = 0") + evidence;
    else
      f.message = describeRanks(dividing) + " had no valid item in " + window +
                  " and divided its loss by its count of 0 (a local mean over no item) before " +
                  describeGradient(c) + evidence;
    f.groups.push_back({"divides by zero", dividing, ""});
    f.notes.push_back(describeCounts(c));
    f.notes.push_back(c.globalCount == 0
                          ? "fix: when the reduced count N is 0, every rank takes the same skip "
                            "before dividing"
                          : "fix: a rank without items contributes an explicit zero (weight 0), "
                            "not 0/0, and still joins the reduction");
    ctx.findings.add(std::move(f), formatRanks(dividing) + (c.globalCount == 0 ? "|empty" : ""));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeZeroCountDivisionRule() {
  return std::make_unique<ZeroCountDivision>();
}

} // namespace collcheck::analyzer::objective
