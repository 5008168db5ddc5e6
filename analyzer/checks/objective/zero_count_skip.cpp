// zero-count-skip: a rank with no valid item skipped a reduction of its window, or a window
// without any valid item was skipped by some ranks only (rules/pages/zero-count-skip.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

bool didNotIssue(const RankTerm &t) {
  return t.presence == Presence::Skipped || t.presence == Presence::Exited ||
         t.presence == Presence::NotReached;
}

class ZeroCountSkip final : public TraceRule {
public:
  std::string_view id() const override { return "zero-count-skip"; }
  void onGradientReduction(const GradientCheck &c, RuleContext &ctx) override {
    if (c.countSource == CountSource::None)
      return;
    std::vector<int32_t> issuedBy, emptyAndAbsent, absentWithItems;
    std::string how;
    for (const RankTerm &t : c.terms) {
      if (t.issued)
        issuedBy.push_back(t.worldRank);
      else if (didNotIssue(t) && t.count == 0) {
        emptyAndAbsent.push_back(t.worldRank);
        how = std::string(presenceName(t.presence));
      } else if (didNotIssue(t))
        absentWithItems.push_back(t.worldRank);
    }
    if (emptyAndAbsent.empty() || issuedBy.empty())
      return;
    Finding f = findingAt(ctx, id(), *c.comm, *c.reduction, *c.window);
    f.severity = Severity::Error;
    const std::string window = "window " + std::to_string(c.window->window);
    if (c.globalCount == 0 && absentWithItems.empty()) {
      f.message = window + " has no valid item on any rank (N = 0) and only " +
                  describeRanks(issuedBy) + " issued " + describeGradient(c) +
                  ": an empty window was not skipped the same way by every rank";
      f.notes.push_back("fix: decide on the reduced count N, which every rank sees alike: skip the "
                        "update on every rank when N = 0");
    } else {
      f.message = describeRanks(emptyAndAbsent) + " had no valid item in " + window +
                  " and did not issue " + describeGradient(c) + " that " + describeRanks(issuedBy) +
                  " issued";
      f.notes.push_back("fix: a rank without items still joins every collective of its window, "
                        "with a zero contribution; only a window empty on every rank (N = 0) "
                        "may be skipped, and then by every rank");
    }
    f.groups.push_back({"issued", issuedBy, ""});
    f.groups.push_back({"no valid item, did not issue", emptyAndAbsent, how});
    f.notes.push_back(describeCounts(c));
    ctx.findings.add(std::move(f), formatRanks(emptyAndAbsent));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeZeroCountSkipRule() { return std::make_unique<ZeroCountSkip>(); }

} // namespace collcheck::analyzer::objective
