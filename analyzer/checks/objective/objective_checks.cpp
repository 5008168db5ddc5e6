// The objective stage (objective_checks.h) and the wording the objective rules share.
#include "analyzer/checks/objective/objective_checks.h"
#include "analyzer/checks/objective/objective_rule.h"

#include "analyzer/checks/objective/numbers.h"

#include <algorithm>
#include <vector>

namespace collcheck::analyzer {
namespace objective {

std::string describeGradient(const GradientCheck &check) {
  const Reduction &r = *check.reduction;
  std::string call;
  switch (static_cast<format::Kind>(r.reference.kind)) {
  case format::Kind::AllReduce:
    call = "all-reduce";
    break;
  case format::Kind::Reduce:
    call = "reduce";
    break;
  default:
    call = "reduce-scatter";
    break;
  }
  if (r.repeats > 1)
    return "the " + std::to_string(r.repeats) + " gradient " + call + "s";
  return "the gradient " + call;
}

std::string describeNormalization(const RankTerm &t) {
  std::string factor = formatWeight(t.normalizationFactor);
  switch (t.normalization) {
  case format::LossNormalization::LocalMean:
    return factor + " (local mean)";
  case format::LossNormalization::GlobalMean:
    return factor + " (divided by the global count)";
  case format::LossNormalization::Sum:
    return "1 (sum)";
  case format::LossNormalization::Multiplier:
    return factor + " (declared multiplier)";
  default:
    return "? (normalization not declared)";
  }
}

std::string describeCounts(const GradientCheck &c) {
  std::string source =
      c.countSource == CountSource::Annotations
          ? "declared counts"
          : "counts of the count all-reduce at seq " + std::to_string(c.countReduction->firstSeq());
  return "N = " + formatValue(c.globalCount) + " valid items on P = " + std::to_string(c.ranks) +
         " ranks (" + source + ")";
}

std::string describeWeights(const GradientCheck &c, bool assumeLocalMean) {
  // Distinct weights in rank order, each with the ranks that have it.
  std::vector<std::pair<double, std::vector<int32_t>>> weights;
  for (const RankTerm &t : c.terms) {
    if (!t.issued || !t.hasItems())
      continue;
    double w = assumeLocalMean ? t.reducerFactor / t.count : t.weight();
    auto it = std::find_if(weights.begin(), weights.end(),
                           [&](const auto &known) { return sameWeight(known.first, w); });
    if (it == weights.end())
      weights.push_back({w, {t.worldRank}});
    else
      it->second.push_back(t.worldRank);
  }
  auto one = [](const std::pair<double, std::vector<int32_t>> &w) {
    return formatWeight(w.first) + " (" + describeRanks(w.second) + ")";
  };
  if (weights.size() <= 4) {
    std::string out;
    for (size_t i = 0; i < weights.size(); ++i)
      out += (i == 0 ? "" : i + 1 == weights.size() ? " and " : ", ") + one(weights[i]);
    return out;
  }
  auto [low, high] = std::minmax_element(weights.begin(), weights.end(),
                                         [](auto &a, auto &b) { return a.first < b.first; });
  return std::to_string(weights.size()) + " different weights from " + one(*low) + " to " +
         one(*high);
}

Finding findingAt(RuleContext &ctx, std::string_view ruleId, const Communicator &comm,
                  const Reduction &at, const WindowReductions &window) {
  Finding f = ctx.make(ruleId, comm, at.reference);
  f.lastSeq = at.lastSeq;
  f.repeats = at.repeats;
  f.firstWindow = f.lastWindow = window.window;
  if (window.inferred)
    f.notes.push_back("no window annotations: windows are inferred, one per count reduction (" +
                      std::string("collcheck_annotate_window marks them)"));
  return f;
}

namespace {

// Whether some reduction of a live communicator could make the job judged (an integer count
// reduction) or be weighed as a mean reducer (a float avg or PreMulSum): a superset of what
// groupByWindow would sort into a window's integer counts or averaging gradients, found without
// sorting the reductions into windows.
bool mayBeWeighed(const Ledger &ledger, const JobView &job) {
  for (const Reduction &r : ledger.reductions()) {
    auto type = static_cast<format::DataType>(r.reference.dataType);
    bool count = hasCountShape(r.reference) && isIntegerType(type);
    bool mean =
        isWeightedReduction(r.reference) && isFloatType(type) && averagesOverRanks(r.reference);
    if (!count && !mean)
      continue;
    const Communicator *comm = job.communicator(r.commId);
    if (comm && comm->size > 0)
      return true;
  }
  return false;
}

} // namespace

void ObjectiveChecks::jobEnd(const std::vector<std::unique_ptr<TraceRule>> &rules,
                             RuleContext &ctx) {
  ledger_.finish();
  // A job of sums without annotations and without an integer count has nothing to judge or
  // note (below): said before its reductions are sorted into windows, which with many
  // communicators is millions of them (one per communicator and window).
  if (!ledger_.hasAnnotations() && !mayBeWeighed(ledger_, ctx.job))
    return;
  std::vector<WindowReductions> windows = groupByWindow(ledger_, ctx.job);
  // A job with neither annotations nor an integer count reduction carries nothing that says
  // its float sums are gradients of a mean objective: they are not judged (docs/annotations.md;
  // a float sum of whole numbers alone could be any metric).
  bool counted = false;
  for (const WindowReductions &w : windows)
    for (const Reduction *count : w.counts)
      counted = counted || isIntegerType(static_cast<format::DataType>(count->reference.dataType));
  const bool judged = ledger_.hasAnnotations() || counted;
  bool anyMeanReducer = false;
  for (const WindowReductions &w : windows)
    for (const Reduction *g : w.gradients)
      anyMeanReducer = anyMeanReducer || averagesOverRanks(g->reference);
  if (!judged && !anyMeanReducer)
    return; // nothing to judge and nothing to note: spare the weighing of every reduction
  // Mean reducers (avg, PreMulSum) average per-rank values: exactly where unequal counts go
  // wrong, so in a job that is not judged they are still weighed: over a float count reduction
  // of unequal counts they get the warning of uncompensated-mean, and where nothing decides, the
  // note that says why.
  // The note that a gradient reduction could not be verified is for training jobs: those that
  // say so (annotations) or reduce through a mean reducer, as data-parallel trainers do. An
  // integer count beside sums alone is also what a molecular-dynamics code issues every step
  // (an atom count, a few energies): its sums get no note about "the gradient all-reduce".
  // The errors and warnings a count makes provable are given either way.
  const bool training = ledger_.hasAnnotations() || anyMeanReducer;
  std::vector<TraceRule *> applying;
  for (const std::unique_ptr<TraceRule> &rule : rules) {
    std::string_view id = rule->id();
    if (judged ? training || id != "unverified-reduction"
               : id == "uncompensated-mean" || id == "unverified-reduction")
      applying.push_back(rule.get());
  }
  struct Dispatch final : WeighingVisitor {
    const std::vector<TraceRule *> &rules;
    RuleContext &ctx;
    bool judged;
    Dispatch(const std::vector<TraceRule *> &r, RuleContext &c, bool j)
        : rules(r), ctx(c), judged(j) {}
    void count(const CountCheck &c) override {
      for (TraceRule *rule : rules)
        rule->onCountReduction(c, ctx);
    }
    void gradient(const GradientCheck &g) override {
      if (!judged && !averagesOverRanks(g.reduction->reference))
        return; // a sum in a job that is not judged
      for (TraceRule *rule : rules)
        rule->onGradientReduction(g, ctx);
    }
  } dispatch(applying, ctx, judged);
  weigh(windows, ledger_, dispatch);
}

} // namespace objective
} // namespace collcheck::analyzer
