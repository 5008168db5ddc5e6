// collective-reorder: some ranks issued the same block of collectives in another order. Reported
// once per block with both orders, instead of one mismatch per position.
#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {
namespace {

std::string order(const std::vector<format::Record> &calls) {
  std::string out;
  for (const format::Record &r : calls)
    out += (out.empty() ? "" : ", ") + describeCall(r);
  return "[" + out + "]";
}

class CollectiveReorder final : public TraceRule {
public:
  std::string_view id() const override { return "collective-reorder"; }
  void onReorder(const ReorderEvent &e, RuleContext &ctx) override {
    Finding f = ctx.make(id(), e.comm, e.expected.front());
    f.lastSeq = e.expected.back().seq();
    auto ranks = ctx.worldRanks(e.comm, e.ranks);
    auto reference = ctx.worldRanks(e.comm, e.referenceRanks);
    std::string n = std::to_string(e.actual.size());
    if (e.tied()) {
      // As many ranks on each side: neither order is the one the others got wrong.
      f.message = "the ranks disagree on the order of " + n + " collectives on " + e.comm.label +
                  ": " + order(e.expected) + " on " + describeRanks(reference) + ", " +
                  order(e.actual) + " on " + describeRanks(ranks);
      f.groups.push_back({"disagree", reference, order(e.expected)});
      f.groups.push_back({"disagree", ranks, order(e.actual)});
    } else {
      f.message = describeRanks(ranks) + " issued " + n + " collectives on " + e.comm.label +
                  " in another order than " + describeRanks(reference) + ": " + order(e.actual) +
                  " instead of " + order(e.expected);
      f.groups.push_back({"order", reference, order(e.expected)});
      f.groups.push_back({"other order", ranks, order(e.actual)});
    }
    f.notes.push_back("collectives are matched by position: the first call of one rank is paired "
                      "with the first call of the others, whatever its kind");
    ctx.findings.add(std::move(f),
                     order(e.expected) + "|" + order(e.actual) + "|" + formatRanks(e.ranks));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeCollectiveReorderRule() {
  return std::make_unique<CollectiveReorder>();
}

} // namespace collcheck::analyzer
