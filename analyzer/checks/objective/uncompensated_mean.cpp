// uncompensated-mean: some rank's effective per-item weight differs from 1/N
// (rules/pages/uncompensated-mean.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

constexpr size_t kRankGroupsShown = 16;

class UncompensatedMean final : public TraceRule {
public:
  std::string_view id() const override { return "uncompensated-mean"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    if (c.partial.countReduction) // the count is wrong, not the weighting: partial-window says so
      return;
    const bool proven = c.outcome == Outcome::UnequalWeights;
    if (!proven && c.outcome != Outcome::MeanOverUnequalCounts)
      return;
    const double intended = 1.0 / c.globalCount;
    Finding f = findingAt(ctx, id(), *c.comm, *c.reduction, *c.window);
    f.severity = proven ? Severity::Error : Severity::Warning;
    bool uniform = true, localMeans = !proven;
    const RankTerm *first = nullptr;
    for (const RankTerm &t : c.terms) {
      if (!t.issued || !t.hasItems())
        continue;
      first = first ? first : &t;
      uniform = uniform && sameWeight(t.weight(), first->weight());
      localMeans = localMeans || t.normalization == format::LossNormalization::LocalMean;
    }
    if (proven && uniform)
      f.message = describeGradient(c) + " weighs every item " + formatWeight(first->weight()) +
                  " instead of 1/N = " + formatWeight(intended) + ": the update is " +
                  formatValue(first->weight() * c.globalCount) + "x the global item mean";
    else if (proven)
      f.message = describeGradient(c) +
                  " weighs the items of different ranks differently: " + describeWeights(c, false) +
                  " per item instead of 1/N = " + formatWeight(intended);
    else
      f.message = describeGradient(c) + " is a mean across ranks over unequal valid counts and " +
                  "the loss normalization is not declared: if the losses are local means, items " +
                  "weigh " + describeWeights(c, true) +
                  " instead of 1/N = " + formatWeight(intended);

    // One line per distinct term, in rank order.
    std::vector<std::string> fixes;
    size_t shown = 0, hidden = 0;
    for (const RankTerm &t : c.terms) {
      if (!t.issued || !t.hasItems())
        continue;
      double weight = proven ? t.weight() : t.reducerFactor / t.count;
      double factor = intended / weight;
      if (fixes.size() < 8)
        fixes.push_back("rank " + std::to_string(t.worldRank) + " x" + formatValue(factor));
      std::string term = proven ? describeNormalization(t) : "1/n (if a local mean)";
      std::string detail = "n = " + formatValue(t.count) + ", " + term + " x " +
                           formatWeight(t.reducerFactor) + " (reducer) = " + formatWeight(weight) +
                           " per item, " + formatValue(weight / intended) + "x 1/N: scale by " +
                           formatValue(factor);
      if (!f.groups.empty() && f.groups.back().detail == detail) {
        f.groups.back().ranks.push_back(t.worldRank);
      } else if (shown < kRankGroupsShown) {
        f.groups.push_back({"weight", {t.worldRank}, detail});
        ++shown;
      } else {
        ++hidden;
      }
    }
    if (hidden)
      f.notes.push_back(std::to_string(hidden) + " more ranks are not listed");
    f.notes.push_back(describeCounts(c) + "; reducer: " + c.describeReducer());
    std::string factors;
    for (const std::string &fix : fixes)
      factors += (factors.empty() ? "" : ", ") + fix;
    if (localMeans)
      f.notes.push_back("fix: multiply each rank's local mean by P*n_r/N before the reducer (" +
                        factors +
                        "), or all-reduce local sums with SUM and divide once by the reduced N");
    else
      f.notes.push_back("fix: multiply each rank's contribution by (1/N)/w_r (" + factors +
                        ") so that every item weighs 1/N");
    if (!proven)
      f.notes.push_back("declare the normalization (collcheck_annotate_normalization) to have "
                        "this proven or cleared");
    std::string key = std::string(proven ? "proven" : "possible") + '|' +
                      std::to_string(c.reduction->reference.op) + '|' + std::to_string(c.ranks);
    for (const RankTerm &t : c.terms)
      key += '|' + std::to_string(static_cast<int>(t.normalization));
    ctx.findings.add(std::move(f), key);
  }
};

} // namespace

std::unique_ptr<TraceRule> makeUncompensatedMeanRule() {
  return std::make_unique<UncompensatedMean>();
}

} // namespace collcheck::analyzer::objective
