// invalid-root: a rooted collective (broadcast, reduce, gather, scatter and their v-forms) whose
// root is no rank of its intracommunicator (negative, or not below the communicator's size). MPI
// rejects it (MPI_ERR_ROOT); it is reported as such, and the root rule leaves the position alone.
#include "analyzer/checks/participation/invalid_arguments.h"
#include "analyzer/model/signature.h"

namespace collcheck::analyzer {

bool hasInvalidRoot(const format::Record &r, const Communicator &comm) {
  // On an intercommunicator MPI_ROOT and MPI_PROC_NULL are valid, and a rank names the other
  // group, whose size the record does not carry.
  if (!isRooted(kindOf(r)) || onIntercomm(r) || comm.size <= 0)
    return false;
  return r.peer < 0 || r.peer >= comm.size;
}

namespace {

class InvalidRoot final : public TraceRule {
public:
  std::string_view id() const override { return "invalid-root"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    const format::Record *example = nullptr;
    auto ranks = ranksWith(
        e, [&](const format::Record &r) { return hasInvalidRoot(r, e.comm); }, example);
    if (ranks.empty())
      return;
    Finding f = ctx.make(id(), e.comm, *example);
    auto names = ctx.worldRanks(e.comm, ranks);
    std::string root = std::to_string(example->peer);
    f.message = std::string(format::kindName(kindOf(*example))) + " on " + e.comm.label +
                " names root " + root + ", not a rank of the communicator (0 to " +
                std::to_string(e.comm.size - 1) + "), on " + describeRanks(names);
    f.groups.push_back({"invalid root", names, describeCall(*example)});
    f.notes.push_back("MPI rejects a root outside the communicator (MPI_ERR_ROOT): by default the "
                      "job aborts in this call; on an intracommunicator MPI_ROOT and "
                      "MPI_PROC_NULL are not valid roots either");
    ctx.findings.add(std::move(f), root + "@" + formatRanks(ranks));
  }
};

} // namespace

std::unique_ptr<TraceRule> makeInvalidRootRule() { return std::make_unique<InvalidRoot>(); }

} // namespace collcheck::analyzer
