// invalid-datatype: a collective called with a handle MPI rejects as a datatype
// (MPI_DATATYPE_NULL, a type already freed). MPI rejects it (MPI_ERR_TYPE; by default the job
// aborts in the call); it is reported as such, and the datatype and count rules leave the position
// alone.
#include "analyzer/checks/participation/invalid_arguments.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {
namespace {

class InvalidDatatype final : public TraceRule {
public:
  std::string_view id() const override { return "invalid-datatype"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    const format::Record *example = nullptr;
    auto ranks = ranksWith(e, hasInvalidDatatype, example);
    if (ranks.empty())
      return;
    Finding f = ctx.make(id(), e.comm, *example);
    auto names = ctx.worldRanks(e.comm, ranks);
    f.message = std::string(format::kindName(kindOf(*example))) + " on " + e.comm.label +
                " called with a handle that is no datatype on " + describeRanks(names);
    f.groups.push_back({"invalid datatype", names, describeCall(*example)});
    f.notes.push_back("MPI rejects MPI_DATATYPE_NULL and a datatype already freed (MPI_ERR_TYPE): "
                      "by default the job aborts in this call; a type freed before its last use, "
                      "or one created on some paths only, is the usual cause");
    ctx.findings.add(std::move(f), formatRanks(ranks));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeInvalidDatatypeRule() { return std::make_unique<InvalidDatatype>(); }

} // namespace collcheck::analyzer
