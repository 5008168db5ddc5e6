// negative-count: a collective called with a negative element count. MPI rejects it
// (MPI_ERR_COUNT; by default the job aborts in the call); it is reported as such, and the count
// rule leaves the position alone.
#include "analyzer/checks/participation/invalid_arguments.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {
namespace {

class NegativeCount final : public TraceRule {
public:
  std::string_view id() const override { return "negative-count"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    const format::Record *example = nullptr;
    auto ranks = ranksWith(e, hasNegativeCount, example);
    if (ranks.empty())
      return;
    Finding f = ctx.make(id(), e.comm, *example);
    auto names = ctx.worldRanks(e.comm, ranks);
    std::string count = std::to_string(static_cast<int64_t>(example->count));
    f.message = std::string(format::kindName(kindOf(*example))) + " on " + e.comm.label +
                " called with a negative count (" + count + ") on " + describeRanks(names);
    f.groups.push_back({"negative count", names, describeCall(*example)});
    f.notes.push_back("MPI rejects a negative count (MPI_ERR_COUNT): by default the job aborts "
                      "in this call; a count computed in a narrower or signed type that "
                      "overflowed is the usual cause");
    ctx.findings.add(std::move(f), count + "@" + formatRanks(ranks));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeNegativeCountRule() { return std::make_unique<NegativeCount>(); }

} // namespace collcheck::analyzer
