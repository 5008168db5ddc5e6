// partial-window: the count reduction of an accumulation window carries only the last
// micro-batch's counts (rules/pages/partial-window.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

class PartialWindow final : public TraceRule {
public:
  std::string_view id() const override { return "partial-window"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    const Reduction *count = c.partial.countReduction;
    if (!count)
      return;
    double windowCount = 0, reduced = 0;
    uint32_t microBatches = 0;
    Finding f = findingAt(ctx, id(), *c.comm, *count, *c.window);
    f.severity = Severity::Error;
    for (const RankTerm &t : c.terms) {
      if (!t.declared)
        continue;
      const Declarations &d = *t.declared;
      windowCount += d.validCount;
      reduced += d.lastCount;
      microBatches = std::max(microBatches, d.countRecords);
      f.groups.push_back({"count",
                          {t.worldRank},
                          "reduced " + formatValue(d.lastCount) + ", the window has " +
                              formatValue(d.validCount) + " over " +
                              std::to_string(d.countRecords) + " micro-batches"});
    }
    f.message = "the count all-reduce of window " + std::to_string(c.window->window) +
                " carries only the last micro-batch's valid counts: N = " + formatValue(reduced) +
                " instead of the window's " + formatValue(windowCount) + " (" +
                std::to_string(microBatches) + " micro-batches)";
    bool weighed = true;
    for (const RankTerm &t : c.terms)
      weighed = weighed && (!t.issued || !t.hasItems() || (t.normalizationKnown && t.reducerKnown));
    if (weighed)
      f.notes.push_back(describeGradient(c) + " at seq " + std::to_string(c.reduction->firstSeq()) +
                        " then weighs items " + describeWeights(c, false) +
                        " instead of 1/N = " + formatWeight(1.0 / windowCount));
    f.notes.push_back("fix: add up the valid count over every micro-batch of the window and "
                      "all-reduce it once, before the gradient reduction");
    ctx.findings.add(std::move(f), "partial");
  }
};

} // namespace

std::unique_ptr<TraceRule> makePartialWindowRule() { return std::make_unique<PartialWindow>(); }

} // namespace collcheck::analyzer::objective
