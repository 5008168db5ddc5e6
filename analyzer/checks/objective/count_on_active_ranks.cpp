// count-on-active-ranks: a count reduction issued only by the ranks that still have input
// (rules/pages/count-on-active-ranks.md).
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/objective_rule.h"

namespace collcheck::analyzer::objective {
namespace {

class CountOnActiveRanks final : public TraceRule {
public:
  std::string_view id() const override { return "count-on-active-ranks"; }
  void onCountReduction(const CountCheck &c, RuleContext &ctx) override {
    const Reduction &r = *c.reduction;
    if (r.presence.empty())
      return;
    std::vector<int32_t> issuedBy, absent;
    std::string issuedCounts, why;
    for (size_t rank = 0; rank < r.presence.size(); ++rank) {
      int32_t world = c.comm->nameOf(static_cast<int32_t>(rank));
      Presence p = r.presence[rank];
      if (issued(p)) {
        issuedBy.push_back(world);
        if (rank < r.values.size() && r.values[rank].hasInput(0))
          issuedCounts += (issuedCounts.empty() ? "" : ", ") + formatValue(r.values[rank].input[0]);
        continue;
      }
      if (p == Presence::NoTrace)
        return; // undecidable: the trace of that rank is missing here
      const Declarations *d = rank < c.declared.size() ? c.declared[rank] : nullptr;
      // A rank that declared items in this window is not out of input: missing-participant.
      if (d && d->countRecords > 0 && d->validCount > 0)
        return;
      absent.push_back(world);
      if (why.empty()) {
        if (d && d->began && d->countRecords == 0)
          why = "began the window and declared no valid item: its input ran out";
        else if (d && d->countRecords > 0)
          why = "declared 0 valid items";
        else
          why = "no valid count in the window";
        why += std::string(", ") + std::string(presenceName(p));
      }
    }
    if (absent.empty() || issuedBy.empty())
      return;
    Finding f = findingAt(ctx, id(), *c.comm, r, *c.window);
    f.severity = Severity::Error;
    f.message = "the count all-reduce of window " + std::to_string(c.window->window) +
                " was issued only by " + describeRanks(issuedBy) + ", which still had input; " +
                describeRanks(absent) + " did not join it";
    f.groups.push_back({"issued", issuedBy, issuedCounts.empty() ? "" : "counts " + issuedCounts});
    f.groups.push_back({"did not issue", absent, why});
    f.notes.push_back("the ranks that issued it wait for the others: the job hangs, or the count "
                      "is matched with an unrelated later call");
    f.notes.push_back("fix: every rank joins the count reduction of every window, an exhausted "
                      "rank with a count of 0, or all ranks stop together on a reduced "
                      "'has input' flag");
    ctx.findings.add(std::move(f), formatRanks(absent));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeCountOnActiveRanksRule() {
  return std::make_unique<CountOnActiveRanks>();
}

} // namespace collcheck::analyzer::objective
